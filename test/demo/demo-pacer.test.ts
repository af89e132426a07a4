/**
 * The demo's pacer on a fake simulator clock and a manual real clock: ticks move simulated time by
 * whole ticks, wait their length in real time unless hurried, and `space` and `n` change only the
 * real waits.
 */
import { describe, expect, it } from 'vitest';
import { DemoPacer, DemoStopped } from '../../src/demo/demo-pacer.js';
import { ManualClock } from '../../src/shared/clock.js';

/** Lets every promise callback queued so far run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

function pacerWith(options: { fast?: boolean; paused?: boolean } = {}) {
  const advanced: number[] = [];
  const real = new ManualClock(0);
  const pacer = new DemoPacer({ advance: async (ms) => void advanced.push(ms), realClock: real, tickMs: 100, ...options });
  return { pacer, advanced, real };
}

describe('DemoPacer', () => {
  it('moves simulated time in whole ticks, each followed by as long in real time', async () => {
    const { pacer, advanced, real } = pacerWith();
    let done = false;
    void pacer.pass(250).then(() => (done = true));
    await settle();
    expect(advanced).toEqual([100]);
    real.advance(100);
    await settle();
    expect(advanced).toEqual([100, 100]);
    real.advance(100);
    await settle();
    real.advance(100);
    await settle();
    // 250 ms rounds up to three ticks.
    expect(advanced).toEqual([100, 100, 100]);
    expect(done).toBe(true);
  });

  it('fast: the same ticks with no real wait', async () => {
    const { pacer, advanced } = pacerWith({ fast: true });
    await pacer.pass(300);
    expect(advanced).toEqual([100, 100, 100]);
  });

  it('n hurries the rest of the step, and the next step goes at its own pace again', async () => {
    const { pacer, advanced, real } = pacerWith();
    pacer.beginStep(0);
    pacer.beginHold();
    const hold = pacer.pass(1000);
    await settle();
    expect(advanced).toHaveLength(1);
    pacer.next();
    await hold;
    expect(advanced).toHaveLength(10);
    pacer.beginStep(1);
    let ticked = false;
    void pacer.tick().then(() => (ticked = true));
    await settle();
    expect(ticked).toBe(false);
    real.advance(100);
    await settle();
    expect(ticked).toBe(true);
  });

  it('paused, nothing moves until space; n plays the next step\'s actions and holds at its caption', async () => {
    const { pacer, advanced } = pacerWith({ fast: true, paused: true });
    pacer.beginStep(0);
    const order: string[] = [];
    const story = (async () => {
      await pacer.gate();
      order.push('step 1 actions');
      pacer.beginHold();
      await pacer.pass(200);
      pacer.beginStep(1);
      await pacer.gate();
      order.push('step 2 actions');
      pacer.beginHold();
      await pacer.pass(200);
      order.push('step 2 held');
    })();
    await settle();
    expect(order).toEqual([]);
    // n, paused: step 1 is let through and its hold hurried; step 2's actions are let through too.
    pacer.next();
    await settle();
    await settle();
    expect(order).toEqual(['step 1 actions', 'step 2 actions']);
    expect(pacer.paused).toBe(true);
    expect(advanced).toEqual([100, 100]);
    pacer.togglePause();
    await story;
    expect(order).toEqual(['step 1 actions', 'step 2 actions', 'step 2 held']);
    expect(advanced).toEqual([100, 100, 100, 100]);
  });

  it('stop ends a paused wait with DemoStopped', async () => {
    const { pacer } = pacerWith({ paused: true });
    const waiting = pacer.gate();
    pacer.stop();
    await expect(waiting).rejects.toBeInstanceOf(DemoStopped);
  });
});
