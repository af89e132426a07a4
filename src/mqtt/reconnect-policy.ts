/**
 * How long a station waits before it reconnects: exponential backoff with full jitter (the delay
 * is drawn anywhere between 0 and min(longest, first × 2^attempt)), so a fleet does not reconnect
 * in lockstep after a broker restart: the reconnects of 10,000 stations spread evenly over the
 * window instead of arriving as waves. The delay is not reset by a CONNACK, only by a session that
 * lasted (`reset`): a station whose session the broker keeps closing (a twin in another process
 * takes it over) backs off to the longest window instead of reconnecting at once every time.
 *
 * The jitter has a random stream of its own (`reconnectRandom` in src/station/random.ts), never
 * the station model's: a reconnect must not shift the next unlock delay, so the same seed replays
 * the same run whether or not the connection dropped (STYLE.md).
 */
import type { Random } from '../station/random.js';

export interface ReconnectBackoffOptions {
  /** The delay before the first reconnect, and the base the window doubles from. */
  firstMs: number;
  /** The widest window: no delay is longer. */
  maxMs: number;
  /** Where the jitter comes from: a stream only the backoff draws from. */
  random: Random;
}

/** The delay before the next reconnect, drawn on each close and put back by a session that lasted. */
export class ReconnectBackoff {
  readonly #options: ReconnectBackoffOptions;
  #delayMs: number;
  /** Closes since the backoff last started again. */
  #attempt = 0;

  constructor(options: ReconnectBackoffOptions) {
    this.#options = options;
    this.#delayMs = options.firstMs;
  }

  /** What the next reconnect waits. */
  get delayMs(): number {
    return this.#delayMs;
  }

  /** A session that lasted: the backoff starts again from the first delay. */
  reset(): void {
    this.#attempt = 0;
    this.#delayMs = this.#options.firstMs;
  }

  /** A connection closed: the window doubles, up to the longest, and the delay is drawn from all of it. */
  grow(): void {
    this.#attempt = Math.min(this.#attempt + 1, 52);
    const window = Math.min(this.#options.maxMs, this.#options.firstMs * 2 ** this.#attempt);
    this.#delayMs = this.#options.random.int(0, Math.round(window));
  }
}
