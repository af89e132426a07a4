/**
 * The simulator's time as seen from a dashboard attached over the network, where the simulator's
 * clock cannot be read directly. A simulator runs on real time, on real time scaled
 * (`--time-scale`), or on a manual clock that moves only when told (`--clock manual`); ages and
 * countdowns of its timestamps are only right against its own time.
 *
 * It asks `GET /sim/v1/clock` (docs/control-plane.md) every `pollMs`, and between answers runs on
 * from the last one at the rate measured between answers: 0 for a manual clock, about the scale
 * otherwise. Events carry the simulator's time as well (`time`), and one later than the estimate
 * moves it forward at once: a manual clock's advance shows before the next answer.
 */
import type { Clock, TimerHandle } from '../shared/clock.js';
import type { ClockReply } from '../client/sim-types.js';

/** `GET /sim/v1/clock`. */
export type SimulatorClockReading = ClockReply;

export interface SimulatorTimeOptions {
  /** Asks the simulator for its time. */
  read: () => Promise<SimulatorClockReading>;
  /** Real time and the timers of the polling. */
  clock: Clock;
  /** How often the simulator is asked. @default 1000 */
  pollMs?: number;
}

/** Below this much real time between two answers, a rate measured from them is mostly noise. */
const MIN_RATE_SPAN_MS = 500;
/** An answer further than this from the estimate is a new clock (a restarted simulator), not drift. */
const JUMP_MS = 2000;

export class SimulatorTime {
  readonly #read: () => Promise<SimulatorClockReading>;
  readonly #clock: Clock;
  readonly #pollMs: number;
  /** The last known simulated time and the real time it was known at. */
  #anchor: { simulated: number; real: number };
  /** Simulated ms per real ms. */
  #rate = 1;
  /** The first answer of the current clock, the base of the measured rate. */
  #base: { simulated: number; real: number } | undefined;
  /** Whether `#rate` was measured, not assumed. */
  #measured = false;
  #manual = false;
  #answered = false;
  #timer: TimerHandle | undefined;
  #stopped = true;

  constructor(options: SimulatorTimeOptions) {
    this.#read = options.read;
    this.#clock = options.clock;
    this.#pollMs = options.pollMs ?? 1000;
    // Until the simulator answers, real time is the best guess.
    const now = this.#clock.now();
    this.#anchor = { simulated: now, real: now };
  }

  /** The simulator's time now, estimated. */
  now(): number {
    return this.#anchor.simulated + (this.#clock.now() - this.#anchor.real) * this.#rate;
  }

  /** Starts asking the simulator for its time. */
  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    void this.#poll();
  }

  stop(): void {
    this.#stopped = true;
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /**
   * A time the simulator stamped something with (an event's `time`). It was the simulator's time
   * when sent, so it can only be behind the real one: it moves the estimate forward, never back;
   * before the first answer it is the best there is.
   */
  observe(simulated: number): void {
    if (!Number.isFinite(simulated)) return;
    if (!this.#answered || simulated > this.now()) this.#anchor = { simulated, real: this.#clock.now() };
  }

  async #poll(): Promise<void> {
    this.#timer = undefined;
    const asked = this.#clock.now();
    try {
      const reading = await this.#read();
      if (this.#stopped) return;
      const simulated = Date.parse(reading.now);
      // Half way through the request: the answer's time is not as late as its arrival.
      if (Number.isFinite(simulated)) this.#answer(simulated, reading.manual, (asked + this.#clock.now()) / 2);
    } catch {
      // An unreachable simulator (its stream says so) or one without /clock: run on as before.
    }
    if (!this.#stopped) this.#timer = this.#clock.setTimeout(() => void this.#poll(), this.#pollMs);
  }

  #answer(simulated: number, manual: boolean, real: number): void {
    if (manual) {
      // Stands still between advances; each answer (and each later event) says where it is.
      this.#rate = 0;
      this.#base = undefined;
    } else if (this.#base === undefined || this.#manual || !this.#answered) {
      this.#base = { simulated, real };
      this.#rate = 1;
      this.#measured = false;
    } else if (this.#measured && Math.abs(simulated - this.now()) > JUMP_MS) {
      // Not where the measured rate says: another simulator (restarted), so measure again from here.
      this.#base = { simulated, real };
    } else if (real - this.#base.real >= MIN_RATE_SPAN_MS) {
      // Measured over everything since the base: the longer the span, the less a request's jitter counts.
      this.#rate = Math.max(0, (simulated - this.#base.simulated) / (real - this.#base.real));
      this.#measured = true;
    }
    this.#manual = manual;
    this.#answered = true;
    this.#anchor = { simulated, real };
  }
}
