/**
 * An in-memory connection that its sender drops should close as TCP does after the sender's last
 * bytes: the reader (aedes) still reads what was sent, then sees the end. Used on both sides of
 * the broker (broker-worker.ts, the lean client's BrokerLink).
 */
import type { Duplex } from 'node:stream';

/**
 * How long a dropped connection waits for its reader: aedes reads on the next tick unless it has
 * paused the client (while it authenticates a CONNECT), and a dropped connection must not linger.
 */
export const DROP_GRACE_MS = 500;

/** True when `stream` holds bytes its reader has not taken yet and the reader is still reading. */
export function readerBehind(stream: Duplex): boolean {
  // aedes stops reading ('readable' listener gone) once it closes a client.
  return stream.readableLength > 0 && stream.listenerCount('readable') > 0;
}

/** Ends the readable side after what is buffered; `destroy` runs once the reader is done, or after DROP_GRACE_MS. */
export function endForReader(stream: Duplex, destroy: () => void): void {
  stream.push(null);
  const guard = setTimeout(destroy, DROP_GRACE_MS);
  stream.once('close', () => clearTimeout(guard));
}
