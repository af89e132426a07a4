/**
 * How long a station waits before it reconnects: exponential backoff with jitter, so a fleet does
 * not reconnect in lockstep after a broker restart. The delay is not reset by a CONNACK, only by a
 * session that lasted (`reset`): a station whose session the broker keeps closing (a twin in
 * another process takes it over) backs off to the longest delay instead of reconnecting at once
 * every time.
 */
import type { Random } from '../station/random.js';

export interface ReconnectBackoffOptions {
  /** The delay to start from; the first reconnect waits between this and twice this. */
  firstMs: number;
  /** The longest delay before jitter; a jittered delay is between half this and this. */
  maxMs: number;
  /** Where the jitter comes from. */
  random: Random;
}

/** The delay before the next reconnect, grown on each close and put back by a session that lasted. */
export class ReconnectBackoff {
  readonly #options: ReconnectBackoffOptions;
  #delayMs: number;

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
    this.#delayMs = this.#options.firstMs;
  }

  /** A connection closed: the delay doubles, up to the longest, and is jittered down by up to half. */
  grow(): void {
    const next = Math.min(this.#delayMs * 2, this.#options.maxMs);
    this.#delayMs = Math.round(next / 2 + this.#options.random.int(0, Math.round(next / 2)));
  }
}
