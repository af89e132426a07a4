/**
 * Latency as the server sees it: from the moment Node's HTTP server has a request to the moment
 * the response is finished, read through Node's `diagnostics_channel` (no change to the product).
 * Set against the driver's latency, it shows how much of the tail is spent inside the server.
 */
import diagnostics from 'node:diagnostics_channel';
import type { IncomingMessage } from 'node:http';

export interface ServerLatency {
  /** Milliseconds of each request seen since the last `take`, and clears them. */
  take(): number[];
  stop(): void;
}

export function recordServerLatency(): ServerLatency {
  const started = new WeakMap<IncomingMessage, number>();
  let durations: number[] = [];
  const onStart = (message: unknown): void => {
    started.set((message as { request: IncomingMessage }).request, performance.now());
  };
  const onFinish = (message: unknown): void => {
    const at = started.get((message as { request: IncomingMessage }).request);
    if (at !== undefined) durations.push(performance.now() - at);
  };
  diagnostics.subscribe('http.server.request.start', onStart);
  diagnostics.subscribe('http.server.response.finish', onFinish);
  return {
    take: () => {
      const taken = durations;
      durations = [];
      return taken;
    },
    stop: () => {
      diagnostics.unsubscribe('http.server.request.start', onStart);
      diagnostics.unsubscribe('http.server.response.finish', onFinish);
    },
  };
}
