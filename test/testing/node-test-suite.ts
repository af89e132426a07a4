/**
 * A suite written for node:test, as a user of station-sim would write one, with node:test's own
 * hook names; suite-hooks.test.ts runs it with `node --import tsx` (the helper starts its own
 * simulator) and under `station-sim run` (it attaches). `beforeEach` resets the simulator, so what
 * the first test does to the fleet is gone in the second.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, it } from 'node:test';
import { withSimulator } from '../../src/testing/index.js';

const simulator = withSimulator({ before, after, beforeEach }, { fixture: 'ci' });

it('attaches under station-sim run, and starts its own otherwise', () => {
  assert.equal(simulator().mode, process.env.STATION_SIM_API_URL ? 'attached' : 'owned');
});

it('opens a lock, then leaves a station offline, a battery drained, a lock jammed and a fault', async () => {
  const sim = simulator();
  const client = await sim.login('ci@example.com');
  assert.deepEqual(await client.unlock('CI-1', '1'), { success: true });
  await sim.waitForLock('CI-1', '1', 'unlocked');
  await sim.setOnline('CI-2', false);
  await sim.setBattery('CI-1', 10.8);
  await sim.jam('CI-1', '2');
  await sim.addFault('CI-FLEET-01', { kind: 'reject', count: 3 });
});

it('finds none of it in the next test', async () => {
  const sim = simulator();
  const client = await sim.login();
  assert.equal((await client.getStation('CI-2')).status, 'online');
  assert.ok((await client.getStation('CI-1')).batteryVoltage > 12);
  assert.deepEqual(await client.unlock('CI-1', '2'), { success: true });
  assert.deepEqual(await client.unlock('CI-FLEET-01', '1'), { success: true });
});
