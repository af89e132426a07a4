/**
 * The scenario runner against a fake control channel on a manual clock: what is sent when, and in
 * which order, without a broker (the end-to-end runs are in scenario.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { parseFixture } from '../../src/fixture/load-fixture.js';
import { startScenario, type ScenarioRunnerOptions } from '../../src/control/scenario-runner.js';
import { ManualClock } from '../../src/shared/clock.js';

const stations = [
  { token: 'SC-1', stationId: 1, locks: [{ lockId: '1' }] },
  { token: 'SC-2', stationId: 2, locks: [{ lockId: '1' }] },
];

/** A channel whose every request waits until the test answers it. */
function fakeChannel() {
  const sent: { what: string; answer: (ok: boolean) => void }[] = [];
  const request = (what: string): Promise<never> =>
    new Promise((resolve, reject) => {
      sent.push({ what, answer: (ok) => (ok ? resolve({ ok: true } as never) : reject(new Error(`${what} failed`))) });
    });
  const channel: ScenarioRunnerOptions['channel'] = {
    fleet: (action) => request(`fleet ${action}`),
    control: (token, action) => request(`${token} ${action.action}${'physical' in action ? ` ${action.physical}` : ''}`),
  };
  return { channel, sent, what: () => sent.map((s) => s.what) };
}

function run(scenario: object[]) {
  const fixture = parseFixture({ defaults: { heartbeatMs: 0 }, stations, scenario });
  const clock = new ManualClock(0);
  const fake = fakeChannel();
  const events: string[] = [];
  const errors: string[] = [];
  const started = startScenario({
    steps: fixture.scenario,
    channel: fake.channel,
    hub: { emit: (event) => events.push(event.type === 'control' ? event.action : event.type) },
    clock,
    onError: (step, error) => errors.push(`${step.do}: ${error.message}`),
  });
  return { clock, ...fake, events, errors, started };
}

/** Lets settled promises run their callbacks. */
const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('scenario runner', () => {
  it('sends a step only once the step before it is answered, even when it is overdue', async () => {
    const { clock, sent, what, events } = run([
      { at: '1500ms', do: 'reset' },
      { after: 0, station: 'SC-2', do: 'jam', lockId: '1' },
      { after: '1s', station: 'SC-1', do: 'offline' },
    ]);
    clock.advance(5000);
    await flush();
    // The jam's time and the offline's have come, but the reset has not been answered.
    expect(what()).toEqual(['fleet reset']);
    sent[0]!.answer(true);
    await flush();
    expect(what()).toEqual(['fleet reset', 'SC-2 physical jam']);
    expect(events).toEqual(['scenario step 1: reset']);
    sent[1]!.answer(true);
    await flush();
    expect(what()).toEqual(['fleet reset', 'SC-2 physical jam', 'SC-1 connection']);
    sent[2]!.answer(true);
    await flush();
    expect(events).toEqual(['scenario step 1: reset', 'scenario step 2: jam lock 1', 'scenario step 3: offline']);
  });

  it('waits for a step that is not yet due, on the clock', async () => {
    const { clock, sent, what } = run([
      { at: '1s', station: 'SC-1', do: 'offline' },
      { after: '2s', station: 'SC-1', do: 'online' },
    ]);
    clock.advance(999);
    expect(what()).toEqual([]);
    clock.advance(1);
    expect(what()).toEqual(['SC-1 connection']);
    sent[0]!.answer(true);
    await flush();
    expect(what()).toHaveLength(1);
    clock.advance(1999);
    expect(what()).toHaveLength(1);
    clock.advance(1);
    expect(what()).toHaveLength(2);
  });

  it('runs steps in the order of their times, list order for equal times', async () => {
    const { clock, sent, what, events } = run([
      { at: '5s', station: 'SC-1', do: 'jam', lockId: '1' },
      { at: '1s', station: 'SC-1', do: 'unjam', lockId: '1' },
      { at: '5s', station: 'SC-2', do: 'forceOpen', lockId: '1' },
    ]);
    clock.advance(10_000);
    for (let i = 0; i < 3; i += 1) {
      await flush();
      sent[i]?.answer(true);
    }
    await flush();
    expect(what()).toEqual(['SC-1 physical unjam', 'SC-1 physical jam', 'SC-2 physical forceOpen']);
    expect(events).toEqual(['scenario step 2: unjam lock 1', 'scenario step 1: jam lock 1', 'scenario step 3: forceOpen lock 1']);
  });

  it('goes on after a step fails, and reports it', async () => {
    const { clock, sent, what, events, errors } = run([
      { at: '1s', station: 'SC-1', do: 'online' },
      { after: 0, station: 'SC-1', do: 'offline' },
    ]);
    clock.advance(1000);
    sent[0]!.answer(false);
    await flush();
    expect(errors).toEqual(['online: SC-1 connection failed']);
    expect(what()).toEqual(['SC-1 connection', 'SC-1 connection']);
    sent[1]!.answer(true);
    await flush();
    expect(events).toEqual(['scenario step 2: offline']);
  });

  it('settles once every step due by now is answered', async () => {
    const { clock, sent, started } = run([
      { at: '1s', station: 'SC-1', do: 'offline' },
      { after: '1s', station: 'SC-1', do: 'online' },
      { at: '1h', station: 'SC-2', do: 'offline' },
    ]);
    await started.settled(); // nothing sent yet
    clock.advance(5000);
    let settled = false;
    void started.settled().then(() => (settled = true));
    await flush();
    expect(settled).toBe(false);
    sent[0]!.answer(true);
    await flush();
    // The second step, overdue, went out on the first one's answer: still waiting.
    expect(settled).toBe(false);
    sent[1]!.answer(false);
    await flush();
    expect(settled).toBe(true);
    expect(sent).toHaveLength(2);
  });

  it('sends nothing more once stopped, and reports nothing of a step in flight', async () => {
    const { clock, sent, what, events, started } = run([
      { at: '1s', station: 'SC-1', do: 'offline' },
      { after: '1s', station: 'SC-1', do: 'online' },
      { at: '10s', station: 'SC-2', do: 'offline' },
    ]);
    clock.advance(1000);
    started.stop();
    sent[0]!.answer(true);
    await flush();
    clock.advance(60_000);
    await flush();
    expect(what()).toEqual(['SC-1 connection']);
    expect(events).toEqual([]);
    expect(clock.pending).toBe(0);
  });
});
