/**
 * Bounds how many login password checks (scrypt) run at once. scrypt runs on libuv's thread pool,
 * 4 threads by default: a login flood kept all 4 busy, on a 2-core machine that is every core, and
 * station reads fell by 65 % (issue 15). With `concurrency` checks at a time, the rest of the
 * process keeps a core. Attempts beyond that wait in a first-come queue of at most `maxQueued`;
 * past it an attempt is refused at once (`LOGIN_BUSY`, 503 with Retry-After) rather than queued
 * without bound, so a flood costs memory and latency for nobody but itself.
 */
import { RetryLaterError } from '../../errors.js';
import type { PasswordHashingSettings } from '../../fixture/fixture-schema.js';

/** What a refused attempt is told: try again in a second, when the queue has moved on. */
const BUSY_RETRY_AFTER_SECONDS = 1;

export class HashLimiter {
  readonly #settings: PasswordHashingSettings;
  readonly #waiting: (() => void)[] = [];
  #running = 0;
  #started = 0;
  #refused = 0;
  #peak = 0;

  constructor(settings: PasswordHashingSettings) {
    this.#settings = settings;
  }

  /** Checks running now, waiting now, started so far, refused so far, and the most ever running at once. */
  get stats(): { running: number; queued: number; started: number; refused: number; peakRunning: number } {
    return { running: this.#running, queued: this.#waiting.length, started: this.#started, refused: this.#refused, peakRunning: this.#peak };
  }

  /**
   * Runs `task` once fewer than `concurrency` tasks run; throws `LOGIN_BUSY` at once, without
   * running it, when `maxQueued` tasks already wait.
   */
  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.#running >= this.#settings.concurrency) {
      if (this.#waiting.length >= this.#settings.maxQueued) {
        this.#refused += 1;
        throw new RetryLaterError('LOGIN_BUSY', BUSY_RETRY_AFTER_SECONDS);
      }
      // The slot is handed over by the task that finishes (below), so `#running` stays counted.
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    } else {
      this.#running += 1;
    }
    this.#started += 1;
    this.#peak = Math.max(this.#peak, this.#running);
    try {
      return await task();
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#running -= 1;
    }
  }
}
