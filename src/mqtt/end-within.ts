/**
 * Ending an MQTT session in bounded time, whatever the broker does (a `stations` process
 * hung on SIGTERM when its broker went away or went silent during the stop). A polite end
 * (DISCONNECT, then the broker closes) waits on the broker: for the acknowledgements of what is
 * still in flight, and for the close. Past `STOP_LINGER_MS` the connection is dropped instead;
 * the broker then publishes the session's will, which is what a crash would have said.
 */

/**
 * How long a stopping MQTT client waits on its broker, at most, for each thing it waits for: a
 * station for the PUBACK of its final `offline` status and then for the close after DISCONNECT;
 * the control plane and the fleet agent for the close (docs/scale-out.md, "Stopping").
 */
export const STOP_LINGER_MS = 2_000;

/** Waits for `work` at most `lingerMs`; resolves true when it settled in time, false otherwise. Never rejects. */
export async function lingerAtMost(work: Promise<unknown>, lingerMs: number = STOP_LINGER_MS): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const ranOut = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), lingerMs);
  });
  const settled = await Promise.race([work.then(() => true, () => true), ranOut]);
  clearTimeout(timer);
  return settled;
}

/** What `endWithin` needs of an mqtt.js client. */
export interface EndableClient {
  readonly connected: boolean;
  endAsync(force?: boolean): Promise<void>;
  /** The client's transport: destroyed when the polite end runs out of time. */
  readonly stream?: { destroy(): void } | undefined;
}

/**
 * Ends `client`: politely when it is connected, at most `lingerMs`, then by dropping its
 * transport. Resolves either way; never rejects.
 */
export async function endWithin(client: EndableClient, lingerMs: number = STOP_LINGER_MS): Promise<void> {
  if (!client.connected) {
    await client.endAsync(true).catch(() => undefined);
    return;
  }
  const ended = await lingerAtMost(client.endAsync(false), lingerMs);
  // mqtt.js ignores a second end() while the first is under way: its transport is dropped here.
  if (!ended) client.stream?.destroy();
}
