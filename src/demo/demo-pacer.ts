/**
 * The pace of the narrated demo: simulated time moves only here, one tick at a time, through the
 * simulator's manual clock. Between ticks the pacer waits as much real time as the tick is long
 * (the audience sees the story at the speed of life), or not at all when the run is `fast` or the
 * presenter has pressed `n`. `space` pauses: no tick and no action until it is pressed again.
 *
 * The ticks are the same in every case: `n`, pauses and `fast` change only how much real time
 * passes between them, never how much simulated time passes or when. That is what lets one seed
 * replay one story whatever keys were pressed (docs/demo.md, "Same seed, same story").
 */
import type { Clock, TimerHandle } from '../shared/clock.js';

/** Thrown out of a wait of a pacer that was stopped: the story ends there. */
export class DemoStopped extends Error {
  constructor() {
    super('the demo was stopped');
    this.name = 'DemoStopped';
  }
}

export interface DemoPacerOptions {
  /** Moves the simulator's manual clock `ms` forward (`POST /sim/v1/clock/advance`). */
  advance: (ms: number) => Promise<void>;
  /** Simulated time per tick. @default 250 */
  tickMs?: number;
  /** Where the real waits between ticks are timed. */
  realClock: Clock;
  /** No real waits at all (CI, tests); simulated time passes exactly as when paced. @default false */
  fast?: boolean;
  /** Start paused: nothing happens until `space` or `n`. @default false */
  paused?: boolean;
}

export const DEFAULT_TICK_MS = 250;

export class DemoPacer {
  readonly tickMs: number;
  readonly #advance: (ms: number) => Promise<void>;
  readonly #realClock: Clock;
  readonly #fast: boolean;
  #paused: boolean;
  #stopped = false;
  /** The step being played, and whether its actions run or its caption is held. */
  #step = 0;
  #phase: 'actions' | 'hold' = 'actions';
  /** Steps before this one are played without real waits: `n` was pressed during them. */
  #skipTo = 0;
  /** A step whose actions `n` let through while paused (the pause holds again at its caption). */
  #granted = -1;
  #wakers: (() => void)[] = [];
  #listeners = new Set<() => void>();

  constructor(options: DemoPacerOptions) {
    this.tickMs = options.tickMs ?? DEFAULT_TICK_MS;
    if (!(Number.isInteger(this.tickMs) && this.tickMs > 0)) throw new RangeError('tickMs must be a whole number of milliseconds above 0');
    this.#advance = options.advance;
    this.#realClock = options.realClock;
    this.#fast = options.fast ?? false;
    this.#paused = options.paused ?? false;
  }

  get paused(): boolean {
    return this.#paused;
  }

  get stopped(): boolean {
    return this.#stopped;
  }

  /** Called after every change of `paused`. */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** `space`. */
  togglePause(): void {
    if (this.#stopped) return;
    this.#paused = !this.#paused;
    this.#wake();
    for (const listener of this.#listeners) listener();
  }

  /**
   * `n`: the rest of the step being played, and of any step `n` already skipped, goes without real
   * waits. Paused, the next step's actions are let through too, and the pause holds again at its
   * caption: each `n` shows one more step.
   */
  next(): void {
    if (this.#stopped) return;
    this.#skipTo = Math.max(this.#skipTo, this.#step) + 1;
    if (this.#paused) this.#granted = this.#skipTo;
    this.#wake();
  }

  /** Ends every wait with `DemoStopped`. */
  stop(): void {
    this.#stopped = true;
    this.#wake();
  }

  /** The runner is at step `index`, about to run its actions. */
  beginStep(index: number): void {
    this.#step = index;
    this.#phase = 'actions';
  }

  /** The runner has done the step's actions and holds its caption. */
  beginHold(): void {
    this.#phase = 'hold';
  }

  /** Resolves once the story may go on: not paused, or let through by `n`. */
  async gate(): Promise<void> {
    while (!this.#stopped && this.#held()) await new Promise<void>((resolve) => this.#wakers.push(resolve));
    if (this.#stopped) throw new DemoStopped();
  }

  /** One tick: waits for the gate, moves simulated time, then waits the tick in real time unless hurried. */
  async tick(): Promise<void> {
    await this.gate();
    await this.#advance(this.tickMs);
    if (!this.#hurried()) await this.#sleep(this.tickMs);
    if (this.#stopped) throw new DemoStopped();
  }

  /** `ms` of simulated time, in whole ticks (rounded up). */
  async pass(ms: number): Promise<void> {
    for (let ticks = Math.ceil(ms / this.tickMs); ticks > 0; ticks -= 1) await this.tick();
  }

  /**
   * After the story: simulated time runs at the speed of real time until `stop`, so what the
   * presenter does in the dashboard afterwards (an unlock with `u`) plays out as it would in `up`.
   * Always paced, even for a `fast` pacer: without real waits the clock would race ahead.
   */
  async runFree(): Promise<void> {
    this.#skipTo = 0;
    this.#granted = -1;
    if (this.#paused) this.togglePause();
    try {
      while (!this.#stopped) {
        await this.#advance(this.tickMs);
        await this.#sleep(this.tickMs);
      }
    } catch (error) {
      if (!(error instanceof DemoStopped)) throw error;
    }
  }

  #held(): boolean {
    if (!this.#paused || this.#step < this.#skipTo) return false;
    return !(this.#granted === this.#step && this.#phase === 'actions');
  }

  #hurried(): boolean {
    return this.#fast || this.#step < this.#skipTo;
  }

  /** Real time, cut short by `n`, `space` or `stop`. */
  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      let handle: TimerHandle | undefined;
      const done = (): void => {
        if (handle !== undefined) this.#realClock.clearTimeout(handle);
        handle = undefined;
        this.#wakers = this.#wakers.filter((waker) => waker !== done);
        resolve();
      };
      handle = this.#realClock.setTimeout(done, ms);
      this.#wakers.push(done);
    });
  }

  #wake(): void {
    const wakers = this.#wakers;
    this.#wakers = [];
    for (const wake of wakers) wake();
  }
}
