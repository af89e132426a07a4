/**
 * The whole path over real sockets: HTTP client → startApi (fastify + MQTT gateway) → aedes on a
 * free port → in-test fake stations, and back.
 */
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import net from 'node:net';
import { startApi, type StartedApi } from '../../src/service/start-api.js';
import type { Station, TokenPair } from '../../src/service/http/api-schemas.js';
import { startTestBroker, type TestBroker } from '../helpers/test-broker.js';
import { startFakeStation, type FakeStation } from '../helpers/fake-station.js';
import { ALICE, testFixture } from '../helpers/test-fixture.js';
import { eventually } from '../helpers/eventually.js';

let broker: TestBroker;
let api: StartedApi | undefined;
let stations: FakeStation[];

beforeEach(async () => {
  broker = await startTestBroker();
  stations = [
    await startFakeStation({ url: broker.url, token: 'S-1', stationId: 1, batteryVoltage: 12.41, locks: { '1': 'locked', '2': 'locked' }, unlockDelayMs: 30, relockMs: 150 }),
    await startFakeStation({ url: broker.url, token: 'S-JAM', stationId: 2, locks: { '1': 'jammed' }, mode: 'reject', rejectReason: 'jammed' }),
    await startFakeStation({ url: broker.url, token: 'S-OFF', stationId: 3, locks: { '1': 'locked' }, online: false }),
    await startFakeStation({ url: broker.url, token: 'S-SILENT', stationId: 4, locks: { '1': 'locked' }, mode: 'silent' }),
  ];
  await stations[2]!.publishStatus('offline');
  api = undefined;
});

afterEach(async () => {
  await api?.stop();
  for (const station of stations) await station.stop();
  await broker.stop();
});

async function start(commandTimeoutMs = 1000): Promise<StartedApi> {
  api = await startApi({ fixture: testFixture(), mqttUrl: broker.url, commandTimeoutMs, jwtSecret: 'e2e-secret-that-is-at-least-32-bytes-long' });
  return api;
}

async function call<T>(base: string, method: string, path: string, options: { token?: string; body?: unknown } = {}): Promise<{ status: number; body: T }> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: {
      ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
      ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
  });
  return { status: response.status, body: (await response.json()) as T };
}

describe('quick start (interface section 1: log in, read the station, unlock)', () => {
  test('unlock is followed in a GET by unlocked, then locked after the relock time', async () => {
    const { url } = await start();
    const login = await call<TokenPair>(url, 'POST', '/v1/auth/login', { body: ALICE });
    expect(login.status).toBe(200);
    const token = login.body.accessToken;

    const station = await call<Station>(url, 'GET', '/v1/stations/S-1', { token });
    expect(station.status).toBe(200);
    expect(station.body).toMatchObject({ stationId: 1, status: 'online', batteryVoltage: 12.41 });
    expect(station.body.locks.map((lock) => lock.status)).toEqual(['locked', 'locked']);

    const unlock = await call(url, 'POST', '/v1/stations/S-1/locks/1/unlock', { token });
    expect(unlock).toEqual({ status: 200, body: { success: true } });

    const lockStatus = async (): Promise<string | undefined> => (await call<Station>(url, 'GET', '/v1/stations/S-1', { token })).body.locks[0]?.status;
    await eventually(async () => expect(await lockStatus()).toBe('unlocked'), { what: 'unlocked' });
    await eventually(async () => expect(await lockStatus()).toBe('locked'), { what: 'locked again' });
  });
});

