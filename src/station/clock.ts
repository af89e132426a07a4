/**
 * The time source of the station model (STYLE.md, "Seams for testing"): the model never reads
 * `Date.now()` or calls `setTimeout` itself, so tests drive it in fake time and a simulator can
 * run it at another speed.
 */
export type TimerHandle = { readonly id: number } | NodeJS.Timeout;

export interface Clock {
  /** Milliseconds since the epoch, in simulated time. */
  now(): number;
  setTimeout(callback: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/** Real time. Timers are unref'd: a pending relock or heartbeat must not keep a process alive. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms).unref(),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/**
 * A clock that moves only when told to. Timers fire in time order during `advance`, each seeing
 * `now()` equal to its due time.
 */
export class ManualClock implements Clock {
  #now: number;
  #nextId = 1;
  #timers = new Map<number, { due: number; callback: () => void }>();

  constructor(start = Date.parse('2026-01-01T00:00:00.000Z')) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(callback: () => void, ms: number): TimerHandle {
    const id = this.#nextId++;
    this.#timers.set(id, { due: this.#now + Math.max(0, ms), callback });
    return { id };
  }

  clearTimeout(handle: TimerHandle): void {
    if ('id' in handle && typeof handle.id === 'number') this.#timers.delete(handle.id);
  }

  /** Number of timers still pending. */
  get pending(): number {
    return this.#timers.size;
  }

  /** Moves time forward by `ms`, firing every timer that falls due on the way. */
  advance(ms: number): void {
    const target = this.#now + ms;
    for (;;) {
      let nextId: number | undefined;
      let nextDue = Infinity;
      for (const [id, timer] of this.#timers) {
        if (timer.due <= target && timer.due < nextDue) {
          nextDue = timer.due;
          nextId = id;
        }
      }
      if (nextId === undefined) break;
      const timer = this.#timers.get(nextId)!;
      this.#timers.delete(nextId);
      this.#now = timer.due;
      timer.callback();
    }
    this.#now = target;
  }
}

/**
 * Real time running `factor` times faster (`--time-scale`): delays, relocks, heartbeats, battery
 * drain, scenario steps and token lifetimes all shrink by the factor.
 */
export function scaledClock(factor: number, start = Date.now()): Clock {
  if (!(factor > 0) || !Number.isFinite(factor)) throw new RangeError('time scale must be a positive number');
  return {
    now: () => start + (Date.now() - start) * factor,
    setTimeout: (callback, ms) => systemClock.setTimeout(callback, ms / factor),
    clearTimeout: (handle) => systemClock.clearTimeout(handle),
  };
}
