/**
 * Lock phases are reported only while somebody reads them: a fleet publishes `lock.phase` on
 * `station-sim/events/{token}` while a control plane has a listener of its whole event stream
 * (the retained flag on `station-sim/listeners/+`), and nothing otherwise.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type StartedSimulator } from '../../src/simulator/start-simulator.js';
import { createClient } from '../../src/client/index.js';
import { MqttObserver } from '../helpers/mqtt-observer.js';
import type { SimStreamEvent } from '../../src/control/event-hub.js';

let sim: StartedSimulator<true>;
let observer: MqttObserver;
beforeAll(async () => {
  sim = await startSimulator({ fixture: 'ci' });
  observer = await MqttObserver.connect(sim.mqttUrl, ['station-sim/events/+', 'station-sim/listeners/+', 'stations/+/locks/+/state']);
});
afterAll(async () => {
  await observer?.client.endAsync();
  await sim?.stop();
});

/** Unlocks a lock and waits until it is locked again: every phase of that unlock has been reported by then. */
async function unlockCycle(token: string, lockId: string): Promise<void> {
  const user = createClient({ baseUrl: sim.apiUrl, email: 'ci@example.com', password: 'ci-password' });
  const since = observer.messages.length;
  await expect(user.unlock(token, lockId)).resolves.toMatchObject({ success: true });
  const fresh = (m: { topic: string; json: any }): boolean => observer.messages.indexOf(m as never) >= since;
  await observer.waitFor((m) => fresh(m) && m.topic === `stations/${token}/locks/${lockId}/state` && m.json?.status === 'unlocked', 'unlocked');
  await observer.waitFor((m) => fresh(m) && m.topic === `stations/${token}/locks/${lockId}/state` && m.json?.status === 'locked', 'locked again');
}

/** The lock phases published during one unlock's cycle. */
async function phasesOfCycle(token: string, lockId: string): Promise<number> {
  const since = observer.messages.length;
  await unlockCycle(token, lockId);
  return observer.messages.slice(since).filter((m) => m.json?.type === 'lock.phase').length;
}

describe('lock phases', () => {
  it('are not built or published while nobody listens to the event stream', async () => {
    expect(await phasesOfCycle('CI-1', '1')).toBe(0);
  });

  it('flow while a listener is there, pair with the ack, and stop again when it leaves', async () => {
    const events: SimStreamEvent[] = [];
    const unsubscribe = sim.http.control.hub.subscribe((event) => events.push(event));
    await observer.waitFor((m) => m.topic.startsWith('station-sim/listeners/') && m.payload === '1', 'the listening flag');
    // The flag reaches the fleet agent on the same broker; the next unlock's phases follow it.
    await expect.poll(() => phasesOfCycle('CI-2', '1')).toBeGreaterThan(0);
    const acked = events.filter((event) => event.type === 'command.acked');
    expect(acked.at(-1)).toMatchObject({ token: 'CI-2', lockId: '1', pending: 'opening' });

    unsubscribe();
    await observer.waitFor((m) => m.topic.startsWith('station-sim/listeners/') && m.payload === '', 'the flag cleared');
    await expect.poll(() => phasesOfCycle('CI-1', '2')).toBe(0);
  });
});
