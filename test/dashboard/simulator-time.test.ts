/** Following a simulator's clock over the network: manual, scaled, and moved on by events. */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/shared/clock.js';
import { SimulatorTime, type SimulatorClockReading } from '../../src/dashboard/simulator-time.js';

const REAL = Date.parse('2026-11-23T06:00:00.000Z');
const SIM = Date.parse('2026-11-22T08:00:00.000Z');
const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** `real` is the dashboard's clock; `answer` what the simulator says at the real time asked. */
function follow(answer: (realMs: number) => SimulatorClockReading) {
  const real = new ManualClock(REAL);
  const time = new SimulatorTime({ read: async () => answer(real.now() - REAL), clock: real, pollMs: 1000 });
  /** Real time passes a second at a time, the polls answered as they go. */
  const pass = async (ms: number): Promise<void> => {
    for (let left = ms; left > 0; left -= 1000) {
      real.advance(Math.min(1000, left));
      await flush();
    }
  };
  return { real, time, pass };
}

describe('SimulatorTime', () => {
  it('stands still with a manual clock between answers, and moves with an event stamped later', async () => {
    const { time, pass } = follow(() => ({ now: new Date(SIM).toISOString(), manual: true }));
    time.start();
    await flush();
    expect(time.now()).toBe(SIM);
    await pass(5000);
    expect(time.now()).toBe(SIM);
    // `POST /sim/v1/clock/advance {"ms":60000}`: its events come before the next answer.
    time.observe(SIM + 60_000);
    expect(time.now()).toBe(SIM + 60_000);
    // An event from before is no reason to go back.
    time.observe(SIM + 1000);
    expect(time.now()).toBe(SIM + 60_000);
    time.stop();
  });

  it('runs at the rate the answers show (--time-scale 10) between them', async () => {
    const { time, pass } = follow((realMs) => ({ now: new Date(SIM + realMs * 10).toISOString(), manual: false }));
    time.start();
    await flush();
    expect(time.now()).toBe(SIM);
    await pass(2000);
    await pass(500);
    // Half a second after the last answer: 5 simulated seconds on.
    expect(time.now()).toBe(SIM + 25_000);
    time.stop();
  });

  it('takes real time, then event times, until the simulator answers', async () => {
    const { time, real } = follow(() => {
      throw new Error('no /sim/v1/clock here');
    });
    expect(time.now()).toBe(real.now());
    time.start();
    await flush();
    time.observe(SIM);
    expect(time.now()).toBe(SIM);
    time.stop();
  });
});
