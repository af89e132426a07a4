import { afterEach, describe, expect, it, vi } from 'vitest';
import { MAX_TIMER_MS, ManualClock, scaledClock, systemClock } from '../../src/shared/clock.js';
import { eventually } from '../helpers/eventually.js';

const DAY_MS = 86_400_000;

describe('ManualClock', () => {
  it('refuses to move time back or by a non-finite amount, and moves nothing then', () => {
    const clock = new ManualClock(1000);
    let fired = false;
    clock.setTimeout(() => (fired = true), 10);
    for (const ms of [-5000, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      expect(() => clock.advance(ms)).toThrow(RangeError);
    }
    expect(clock.now()).toBe(1000);
    expect(fired).toBe(false);
    clock.advance(10);
    expect(fired).toBe(true);
    expect(clock.now()).toBe(1010);
  });

  it('runs a NaN or negative delay as 0, as Node runs it at once', () => {
    const clock = new ManualClock(0);
    const fired: string[] = [];
    clock.setTimeout(() => fired.push('nan'), Number.NaN);
    clock.setTimeout(() => fired.push('negative'), -50);
    clock.advance(0);
    expect(fired).toEqual(['nan', 'negative']);
    expect(clock.pending).toBe(0);
  });

  it('fires in due order, timers due together in the order set, each seeing its due time', () => {
    const clock = new ManualClock(0);
    const fired: string[] = [];
    const note = (name: string) => () => fired.push(`${name}@${clock.now()}`);
    clock.setTimeout(note('c'), 30);
    clock.setTimeout(note('a1'), 10);
    const cleared = clock.setTimeout(note('x'), 20);
    clock.setTimeout(note('a2'), 10);
    clock.setTimeout(() => {
      fired.push(`b@${clock.now()}`);
      // Set during the advance and due before its end: fires in the same advance, after those due earlier.
      clock.setTimeout(note('d'), 5);
      clock.setTimeout(note('late'), 100);
    }, 20);
    clock.setTimeout(note('a3'), 10);
    clock.clearTimeout(cleared);
    clock.advance(40);
    expect(fired).toEqual(['a1@10', 'a2@10', 'a3@10', 'b@20', 'd@25', 'c@30']);
    expect(clock.now()).toBe(40);
    expect(clock.pending).toBe(1);
  });

  it('fires many timers in one advance in well under quadratic time', () => {
    // Scanning every pending timer per firing took ~3 s for 20,000 timers; a heap takes milliseconds.
    const clock = new ManualClock(0);
    let count = 0;
    let last = -1;
    let ordered = true;
    const n = 20_000;
    for (let i = 0; i < n; i += 1) {
      clock.setTimeout(() => {
        ordered &&= clock.now() >= last;
        last = clock.now();
        count += 1;
      }, 1 + ((i * 7919) % 1000));
    }
    const start = performance.now();
    clock.advance(1000);
    expect(performance.now() - start).toBeLessThan(1000);
    expect(count).toBe(n);
    expect(ordered).toBe(true);
  });
});

describe('scaledClock', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('fires timers under 1 ms of real time in due order, not the order set', async () => {
    // Real timers, but the wall clock stands still while the timers are set: a millisecond passing
    // between two calls (10 s simulated) would change which is due first.
    vi.useFakeTimers({ toFake: ['Date'] });
    const clock = scaledClock(10_000);
    const fired: number[] = [];
    // 0.5 ms, 0.1 ms and 0.3 ms of real time: Node would run all three after 1 ms, in this order.
    for (const ms of [5000, 1000, 3000]) clock.setTimeout(() => fired.push(ms), ms);
    vi.setSystemTime(Date.now() + 1);
    await eventually(() => expect(fired).toHaveLength(3));
    expect(fired).toEqual([1000, 3000, 5000]);
  });

  it('does not fire a cleared timer', async () => {
    const clock = scaledClock(1000);
    const fired: string[] = [];
    const first = clock.setTimeout(() => fired.push('first'), 1000);
    clock.setTimeout(() => fired.push('second'), 5000);
    clock.clearTimeout(first);
    await eventually(() => expect(fired).toEqual(['second']));
  });

  it('waits a delay that the scale stretches past the longest Node timer', () => {
    vi.useFakeTimers();
    const clock = scaledClock(0.5);
    let fired = false;
    // 20 days simulated is 40 days real: past MAX_TIMER_MS, which would overflow to 1 ms.
    clock.setTimeout(() => (fired = true), 20 * DAY_MS);
    vi.advanceTimersByTime(MAX_TIMER_MS);
    expect(fired).toBe(false);
    vi.advanceTimersByTime(40 * DAY_MS - MAX_TIMER_MS - 10);
    expect(fired).toBe(false);
    vi.advanceTimersByTime(20);
    expect(fired).toBe(true);
  });
});

describe('systemClock', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('waits a delay past the longest Node timer in chunks, and can clear it', () => {
    vi.useFakeTimers();
    const fired: string[] = [];
    systemClock.setTimeout(() => fired.push('long'), 30 * DAY_MS);
    const cleared = systemClock.setTimeout(() => fired.push('cleared'), 30 * DAY_MS);
    systemClock.clearTimeout(cleared);
    vi.advanceTimersByTime(30 * DAY_MS - 1);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual(['long']);
  });
});
