/**
 * What a subscriber of the event stream gets: its events and where the connection stands. Apart
 * from control-client.ts so that event-iterator.ts, which control-client.ts uses, can take them too.
 */
import type { SimEvent } from './sim-types.js';

/** Where the event stream stands; the dashboard shows it. */
export type StreamState =
  | { phase: 'connecting'; attempt: number }
  | { phase: 'open' }
  /** `retryAt` is on the connection's clock (`clock.now()`), for a countdown. */
  | { phase: 'waiting'; attempt: number; retryInMs: number; retryAt: number; reason: string }
  | { phase: 'refused'; reason: string }
  | { phase: 'closed' };

export interface EventStreamHandlers {
  /** Each event in order; after every (re)connect the first one is a `snapshot`. */
  onEvent(event: SimEvent): void;
  onState?(state: StreamState): void;
}

export interface EventSubscription {
  /** Closes the stream for good; no reconnect follows. */
  close(): void;
}
