/**
 * The MQTT gateway against a real aedes broker on a free port and in-test fake stations.
 */
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import net from 'node:net';
import mqtt from 'mqtt';
import { Aedes } from 'aedes';
import { startMqttGateway, type StartedMqttGateway } from '../../../src/service/station-gateway.js';
import { NEVER_REPORTED } from '../../../src/service/gateway/station-state-cache.js';
import { SimError } from '../../../src/errors.js';
import { parseFixture } from '../../../src/fixture/load-fixture.js';
import { startTestBroker, type TestBroker } from '../../helpers/test-broker.js';
import { startFakeStation, type FakeStation } from '../../helpers/fake-station.js';
import { testFixture } from '../../helpers/test-fixture.js';
import { eventually } from '../../helpers/eventually.js';

let broker: TestBroker;
let gateway: StartedMqttGateway | undefined;
let stations: FakeStation[];

beforeEach(async () => {
  broker = await startTestBroker();
  stations = [];
  gateway = undefined;
});

afterEach(async () => {
  await gateway?.stop();
  for (const station of stations) await station.stop();
  await broker.stop();
});

async function station(options: Omit<Parameters<typeof startFakeStation>[0], 'url'>): Promise<FakeStation> {
  const started = await startFakeStation({ url: broker.url, ...options });
  stations.push(started);
  return started;
}

async function start(commandTimeoutMs = 1000): Promise<StartedMqttGateway> {
  gateway = await startMqttGateway({ mqttUrl: broker.url, fixture: testFixture(), commandTimeoutMs });
  return gateway;
}

describe('station state from retained messages', () => {
  test('a station that published before the gateway started is online at once', async () => {
    await station({ token: 'S-1', stationId: 1, batteryVoltage: 12.3, locks: { '1': 'locked', '2': 'unlocked' } });
    const gw = await start();
    const view = gw.getStation('S-1');
    expect(view).toMatchObject({ stationId: 1, status: 'online', batteryVoltage: 12.3 });
    expect(view?.locks.map((lock) => [lock.lockId, lock.status])).toEqual([
      ['1', 'locked'],
      ['2', 'unlocked'],
    ]);
    expect(Date.parse(view!.lastConnection)).toBeGreaterThan(0);
  });

  test('a fixture station that never published is offline with the fixture lock ids', async () => {
    const gw = await start();
    expect(gw.getStation('S-SILENT')).toEqual({
      stationId: 4,
      batteryVoltage: 12.6,
      lastConnection: NEVER_REPORTED,
      status: 'offline',
      locks: [{ lockId: '1', status: 'locked', lastUpdated: NEVER_REPORTED }],
    });
  });

  test('an unknown token is undefined', async () => {
    const gw = await start();
    expect(gw.getStation('NOPE')).toBeUndefined();
  });

  test('later messages update the cache; malformed ones are ignored', async () => {
    const gw = await start();
    const fake = await station({ token: 'S-1', stationId: 1, locks: { '1': 'locked', '2': 'locked' } });
    await eventually(() => expect(gw.getStation('S-1')?.status).toBe('online'));
    await fake.client.publishAsync('stations/S-1/status', 'not json', { qos: 1, retain: true });
    await fake.client.publishAsync('stations/S-1/locks/1/state', JSON.stringify({ lockId: '2', status: 'unlocked', lastUpdated: 'x' }), { qos: 1 });
    await fake.publishLock('2', 'jammed');
    await eventually(() => expect(gw.getStation('S-1')?.locks[1]?.status).toBe('jammed'));
    expect(gw.getStation('S-1')?.status).toBe('online');
    expect(gw.getStation('S-1')?.locks[0]?.status).toBe('locked');
    await fake.publishStatus('offline');
    await eventually(() => expect(gw.getStation('S-1')?.status).toBe('offline'));
  });

  test('a lock the station publishes beyond the fixture is refused: the view has the fixture locks only', async () => {
    const gw = await start();
    const fake = await station({ token: 'S-1', stationId: 1, locks: { '1': 'jammed', '9': 'locked' } });
    await eventually(() => expect(gw.refusedMessages.unknownLock).toBe(1));
    await eventually(() => expect(gw.getStation('S-1')?.locks[0]?.status).toBe('jammed'));
    expect(gw.getStation('S-1')?.locks.map((lock) => lock.lockId)).toEqual(['1', '2']);
    await fake.stop();
  });

  test('a cleared retained status is not the station going offline: it is refused and counted', async () => {
    const gw = await start();
    const fake = await station({ token: 'S-1', stationId: 1, locks: { '1': 'locked' } });
    await eventually(() => expect(gw.getStation('S-1')?.status).toBe('online'));
    await fake.client.publishAsync('stations/S-1/status', '', { qos: 1, retain: true });
    await eventually(() => expect(gw.refusedMessages.emptyPayload).toBe(1));
    expect(gw.getStation('S-1')?.status).toBe('online');
  });

  test('custom topic templates from the fixture are followed', async () => {
    const topics = { prefix: 'acme', status: '{prefix}/dev/{token}/hello', lockState: '{prefix}/dev/{token}/l/{lockId}', unlock: '{prefix}/dev/{token}/l/{lockId}/open', acks: '{prefix}/dev/{token}/ack' };
    const fixture = parseFixture({
      accounts: [],
      stations: [{ token: 'C-1', stationId: 9, locks: [{ lockId: 'x' }], behaviour: { topics } }],
    });
    await station({ token: 'C-1', stationId: 9, locks: { x: 'locked' }, topics });
    gateway = await startMqttGateway({ mqttUrl: broker.url, fixture, commandTimeoutMs: 1000 });
    expect(gateway.getStation('C-1')?.status).toBe('online');
    expect(await gateway.unlock('C-1', 'x')).toEqual({ success: true, commandId: expect.any(String) });
  });
});