describe('unlock outcomes over MQTT', () => {
  test('jammed lock: the station rejects, the API says why', async () => {
    const { url } = await start();
    const token = (await call<TokenPair>(url, 'POST', '/v1/auth/login', { body: ALICE })).body.accessToken;
    expect(await call(url, 'POST', '/v1/stations/S-JAM/locks/1/unlock', { token })).toEqual({
      status: 200,
      body: { success: false, message: 'Lock is jammed' },
    });
  });

  test('offline station: no command is sent', async () => {
    const { url } = await start();
    const token = (await call<TokenPair>(url, 'POST', '/v1/auth/login', { body: ALICE })).body.accessToken;
    expect((await call<Station>(url, 'GET', '/v1/stations/S-OFF', { token })).body.status).toBe('offline');
    expect(await call(url, 'POST', '/v1/stations/S-OFF/locks/1/unlock', { token })).toEqual({
      status: 200,
      body: { success: false, message: 'Station is offline' },
    });
    expect(stations[2]!.commands).toHaveLength(0);
  });

  test('a station that never acks: 504, outcome unknown, after commandTimeoutMs', async () => {
    const { url, gateway } = await start(150);
    const token = (await call<TokenPair>(url, 'POST', '/v1/auth/login', { body: ALICE })).body.accessToken;
    expect(await call(url, 'POST', '/v1/stations/S-SILENT/locks/1/unlock', { token })).toEqual({
      status: 504,
      body: {
        message:
          'The station did not acknowledge the command in time; it may still carry it out until the command expires (within 30 s of sending it): read the station before sending it again',
      },
    });
    expect(gateway.pendingCommands).toBe(0);
  });

  test('concurrent unlocks over HTTP', async () => {
    const { url } = await start();
    const token = (await call<TokenPair>(url, 'POST', '/v1/auth/login', { body: ALICE })).body.accessToken;
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => call(url, 'POST', `/v1/stations/S-1/locks/${(i % 2) + 1}/unlock`, { token })),
    );
    for (const result of results) expect(result).toEqual({ status: 200, body: { success: true } });
    expect(new Set(stations[0]!.commands.map((command) => command.commandId)).size).toBe(12);
  });
});

describe('lifecycle', () => {
  test('stop closes the server and the MQTT session, and ends a waiting unlock at once', async () => {
    const started = await start(60_000);
    const token = (await call<TokenPair>(started.url, 'POST', '/v1/auth/login', { body: ALICE })).body.accessToken;
    const waiting = call(started.url, 'POST', '/v1/stations/S-SILENT/locks/1/unlock', { token });
    await eventually(() => expect(started.gateway.pendingCommands).toBe(1));
    const clientsBefore = broker.aedes.connectedClients;
    const begin = Date.now();
    await started.stop();
    api = undefined;
    expect(Date.now() - begin).toBeLessThan(2000);
    // The command was sent: the station may still act on it, so the answer says the outcome is unknown.
    expect(await waiting).toEqual({ status: 504, body: { message: expect.stringContaining('The service stopped before the station acknowledged the command; it may still carry it out') } });
    await eventually(() => expect(broker.aedes.connectedClients).toBe(clientsBefore - 1));
    await expect(fetch(`${started.url}/v1/openapi.json`)).rejects.toThrow();
  });

  test('a port that is taken is PORT_IN_USE, and nothing is left running', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as net.AddressInfo).port;
    const clientsBefore = broker.aedes.connectedClients;
    try {
      await expect(startApi({ fixture: testFixture(), mqttUrl: broker.url, port })).rejects.toMatchObject({ code: 'PORT_IN_USE' });
      await eventually(() => expect(broker.aedes.connectedClients).toBe(clientsBefore));
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  });

  test('a host that is not an address of this machine is HOST_UNAVAILABLE, named for HTTP, and nothing is left running', async () => {
    const clientsBefore = broker.aedes.connectedClients;
    // 192.0.2.0/24 is TEST-NET-1 (RFC 5737): never an address of this machine.
    await expect(startApi({ fixture: testFixture(), mqttUrl: broker.url, port: 0, host: '192.0.2.1' })).rejects.toMatchObject({
      code: 'HOST_UNAVAILABLE',
      message: expect.stringMatching(/^Cannot listen on 192\.0\.2\.1 for HTTP: .*\(EADDRNOTAVAIL\)$/),
    });
    await eventually(() => expect(broker.aedes.connectedClients).toBe(clientsBefore));
  });

  test('a port no server can have is BAD_REQUEST before anything starts', async () => {
    const clientsBefore = broker.aedes.connectedClients;
    for (const port of [70000, -1, 1.5]) {
      await expect(startApi({ fixture: testFixture(), mqttUrl: broker.url, port })).rejects.toMatchObject({
        code: 'BAD_REQUEST',
        message: `HTTP port ${port} is not valid: use a whole number from 0 to 65535`,
      });
    }
    expect(broker.aedes.connectedClients).toBe(clientsBefore);
  });

  test('url and port name the listening address', async () => {
    const started = await start();
    expect(started.url).toBe(`http://127.0.0.1:${started.port}`);
    expect(started.port).toBeGreaterThan(0);
    expect(started.gateway.connected).toBe(true);
  });
});
