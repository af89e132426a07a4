/**
 * Bounds how many login password checks (scrypt) run at once. scrypt runs on libuv's thread pool,
 * 4 threads by default: a login flood kept all 4 busy, on a 2-core machine that is every core, and
 * station reads fell by 65 %. With `concurrency` checks at a time, the rest of the
 * process keeps a core. Attempts beyond that wait in a first-come queue of at most `maxQueued`;
 * past it an attempt is refused at once (`LOGIN_BUSY`, 503 with Retry-After) rather than queued
 * without bound, so a flood costs memory and latency for nobody but itself.
 */
import { RetryLaterError } from '../../errors.js';
import type { PasswordHashingSettings } from '../../fixture/fixture-schema.js';

/** What a refused attempt is told: try again in a second, when the queue has moved on. */
const BUSY_RETRY_AFTER_SECONDS = 1;

interface Waiting {
  start: () => void;
  refuse: (error: Error) => void;
}

export class HashLimiter {
  readonly #settings: PasswordHashingSettings;
  /**
   * Two lines, each first come first served: logins from clients that have not been failing, which
   * go first, and the rest ("suspect"). Two classes rather than a priority per login, so that no
   * login waits behind an endless stream of slightly better ones: a suspect login waits only for
   * clean ones, which a flood cannot make.
   */
  readonly #clean: Waiting[] = [];
  readonly #suspect: Waiting[] = [];
  #running = 0;
  #started = 0;
  #refused = 0;
  #peak = 0;

  constructor(settings: PasswordHashingSettings) {
    this.#settings = settings;
  }

  /** Checks running now, waiting now, started so far, refused so far, and the most ever running at once. */
  get stats(): { running: number; queued: number; started: number; refused: number; peakRunning: number } {
    return { running: this.#running, queued: this.#clean.length + this.#suspect.length, started: this.#started, refused: this.#refused, peakRunning: this.#peak };
  }

  /**
   * Runs `task` once fewer than `concurrency` tasks run. A `suspect` task (the caller says so of a
   * client with recent failures or other logins in flight) waits behind every task that is not.
   * With `maxQueued` tasks waiting, a task that is not suspect takes the place of the newest
   * suspect one, which is refused; otherwise the newcomer is. A refusal is `LOGIN_BUSY`, at once,
   * and the refused task never runs.
   */
  async run<T>(task: () => Promise<T>, suspect = false): Promise<T> {
    if (this.#running >= this.#settings.concurrency) {
      await this.#wait(suspect);
    } else {
      this.#running += 1;
    }
    this.#started += 1;
    this.#peak = Math.max(this.#peak, this.#running);
    try {
      return await task();
    } finally {
      // The slot is handed to the next in line, so `#running` stays counted for it.
      const next = this.#clean.shift() ?? this.#suspect.shift();
      if (next) next.start();
      else this.#running -= 1;
    }
  }

  #wait(suspect: boolean): Promise<void> {
    if (this.#clean.length + this.#suspect.length >= this.#settings.maxQueued) {
      const bumped = suspect ? undefined : this.#suspect.pop();
      if (!bumped) return Promise.reject(this.#refusal());
      bumped.refuse(this.#refusal());
    }
    return new Promise<void>((start, refuse) => (suspect ? this.#suspect : this.#clean).push({ start, refuse }));
  }

  #refusal(): RetryLaterError {
    this.#refused += 1;
    return new RetryLaterError('LOGIN_BUSY', BUSY_RETRY_AFTER_SECONDS);
  }
}
