/**
 * An attached helper: a simulator started here with startSimulator (manual clock) stands for the
 * one `station-sim run` starts, named to the helper by STATION_SIM_* in process.env (restored
 * after). The helper controls it over HTTP exactly as an owned one does, and its stop() leaves it
 * running. When the simulator there cannot serve what the suite asked for, the helper starts its
 * own and its line says why; one that does not answer is an error.
 */
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type StartedSimulator } from '../../src/simulator/start-simulator.js';
import { resolveFixture } from '../../src/simulator/resolve-fixture.js';
import { startTestSimulator, type TestSimulator } from '../../src/testing/index.js';
import { mismatch } from '../../src/testing/attach.js';
import { ControlClient } from '../../src/client/control-client.js';
import { startFakeControlPlane } from '../dashboard/fake-control-plane.js';

let server: StartedSimulator<true>;
let helper: TestSimulator;
const lines: string[] = [];
const saved = { ...process.env };

beforeAll(async () => {
  server = await startSimulator({ fixture: 'ci', clock: 'manual' });
  process.env.STATION_SIM_API_URL = server.apiUrl;
  process.env.STATION_SIM_CONTROL_URL = server.controlUrl;
  process.env.STATION_SIM_MQTT_URL = server.mqttUrl;
  helper = await startTestSimulator({ fixture: 'ci', clock: 'manual', log: (line) => lines.push(line) });
}, 60_000);

afterAll(async () => {
  for (const name of ['STATION_SIM_API_URL', 'STATION_SIM_CONTROL_URL', 'STATION_SIM_MQTT_URL']) {
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  }
  await helper?.stop();
  await server?.stop();
});

