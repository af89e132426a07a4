/** A clock the test moves by hand, for token expiry without sleeping. */
import type { ServiceClock } from '../../../src/service/service-clock.js';

export class ManualClock implements ServiceClock {
  #now: number;

  constructor(start = Date.parse('2026-03-01T12:00:00.000Z')) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  advance(ms: number): void {
    this.#now += ms;
  }

  advanceSeconds(seconds: number): void {
    this.#now += seconds * 1000;
  }
}
