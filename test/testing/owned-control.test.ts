/**
 * An owned helper (started here, `env: {}` so no STATION_SIM_* of the shell can attach it): each
 * control method has its effect, seen through `/v1` or the station's snapshot; `events()` and the
 * waits over a real socket; and `beforeEach` resets, so what one test does to the fleet does not
 * leak into the next (the tests marked "leak" run in order and check that).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestSimulator, withSimulator } from '../../src/testing/index.js';

const lines: string[] = [];
const simulator = withSimulator({ beforeAll, afterAll, beforeEach }, { fixture: 'ci', env: {}, log: (line) => lines.push(line) });

describe('an owned helper', () => {
  it('says in one line that it started a simulator, and has its URLs', () => {
    const sim = simulator();
    expect(sim.mode).toBe('owned');
    expect(lines).toEqual([`station-sim: started a simulator at ${sim.apiUrl} (fixture ci)`]);
    expect(sim.apiUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(sim.controlUrl).toBe(`${sim.apiUrl}/sim/v1`);
    expect(sim.mqttUrl).toMatch(/^mqtt:\/\/127\.0\.0\.1:\d+$/);
    expect(sim.sim.apiUrl).toBe(sim.apiUrl);
  });

  it('leak 1: takes a station offline, drains a battery, jams a lock and puts a fault on', async () => {
    const sim = simulator();
    const client = await sim.login();
    expect((await sim.setOnline('CI-2', false)).status).toBe('offline');
    await sim.waitForStation('CI-2', 'offline');
    expect((await sim.setBattery('CI-1', 10.9)).batteryVoltage).toBe(10.9);
    expect((await client.getStation('CI-1')).batteryVoltage).toBe(10.9);
    await sim.jam('CI-1', '2');
    expect(await client.unlock('CI-1', '2')).toEqual({ success: false, message: 'Lock is jammed' });
    const fault = await sim.addFault('CI-FLEET-01', { kind: 'reject', reason: 'test', count: 5 });
    expect(fault).toMatchObject({ id: expect.any(String), kind: 'reject' });
    expect((await client.unlock('CI-FLEET-01', '1')).success).toBe(false);
  });

  it('leak 2: the next test finds the fixture as it was', async () => {
    const sim = simulator();
    const client = await sim.login();
    const [ci1, ci2, fleet] = await Promise.all(['CI-1', 'CI-2', 'CI-FLEET-01'].map((token) => sim.control.station(token)));
    expect(ci2!.status).toBe('online');
    expect((await client.getStation('CI-2')).status).toBe('online');
    expect((await client.getStation('CI-1')).batteryVoltage).toBeGreaterThan(12);
    expect(ci1!.batteryVoltage).toBeGreaterThan(12);
    expect(ci1!.locks.map((lock) => lock.status)).not.toContain('jammed');
    expect(fleet!.faults).toEqual([]);
    expect(await client.unlock('CI-1', '2')).toEqual({ success: true });
    expect(await client.unlock('CI-FLEET-01', '1')).toEqual({ success: true });
  });

  it('verifies what reached the simulator since a mark, and faults the /v1 API until reset', async () => {
    const sim = simulator();
    const client = await sim.login();
    const mark = await sim.mark();
    expect((await client.unlock('CI-1', '1')).success).toBe(true);
    const unlock = 'POST /v1/stations/:station_token/locks/:lock_id/unlock';
    const [entry] = await sim.verify({ since: mark, route: unlock, token: 'CI-1' }, { count: 1 });
    expect(entry).toMatchObject({ kind: 'api', method: 'POST', status: 200, lockId: '1' });
    await expect(sim.verify({ since: mark, route: unlock, token: 'CI-2' })).rejects.toThrow(/expected at least 1 journal entry matching .*token=CI-2, found 0/);

    const fault = await sim.addApiFault({ route: 'GET /v1/stations/:station_token', kind: 'status', status: 503, retryAfterSeconds: 2, count: 1 });
    await expect(client.getStation('CI-1')).rejects.toMatchObject({ status: 503 });
    expect((await client.getStation('CI-1')).stationId).toBeDefined();
    await sim.verify({ since: mark, route: 'GET /v1/stations/:station_token', status: 503 }, { count: 1 });
    expect((await sim.verify({ since: mark, route: 'GET /v1/stations/:station_token', status: 503 }))[0]).toMatchObject({ fault: fault.id });

    await sim.addApiFault({ route: 'GET /v1/stations/:station_token', kind: 'status', status: 500 });
    await sim.reset();
    expect((await client.getStation('CI-1')).stationId).toBeDefined();
  });

  it('frees a jammed lock', async () => {
    const sim = simulator();
    await sim.jam('CI-1', '1');
    expect((await sim.unjam('CI-1', '1')).locks.find((lock) => lock.lockId === '1')?.status).toBe('locked');
    expect(await (await sim.login()).unlock('CI-1', '1')).toEqual({ success: true });
  });

  it('refuses http: false, which leaves nothing to test against', async () => {
    await expect(startTestSimulator({ fixture: 'ci', http: false })).rejects.toThrow(new TypeError('startTestSimulator needs the HTTP API: do not pass http: false'));
  });

  it('clears the faults of one station, or of all', async () => {
    const sim = simulator();
    await sim.addFault('CI-1', { kind: 'reject', count: 1 });
    await sim.addFault('CI-2', { kind: 'reject', count: 1 });
    await sim.clearFaults('CI-1');
    expect((await sim.control.station('CI-1')).faults).toEqual([]);
    expect((await sim.control.station('CI-2')).faults).toHaveLength(1);
    await sim.clearFaults();
    expect((await sim.control.station('CI-2')).faults).toEqual([]);
  });

  it('reboots a station: events() sees it go offline and come back', async () => {
    const sim = simulator();
    const events = sim.events({ type: 'station.status', token: 'CI-2' });
    await events.ready;
    await sim.reboot('CI-2', 50);
    const seen: string[] = [];
    for await (const event of events) {
      seen.push(event.status);
      if (event.status === 'online') break;
    }
    expect(seen).toEqual(['offline', 'online']);
    await sim.waitForStation('CI-2', 'online');
  });

  it('follows an unlock on the stream, and waits for the lock to open and close', async () => {
    const sim = simulator();
    const client = await sim.login();
    const events = sim.events({ type: ['command.sent', 'command.acked', 'lock.state'], token: 'CI-1', lockId: '1' });
    await events.ready;
    expect(await client.unlock('CI-1', '1')).toEqual({ success: true });
    await sim.waitForLock('CI-1', '1', 'unlocked');
    await sim.waitForLock('CI-1', '1', 'locked');
    const types: string[] = [];
    for await (const event of events) {
      types.push(event.type === 'lock.state' ? `lock.state ${event.status}` : event.type);
      if (event.type === 'lock.state' && event.status === 'locked') break;
    }
    expect(types).toEqual(['command.sent', 'command.acked', 'lock.state unlocked', 'lock.state locked']);
  });

  it('says what it saw last when a wait times out', async () => {
    const sim = simulator();
    await sim.setOnline('CI-2', false);
    await expect(sim.waitForStation('CI-2', 'online', { timeoutMs: 100 })).rejects.toThrow('station CI-2 did not become "online" within 100 ms; last seen "offline"');
  });

  it('refuses to move a clock that is not manual', async () => {
    await expect(simulator().advanceClock(1000)).rejects.toMatchObject({ status: 409 });
  });

  it('logs in with an email and password not in the fixture it was told, and names a missing account', async () => {
    const sim = simulator();
    expect(await (await sim.login('other@example.com', 'other-password')).unlock('CI-2', '1')).toEqual({ success: true });
    await expect(sim.login('nobody@example.com')).rejects.toThrow('the fixture has no account nobody@example.com');
  });
});