describe('an attached helper', () => {
  it('attaches to the simulator in the environment and says so in one line', () => {
    expect(helper.mode).toBe('attached');
    expect(lines).toEqual([`station-sim: attached to the simulator at ${server.apiUrl} (STATION_SIM_API_URL)`]);
    expect(helper.apiUrl).toBe(server.apiUrl);
    expect(helper.controlUrl).toBe(server.controlUrl);
    expect(helper.mqttUrl).toBe(server.mqttUrl);
    expect(() => helper.sim).toThrow(`sim is the simulator a helper starts itself; this one is attached to ${server.apiUrl}: use control, or pass attach: false`);
  });

  it('acts on that simulator: connection, battery, jam, fault, reset, seen through /v1 and the snapshot', async () => {
    const client = await helper.login('ci@example.com');
    await helper.setOnline('CI-2', false);
    await helper.waitForStation('CI-2', 'offline', { timeoutMs: 2000 });
    expect((await helper.control.station('CI-2')).status).toBe('offline');
    await helper.setBattery('CI-1', 11.1);
    expect((await client.getStation('CI-1')).batteryVoltage).toBe(11.1);
    await helper.jam('CI-1', '2');
    expect((await client.getStation('CI-1')).locks.find((lock) => lock.lockId === '2')?.status).toBe('jammed');
    await helper.addFault('CI-FLEET-01', { kind: 'reject', count: 1 });
    expect((await helper.control.station('CI-FLEET-01')).faults).toHaveLength(1);
    expect(await helper.reset()).toMatchObject({ reset: 25, missing: 0 });
    expect((await client.getStation('CI-2')).status).toBe('online');
    expect((await client.getStation('CI-1')).locks.map((lock) => lock.status)).not.toContain('jammed');
    expect((await helper.control.station('CI-FLEET-01')).faults).toEqual([]);
  });

  it('moves the manual clock, and a lock opens and closes on it as events and waits see', async () => {
    const client = await helper.login();
    const before = Date.parse((await helper.control.simulatorClock()).now);
    const reply = await helper.advanceClock(1234);
    expect(Date.parse(reply.now) - before).toBe(1234);
    const events = helper.events({ type: 'lock.state', token: 'CI-1', lockId: '1' });
    await events.ready;
    const unlocking = client.unlock('CI-1', '1');
    // The station acknowledges at once; its unlock delay and relock run on the manual clock.
    expect(await unlocking).toEqual({ success: true });
    await helper.advanceClock(60_000);
    const seen: string[] = [];
    for await (const event of events) {
      seen.push(event.status);
      if (event.status === 'locked') break;
    }
    expect(seen).toEqual(['unlocked', 'locked']);
    await helper.waitForLock('CI-1', '1', 'locked', { timeoutMs: 1000 });
  });

  it('leaves the simulator running when it stops', async () => {
    const other = await startTestSimulator({ fixture: 'ci', clock: 'manual', quiet: true, log: () => undefined });
    expect(other.mode).toBe('attached');
    await other.stop();
    expect((await new ControlClient({ url: server.apiUrl }).health()).ready).toBe(true);
  });

  it('says so, even when quiet, when another helper is attached to the same simulator at once (test files in parallel)', async () => {
    const said: string[] = [];
    const second = await startTestSimulator({ fixture: 'ci', clock: 'manual', quiet: true, log: (line) => said.push(line) });
    await second.stop();
    expect(said).toEqual([
      `station-sim: another test helper (process ${process.pid}) is attached to the simulator at ${server.apiUrl} as well: test files running in parallel share its stations, ` +
        "and one file's reset or fault reaches the other's tests. Run them one at a time (vitest run --no-file-parallelism, jest --runInBand, node --test --test-concurrency=1), " +
        'or pass attach: false to give each file its own simulator.',
    ]);
    // Once the other is gone, a helper attaches without the warning.
    await helper.stop();
    const alone: string[] = [];
    const third = await startTestSimulator({ fixture: 'ci', clock: 'manual', quiet: true, log: (line) => alone.push(line) });
    expect(alone).toEqual([]);
    helper = third;
  });

  it('starts its own, saying why, when an option needs one; or when told attach: false', async () => {
    const said: string[] = [];
    const own = await startTestSimulator({ fixture: 'ci', seed: 3, log: (line) => said.push(line) });
    try {
      expect(own.mode).toBe('owned');
      expect(own.apiUrl).not.toBe(server.apiUrl);
      expect(said).toEqual([`station-sim: started a simulator at ${own.apiUrl} (fixture ci); not attached to the one at ${server.apiUrl} (STATION_SIM_API_URL): seed asks for a simulator of its own`]);
    } finally {
      await own.stop();
    }
    const told = await startTestSimulator({ fixture: 'ci', attach: false, log: (line) => said.push(line) });
    try {
      expect(told.mode).toBe('owned');
      expect(said[1]).toBe(`station-sim: started a simulator at ${told.apiUrl} (fixture ci); not attached to the one at ${server.apiUrl} (STATION_SIM_API_URL): attach: false`);
    } finally {
      await told.stop();
    }
    expect((await new ControlClient({ url: server.apiUrl }).health()).ready).toBe(true);
  }, 60_000);

  it('does not take a simulator of another fixture or clock for its own', async () => {
    const control = new ControlClient({ url: server.controlUrl });
    const target = { apiUrl: server.apiUrl, controlUrl: server.controlUrl, mqttUrl: server.mqttUrl, controlToken: undefined };
    expect(await mismatch(control, target, await resolveFixture('demo'), undefined)).toMatch(/^it runs another fixture \(25 stations, not the \d+ of .*demo\.json\)$/);
    expect(await mismatch(control, target, await resolveFixture('ci'), 'system')).toBe('its clock is manual, not the system clock');
    expect(await mismatch(control, target, await resolveFixture('ci'), 'manual')).toBeUndefined();
  });

  it('fails, naming the variable, when the simulator it names does not answer', async () => {
    const port = await closedPort();
    const env = { STATION_SIM_API_URL: `http://127.0.0.1:${port}` };
    await expect(startTestSimulator({ fixture: 'ci', env, quiet: true })).rejects.toThrow(
      `STATION_SIM_API_URL names a simulator at http://127.0.0.1:${port}, but its control plane does not answer: cannot reach the control plane: ECONNREFUSED. Start it (station-sim run), unset the variable, or pass attach: false.`,
    );
  });
});

describe('attaching to a simulator that needs a control token', () => {
  it('says to set STATION_SIM_CONTROL_TOKEN when it has none, and which token it sent when refused', async () => {
    const fake = await startFakeControlPlane({ stations: [], controlToken: 'right' });
    try {
      const env = { STATION_SIM_API_URL: fake.url };
      await expect(startTestSimulator({ fixture: 'ci', env, quiet: true })).rejects.toThrow(
        `STATION_SIM_API_URL names a simulator at ${fake.url}, whose control plane needs a control token: set STATION_SIM_CONTROL_TOKEN or pass controlToken to the helper.`,
      );
      await expect(startTestSimulator({ fixture: 'ci', env: { ...env, STATION_SIM_CONTROL_TOKEN: 'wrong' }, quiet: true })).rejects.toThrow(
        `STATION_SIM_API_URL names a simulator at ${fake.url}, whose control plane refused the control token: set STATION_SIM_CONTROL_TOKEN or pass controlToken to the helper.`,
      );
      expect(fake.requests.map((request) => request.authorization)).toEqual([undefined, 'Bearer wrong']);
    } finally {
      await fake.close();
    }
  });
});

/** A port nothing listens on: one the system gave out and was closed again. */
async function closedPort(): Promise<number> {
  const listener = createServer();
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const { port } = listener.address() as { port: number };
  await new Promise<void>((resolve) => listener.close(() => resolve()));
  return port;
}
