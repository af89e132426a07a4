/**
 * Two connected in-memory duplex streams: what one side writes, the other reads. In-process
 * stations talk to the embedded broker through these instead of TCP sockets, so a fleet of
 * 100,000 stations does not need 100,000 file descriptors (the process limit here is 20,000).
 * Node 22.6 ships `stream.duplexPair`; Node 20, our target, does not, hence this small version.
 */
import { Duplex } from 'node:stream';

export function duplexPair(): [Duplex, Duplex] {
  let right: Duplex;
  // Backpressure: a write completes once the peer has room again, so a slow reader slows the writer
  // instead of buffering without bound.
  const pending = new WeakMap<Duplex, (error?: Error | null) => void>();
  const make = (peer: () => Duplex): Duplex =>
    new Duplex({
      write(chunk: Buffer, _encoding, callback) {
        const other = peer();
        if (other.destroyed) {
          callback(new Error('peer closed'));
          return;
        }
        if (other.push(chunk)) callback();
        else pending.set(other, callback);
      },
      read() {
        const callback = pending.get(this);
        if (callback) {
          pending.delete(this);
          callback();
        }
      },
      final(callback) {
        peer().push(null);
        callback();
      },
      destroy(error, callback) {
        const other = peer();
        const waiting = pending.get(this);
        pending.delete(this);
        waiting?.(error ?? new Error('stream destroyed'));
        if (!other.destroyed) other.destroy();
        callback(error);
      },
    });
  const left = make(() => right);
  right = make(() => left);
  return [left, right];
}
