/**
 * The time source of the station model (STYLE.md, "Seams for testing"): the model never reads
 * `Date.now()` or calls `setTimeout` itself, so tests drive it in fake time and a simulator can
 * run it at another speed. It lives in shared/ because every layer above uses it (the fixture's
 * timer bound, the service, the control plane, the dashboard), not the station alone.
 */
export type TimerHandle = { readonly id: number } | NodeJS.Timeout;

export interface Clock {
  /** Milliseconds since the epoch, in simulated time. */
  now(): number;
  /** Calls `callback` once `ms` have passed; a negative or NaN `ms` counts as 0. */
  setTimeout(callback: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/**
 * The longest delay a Node timer keeps (about 24.8 days): a longer one overflows and fires after
 * 1 ms. The clocks below wait longer in chunks of at most this.
 */
export const MAX_TIMER_MS = 2_147_483_647;

/**
 * Real time. Timers are unref'd: a pending relock or heartbeat must not keep a process alive.
 * A delay past `MAX_TIMER_MS` is waited for in chunks instead of overflowing.
 */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => (ms > MAX_TIMER_MS ? new LongTimeout(callback, ms) : setTimeout(callback, ms).unref()),
  clearTimeout: (handle) => {
    if (handle instanceof LongTimeout) handle.cancel();
    else clearTimeout(handle as NodeJS.Timeout);
  },
};

/**
 * A clock that moves only when told to. Timers fire in time order during `advance` (timers due at
 * the same time in the order they were set), each seeing `now()` equal to its due time.
 */
export class ManualClock implements Clock {
  #now: number;
  readonly #queue = new TimerQueue();

  constructor(start = Date.parse('2026-01-01T00:00:00.000Z')) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(callback: () => void, ms: number): TimerHandle {
    return this.#queue.add(this.#now + delayOf(ms), callback);
  }

  clearTimeout(handle: TimerHandle): void {
    if (handle instanceof QueuedTimer) this.#queue.remove(handle);
  }

  /** Number of timers still pending. */
  get pending(): number {
    return this.#queue.size;
  }