describe('unlock', () => {
  test('publishes a command with a fresh id and resolves on the accepted ack', async () => {
    const fake = await station({ token: 'S-1', stationId: 1, locks: { '1': 'locked', '2': 'locked' } });
    const gw = await start();
    const first = await gw.unlock('S-1', '1');
    const second = await gw.unlock('S-1', '1');
    expect([first, second]).toEqual([
      { success: true, commandId: fake.commands[0]!.commandId },
      { success: true, commandId: fake.commands[1]!.commandId },
    ]);
    expect(fake.commands).toHaveLength(2);
    expect(fake.commands[0]!.commandId).not.toBe(fake.commands[1]!.commandId);
    expect(fake.commands[0]!.commandId).toMatch(/^[0-9a-f-]{36}$/);
    expect(Number.isNaN(Date.parse(fake.commands[0]!.sentAt!))).toBe(false);
    await eventually(() => expect(gw.getStation('S-1')?.locks[0]?.status).toBe('unlocked'), { what: 'unlocked' });
    await eventually(() => expect(gw.getStation('S-1')?.locks[0]?.status).toBe('locked'), { what: 'relocked' });
    expect(gw.pendingCommands).toBe(0);
  });

  test('a rejected ack gives success false with the reason', async () => {
    await station({ token: 'S-JAM', stationId: 2, locks: { '1': 'jammed' }, mode: 'reject', rejectReason: 'jammed' });
    await station({ token: 'S-LOWBAT', stationId: 5, locks: { '1': 'locked' }, mode: 'reject', rejectReason: 'low_battery' });
    const gw = await start();
    expect(await gw.unlock('S-JAM', '1')).toMatchObject({ success: false, message: 'Lock is jammed' });
    expect(await gw.unlock('S-LOWBAT', '1')).toMatchObject({ success: false, message: 'Battery too low' });
  });

  test('an offline station gets no command', async () => {
    const fake = await station({ token: 'S-OFF', stationId: 3, locks: { '1': 'locked' }, online: false });
    await fake.publishStatus('offline');
    const gw = await start();
    expect(await gw.unlock('S-OFF', '1')).toEqual({ success: false, failure: 'STATION_OFFLINE', message: 'Station is offline' });
    expect(await gw.unlock('S-SILENT', '1')).toMatchObject({ success: false, message: 'Station is offline' });
    expect(fake.commands).toHaveLength(0);
  });

  test('a station that never acks times out, and the wait is cleaned up', async () => {
    const fake = await station({ token: 'S-SILENT', stationId: 4, locks: { '1': 'locked' }, mode: 'silent' });
    const gw = await start(150);
    const started = Date.now();
    expect(await gw.unlock('S-SILENT', '1')).toEqual({
      success: false,
      failure: 'ACK_TIMEOUT',
      message: 'The station did not acknowledge the command in time; it may still carry it out until the command expires (within 30 s of sending it): read the station before sending it again',
      commandId: expect.any(String),
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(fake.commands).toHaveLength(1);
    expect(gw.pendingCommands).toBe(0);
  });

  test('acks for another command, lock or station settle nothing', async () => {
    const silent = await station({ token: 'S-SILENT', stationId: 4, locks: { '1': 'locked' }, mode: 'silent' });
    const other = await station({ token: 'S-1', stationId: 1, locks: { '1': 'locked' }, mode: 'silent' });
    const gw = await start(300);
    const result = gw.unlock('S-SILENT', '1');
    await eventually(() => expect(silent.commands).toHaveLength(1));
    const { commandId } = silent.commands[0]!;
    await other.publishAck(JSON.stringify({ commandId, lockId: '1', accepted: true }));
    await silent.publishAck(JSON.stringify({ commandId, lockId: '2', accepted: true }));
    await silent.publishAck(JSON.stringify({ commandId: 'other', lockId: '1', accepted: true }));
    await silent.publishAck('garbage');
    expect(await result).toMatchObject({ success: false, failure: 'ACK_TIMEOUT' });
  });

  test('concurrent unlocks each get their own answer', async () => {
    const fake = await station({ token: 'S-1', stationId: 1, locks: { '1': 'locked', '2': 'locked' } });
    await station({ token: 'S-JAM', stationId: 2, locks: { '1': 'jammed' }, mode: 'reject' });
    const gw = await start();
    const results = await Promise.all([
      ...Array.from({ length: 10 }, (_, i) => gw.unlock('S-1', i % 2 === 0 ? '1' : '2')),
      gw.unlock('S-JAM', '1'),
    ]);
    expect(results.slice(0, 10)).toEqual(Array.from({ length: 10 }, () => ({ success: true, commandId: expect.any(String) })));
    expect(results[10]).toMatchObject({ success: false, message: 'Lock is jammed' });
    expect(new Set(fake.commands.map((command) => command.commandId)).size).toBe(10);
    // Each answer carries the id of its own command, never another's.
    expect(new Set(results.slice(0, 10).map((result) => result.commandId))).toEqual(new Set(fake.commands.map((command) => command.commandId)));
    expect(gw.pendingCommands).toBe(0);
  });

  test('unknown station or lock throws the catalogue error', async () => {
    const gw = await start();
    await expect(gw.unlock('NOPE', '1')).rejects.toMatchObject({ code: 'STATION_NOT_FOUND' });
    await expect(gw.unlock('S-1', '9')).rejects.toMatchObject({ code: 'LOCK_NOT_FOUND' });
  });

  test('stop ends a pending wait at once, with the outcome unknown', async () => {
    await station({ token: 'S-SILENT', stationId: 4, locks: { '1': 'locked' }, mode: 'silent' });
    const gw = await start(60_000);
    const result = gw.unlock('S-SILENT', '1');
    await eventually(() => expect(gw.pendingCommands).toBe(1));
    await gw.stop();
    expect(await result).toMatchObject({ success: false, failure: 'STOPPED_IN_FLIGHT', message: expect.stringContaining('may still carry it out') });
    expect(gw.pendingCommands).toBe(0);
    expect(await gw.unlock('S-SILENT', '1')).toMatchObject({ failure: 'SERVICE_STOPPING' });
  });
});

/** The transport dials through `net.connect`: records the sockets it opens from here on. */
function recordConnections() {
  const sockets: net.Socket[] = [];
  const connect = net.connect.bind(net);
  const spy = vi.spyOn(net, 'connect').mockImplementation(((...args: Parameters<typeof net.connect>) => {
    const socket = connect(...args);
    sockets.push(socket);
    return socket;
  }) as typeof net.connect);
  return { sockets, spy };
}

describe('connection', () => {
  test('TCP_NODELAY is set on every socket, also after a reconnect; stations show offline meanwhile', async () => {
    await station({ token: 'S-1', stationId: 1, locks: { '1': 'locked' } });
    const { sockets, spy } = recordConnections();
    try {
      gateway = await startMqttGateway({ mqttUrl: broker.url, fixture: testFixture(), reconnectMs: 20 });
      const gw = gateway;
      expect(sockets).toHaveLength(1);
      broker.dropClients();
      await eventually(() => !gw.connected, { what: 'the gateway to lose its connection' });
      expect(gw.getStation('S-1')?.status).toBe('offline');
      expect(await gw.unlock('S-1', '1')).toMatchObject({ failure: 'STATION_OFFLINE' });
      await eventually(() => gw.connected, { what: 'the gateway to reconnect' });
      expect(sockets.length).toBeGreaterThanOrEqual(2);
      for (const socket of sockets) expect(noDelayOf(socket)).toBe(true);
      // The fake station's session was dropped too; its retained state is still on the broker.
      await eventually(() => expect(gw.getStation('S-1')?.status).toBe('online'));
    } finally {
      spy.mockRestore();
    }
  });

  test('while the broker is gone, the first failed reconnect is logged and the rest are counted in the line that says it is back', async () => {
    const lines: string[] = [];
    const logger = { debug: () => {}, info: (m: string) => lines.push(`info ${m}`), warn: (m: string) => lines.push(`warn ${m}`), error: (m: string) => lines.push(`error ${m}`) };
    const { sockets: attempts, spy } = recordConnections();
    let again: { server: net.Server; aedes: Aedes } | undefined;
    try {
      gateway = await startMqttGateway({ mqttUrl: broker.url, fixture: testFixture(), reconnectMs: 10, logger });
      const gw = gateway;
      await broker.stop();
      await eventually(() => expect(attempts.length).toBeGreaterThanOrEqual(6), { what: 'several refused reconnects' });
      const during = lines.filter((line) => line.startsWith('warn'));
      expect(during).toEqual([
        `warn MQTT ${broker.url}: connection lost; stations show offline until it is back`,
        expect.stringMatching(new RegExp(`^warn MQTT ${broker.url.replaceAll('.', '\\.')}: .*ECONNREFUSED.*; retrying, and saying nothing more until it is back$`)),
      ]);
      // The broker comes back on the same port.
      const aedes = await Aedes.createBroker();
      const server = net.createServer((socket) => aedes.handle(socket));
      again = { server, aedes };
      await new Promise<void>((resolve) => server.listen(broker.port, '127.0.0.1', resolve));
      await eventually(() => gw.connected, { what: 'the gateway to reconnect' });
      const back = lines.filter((line) => line.includes('reconnected'));
      expect(back).toHaveLength(1);
      const failed = Number(/after (\d+) failed attempts$/.exec(back[0]!)?.[1]);
      expect(failed).toBeGreaterThanOrEqual(4);
      expect(lines.filter((line) => line.startsWith('warn'))).toHaveLength(2);
      await gateway.stop();
      gateway = undefined;
    } finally {
      spy.mockRestore();
      if (again) {
        const { server, aedes } = again;
        await new Promise<void>((resolve) => aedes.close(() => resolve()));
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    }
  });

  test('after a reconnect the picture is rebuilt from what the broker retains then, not kept from before', async () => {
    await station({ token: 'S-1', stationId: 1, locks: { '1': 'locked' } });
    gateway = await startMqttGateway({ mqttUrl: broker.url, fixture: testFixture(), reconnectMs: 300 });
    const gw = gateway;
    expect(gw.getStation('S-1')?.status).toBe('online');
    broker.dropClientsWithIdPrefix(gw.clientId);
    await eventually(() => !gw.connected, { what: 'the gateway to lose its connection' });
    // While the gateway is away, the station's retained status goes (as on a broker restarted without it).
    const outsider = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0 });
    await outsider.publishAsync('stations/S-1/status', '', { qos: 1, retain: true });
    await outsider.endAsync();
    await eventually(() => gw.connected, { what: 'the gateway to reconnect' });
    const seen = gw.getStation('S-1')!;
    expect(seen).toMatchObject({ status: 'offline', lastConnection: NEVER_REPORTED });
    // The lock state the broker still retains came back with the new subscription.
    expect(seen.locks[0]).toMatchObject({ lockId: '1', status: 'locked' });
    expect(seen.locks[0]!.lastUpdated).not.toBe(NEVER_REPORTED);
    expect(await gw.unlock('S-1', '1')).toMatchObject({ failure: 'STATION_OFFLINE' });
  });

  test('a command the broker never acknowledged is not replayed after a reconnect', async () => {
    const fake = await station({ token: 'S-1', stationId: 1, locks: { '1': 'locked' } });
    // The broker swallows the first unlock publish: no PUBACK, no delivery.
    let swallow = true;
    broker.aedes.authorizePublish = (_client, packet, callback) => {
      if (swallow && packet.topic.endsWith('/unlock')) {
        swallow = false;
        return;
      }
      callback(null);
    };
    gateway = await startMqttGateway({ mqttUrl: broker.url, fixture: testFixture(), commandTimeoutMs: 150, reconnectMs: 20 });
    const gw = gateway;
    expect(await gw.unlock('S-1', '1')).toMatchObject({ failure: 'ACK_TIMEOUT' });
    // Only the gateway's connection drops; the station stays subscribed.
    broker.dropClientsWithIdPrefix('station-sim-api-');
    await eventually(() => !gw.connected, { what: 'the gateway to lose its connection' });
    await eventually(() => gw.connected, { what: 'the gateway to reconnect' });
    // A replay would now pass the broker and reach the station, ahead of any command sent after
    // the reconnect: so the station sees that later command, and it alone.
    expect(await gw.unlock('S-1', '1')).toMatchObject({ success: true });
    expect(fake.commands).toHaveLength(1);
  });

  test('an unreachable broker fails the start with BROKER_UNREACHABLE', async () => {
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as net.AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const error = await startMqttGateway({ mqttUrl: `mqtt://user:secret@127.0.0.1:${port}`, fixture: testFixture() }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SimError);
    expect(error).toMatchObject({ code: 'BROKER_UNREACHABLE' });
    expect((error as Error).message).not.toContain('secret');
  });

  test('a broker that refuses the credentials fails the start with BROKER_REFUSED', async () => {
    broker.aedes.authenticate = (_client, _user, _password, done) => done(Object.assign(new Error('nope'), { returnCode: 4 }), false);
    await expect(startMqttGateway({ mqttUrl: broker.url, fixture: testFixture() })).rejects.toMatchObject({ code: 'BROKER_REFUSED' });
  });
});

/** Node keeps the socket's noDelay wish under a private symbol and applies it on connect. */
function noDelayOf(socket: net.Socket): boolean {
  const symbol = Object.getOwnPropertySymbols(socket).find((s) => s.description === 'kSetNoDelay');
  return symbol !== undefined && (socket as unknown as Record<symbol, boolean>)[symbol] === true;
}
