/**
 * `POST /sim/v1/reset` between tests: stations already in their starting state are left alone
 * (nothing republished, timestamps kept), changed ones are put back and the `/v1` API sees it, and
 * API faults go while the journal stays.
 */
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type StartedSimulator } from '../../src/simulator/start-simulator.js';
import { createClient } from '../../src/client/index.js';

let sim: StartedSimulator;
beforeAll(async () => {
  // The ci fixture with a heartbeat that does not come during the test: a heartbeat refreshes
  // `lastConnection`, which is how the test tells that a reset republished nothing.
  const ci = JSON.parse(await readFile('fixtures/ci.json', 'utf8')) as { defaults: Record<string, unknown> };
  ci.defaults.heartbeatMs = 600_000;
  sim = await startSimulator({ fixture: ci });
});
afterAll(async () => {
  await sim.stop();
});

async function call(method: string, path: string, body?: unknown): Promise<any> {
  const response = await fetch(`${sim.controlUrl}${path}`, {
    method,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  expect(response.status).toBeLessThan(300);
  return response.json();
}

describe('POST /sim/v1/reset', () => {
  it('leaves a station in its starting state as it is, and puts a changed one back where /v1 sees it', async () => {
    const user = createClient({ baseUrl: sim.apiUrl!, email: 'ci@example.com', password: 'ci-password' });
    const untouched = await call('GET', '/stations/CI-1');
    await call('POST', '/stations/CI-2/battery', { voltage: 11.9 });
    await call('POST', '/stations/CI-2/locks/1/physical', { action: 'jam' });
    await expect.poll(async () => (await user.getStation('CI-2')).locks[0]!.status).toBe('jammed');
    const changed = await call('GET', '/stations/CI-2');

    expect(await call('POST', '/reset')).toEqual({ reset: 25, missing: 0 });

    const after = await call('GET', '/stations/CI-1');
    // Nothing republished: the timestamps are those it had.
    expect(after.lastConnection).toBe(untouched.lastConnection);
    expect(after.locks).toEqual(untouched.locks);
    expect(after.timers.map((timer: { kind: string }) => timer.kind)).toContain('heartbeat');
    const back = await call('GET', '/stations/CI-2');
    expect(back.locks[0]).toMatchObject({ status: 'locked', pending: null });
    expect(back.batteryVoltage).toBeGreaterThan(changed.batteryVoltage);
    await expect.poll(async () => (await user.getStation('CI-2')).locks[0]!.status).toBe('locked');
    await expect.poll(async () => (await user.getStation('CI-2')).batteryVoltage).toBe(back.batteryVoltage);
    expect((await user.getStation('CI-1')).locks).toEqual(untouched.locks.map(({ lockId, status, lastUpdated }: any) => ({ lockId, status, lastUpdated })));
  });

  it('puts back a station with a fault in force even if nothing else changed', async () => {
    await call('POST', '/stations/CI-1/faults', { kind: 'dropCommands' });
    const before = await call('GET', '/stations/CI-1');
    await call('POST', '/reset');
    const after = await call('GET', '/stations/CI-1');
    expect(after.faults).toEqual([]);
    expect(after.lastConnection >= before.lastConnection).toBe(true);
  });
});