  /**
   * Moves time forward by `ms`, firing every timer that falls due on the way (those set by a
   * callback too, if they fall due before the end). Time never goes back, and it moves by a finite
   * amount: a negative, NaN or infinite `ms` throws a RangeError and moves nothing.
   */
  advance(ms: number): void {
    if (!(ms >= 0) || !Number.isFinite(ms)) throw new RangeError(`advance takes a finite number of milliseconds, at least 0 (got ${ms})`);
    const target = this.#now + ms;
    for (let timer = this.#queue.peek(); timer !== undefined && timer.due <= target; timer = this.#queue.peek()) {
      this.#queue.pop();
      this.#now = timer.due;
      timer.callback();
    }
    this.#now = target;
  }
}

/** True for a factor a scaled clock can run at: a finite number above 0. */
export function isTimeScale(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0;
}

/**
 * Real time running `factor` times faster (`--time-scale`): delays, relocks, heartbeats, battery
 * drain, scenario steps and token lifetimes all shrink by the factor.
 *
 * The clock keeps its timers in due order and arms one real timer for the earliest. Left to Node,
 * every delay under 1 ms of real time (all those under 10 s at a factor of 10,000) would become
 * 1 ms and fire in the order set, not the order due; and a factor below 1 would stretch a long
 * delay past `MAX_TIMER_MS`, which the real timer now waits for in chunks.
 */
export function scaledClock(factor: number, start = Date.now()): Clock {
  if (!isTimeScale(factor)) throw new RangeError('time scale must be a positive number');
  const now = (): number => start + (Date.now() - start) * factor;
  const queue = new TimerQueue();
  let armed: { timeout: NodeJS.Timeout; due: number } | undefined;
  let firing = false;

  const arm = (): void => {
    const first = queue.peek();
    if (armed && first && armed.due <= first.due) return;
    if (armed) clearTimeout(armed.timeout);
    armed = undefined;
    if (!first) return;
    const wait = Math.min(Math.max(0, (first.due - now()) / factor), MAX_TIMER_MS);
    armed = { due: first.due, timeout: setTimeout(fire, wait).unref() };
  };

  const fire = (): void => {
    armed = undefined;
    firing = true;
    const time = now();
    // Timers set by these callbacks wait for the next real timer, as Node's own would.
    const lastId = queue.lastId;
    try {
      for (let timer = queue.peek(); timer !== undefined && timer.due <= time && timer.id <= lastId; timer = queue.peek()) {
        queue.pop();
        timer.callback();
      }
    } finally {
      // A callback that throws ends this batch (the error goes uncaught, as from a Node timer);
      // the rest fire on the next real timer.
      firing = false;
      arm();
    }
  };

  return {
    now,
    setTimeout: (callback, ms) => {
      const timer = queue.add(now() + delayOf(ms), callback);
      if (!firing) arm();
      return timer;
    },
    // A real timer armed for a cleared timer fires, finds nothing due and arms for the next.
    clearTimeout: (handle) => {
      if (handle instanceof QueuedTimer) queue.remove(handle);
    },
  };
}

/** Node runs a NaN or negative delay at once (after 1 ms); so do these clocks (after 0). */
function delayOf(ms: number): number {
  return ms > 0 ? ms : 0;
}

/** A real timer longer than Node keeps: re-armed in chunks of `MAX_TIMER_MS` until `ms` have passed. */
class LongTimeout {
  static #lastId = 0;
  readonly id = (LongTimeout.#lastId += 1);
  #timeout: NodeJS.Timeout | undefined;

  constructor(callback: () => void, ms: number) {
    let left = ms;
    const wait = (): void => {
      const chunk = Math.min(left, MAX_TIMER_MS);
      left -= chunk;
      this.#timeout = setTimeout(() => (left > 0 ? wait() : callback()), chunk).unref();
    };
    wait();
  }

  cancel(): void {
    clearTimeout(this.#timeout);
  }
}

/** A pending timer of a clock that keeps its own queue; it is its own handle. */
class QueuedTimer {
  /** Where it is in the heap; -1 once it has fired or been cleared. */
  index = -1;

  constructor(
    readonly id: number,
    readonly due: number,
    readonly callback: () => void,
  ) {}
}

/**
 * Timers in a binary min-heap by due time, then by id (the order they were set), so firing n
 * timers costs O(n log n) and timers due together fire in the order they were set.
 */
class TimerQueue {
  readonly #heap: QueuedTimer[] = [];
  #lastId = 0;

  get size(): number {
    return this.#heap.length;
  }

  /** Id of the last timer added. */
  get lastId(): number {
    return this.#lastId;
  }

  add(due: number, callback: () => void): QueuedTimer {
    const timer = new QueuedTimer((this.#lastId += 1), due, callback);
    this.#place(timer, this.#heap.length);
    this.#up(timer.index);
    return timer;
  }

  peek(): QueuedTimer | undefined {
    return this.#heap[0];
  }

  pop(): QueuedTimer | undefined {
    const first = this.#heap[0];
    if (first) this.remove(first);
    return first;
  }

  /** Takes `timer` out; false if it is not waiting here (fired, cleared, or another clock's). */
  remove(timer: QueuedTimer): boolean {
    const index = timer.index;
    if (this.#heap[index] !== timer) return false;
    const last = this.#heap.pop()!;
    timer.index = -1;
    if (last !== timer) {
      this.#place(last, index);
      this.#down(index);
      this.#up(last.index);
    }
    return true;
  }

  #before(a: QueuedTimer, b: QueuedTimer): boolean {
    return a.due < b.due || (a.due === b.due && a.id < b.id);
  }

  #place(timer: QueuedTimer, index: number): void {
    this.#heap[index] = timer;
    timer.index = index;
  }

  #up(index: number): void {
    const timer = this.#heap[index]!;
    while (index > 0) {
      const parentIndex = (index - 1) >> 1;
      const parent = this.#heap[parentIndex]!;
      if (!this.#before(timer, parent)) break;
      this.#place(parent, index);
      index = parentIndex;
    }
    this.#place(timer, index);
  }

  #down(index: number): void {
    const heap = this.#heap;
    const timer = heap[index]!;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child = right < heap.length && this.#before(heap[right]!, heap[left]!) ? right : left;
      if (!this.#before(heap[child]!, timer)) break;
      this.#place(heap[child]!, index);
      index = child;
    }
    this.#place(timer, index);
  }
}
