/**
 * The virtual stations through real MQTT: the embedded aedes over TCP and over in-memory streams,
 * and a real Mosquitto started on a free port. The same firmware tests run against each.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startEmbeddedBroker, type StartedBroker } from '../../src/broker/embedded-broker.js';
import { startFleet, type StartedFleet } from '../../src/fleet/start-fleet.js';
import { loadFixture, parseFixture } from '../../src/fixture/load-fixture.js';
import type { MqttTransport } from '../../src/mqtt/transport.js';
import { mosquittoAvailable, startMosquitto } from '../helpers/mosquitto.js';
import { eventually } from '../helpers/eventually.js';
import { MqttObserver } from '../helpers/mqtt-observer.js';
import { expectJudgeFindings } from '../helpers/judge-findings.js';

expectJudgeFindings('publishes malformed commands by hand (not JSON, no sentAt) to see the firmware refuse them');

interface BrokerUnderTest {
  url: string;
  transport: MqttTransport;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

async function aedes(kind: 'tcp' | 'memory'): Promise<BrokerUnderTest> {
  let broker: StartedBroker = await startEmbeddedBroker({ port: 0 });
  const port = broker.port;
  return {
    url: broker.url,
    // The indirection lets in-memory stations find the new broker after a restart.
    transport: kind === 'tcp' ? { kind, url: broker.url } : { kind, broker: { handle: (stream) => broker.handle(stream) } },
    restart: async () => {
      await broker.stop();
      broker = await startEmbeddedBroker({ port });
    },
    stop: () => broker.stop(),
  };
}

async function mosquitto(): Promise<BrokerUnderTest> {
  const running = await startMosquitto();
  return { url: running.url, transport: { kind: 'tcp', url: running.url }, restart: running.restart, stop: running.stop };
}

const brokers: [string, () => Promise<BrokerUnderTest>, boolean][] = [
  ['embedded aedes over TCP', () => aedes('tcp'), true],
  ['embedded aedes over in-memory streams', () => aedes('memory'), true],
  ['a real Mosquitto', mosquitto, mosquittoAvailable()],
];

const small = parseFixture({
  defaults: { unlockDelayMs: 30, relockMs: 60, heartbeatMs: 0 },
  stations: [
    { token: 'S-1', stationId: 1, locks: [{ lockId: '1' }, { lockId: '2', status: 'jammed' }] },
    { token: 'S-2', stationId: 2, locks: [{ lockId: 'A' }] },
  ],
});

describe.each(brokers)('virtual stations against %s', (_name, makeBroker, available) => {
  let broker: BrokerUnderTest | undefined;
  let fleet: StartedFleet | undefined;
  let observer: MqttObserver | undefined;

  afterEach(async () => {
    await observer?.close();
    await fleet?.stop();
    await broker?.stop();
    observer = undefined;
    fleet = undefined;
    broker = undefined;
  });

  async function boot(stations = small.stations): Promise<[BrokerUnderTest, StartedFleet]> {
    broker = await makeBroker();
    fleet = await startFleet({ stations, transport: broker.transport, seed: 1, concurrency: 50 });
    return [broker, fleet];
  }

  it.runIf(available)('retains a status for every station and a state for every lock', async () => {
    const ci = await loadFixture('fixtures/ci.json');
    const [b] = await boot(ci.stations);
    observer = await MqttObserver.connect(b.url, ['stations/#']);
    for (const station of ci.stations) {
      const status = await observer.waitFor((m) => m.topic === `stations/${station.token}/status`, `status of ${station.token}`);
      expect(status.retain).toBe(true);
      expect(status.json).toMatchObject({ stationId: station.stationId, status: station.initialStatus, batteryVoltage: station.batteryVoltage });
      expect(Number.isNaN(Date.parse(status.json.lastConnection))).toBe(false);
      for (const lock of station.locks) {
        const state = await observer.waitFor((m) => m.topic === `stations/${station.token}/locks/${lock.lockId}/state`, `lock ${lock.lockId}`);
        expect(state.retain).toBe(true);
        expect(state.json).toMatchObject({ lockId: lock.lockId, status: lock.status });
      }
    }
  });

  it.runIf(available)('acks an unlock, then reports unlocked, then locked', async () => {
    const [b] = await boot();
    observer = await MqttObserver.connect(b.url, ['stations/S-1/acks', 'stations/S-1/locks/+/state']);
    await observer.waitFor((m) => m.topic.endsWith('/locks/1/state'), 'the retained state');
    await observer.waitFor((m) => m.topic.endsWith('/locks/2/state'), 'the retained state');
    observer.clear();
    await observer.publish('stations/S-1/locks/1/unlock', { commandId: 'c-1', sentAt: new Date().toISOString() });
    await observer.waitFor((m) => m.json?.status === 'locked', 'relock');
    expect(observer.messages.map((m) => [m.topic, m.json.accepted ?? m.json.status, m.retain])).toEqual([
      ['stations/S-1/acks', true, false],
      ['stations/S-1/locks/1/state', 'unlocked', false],
      ['stations/S-1/locks/1/state', 'locked', false],
    ]);
    expect(observer.messages[0]?.json).toEqual({ commandId: 'c-1', lockId: '1', accepted: true });
  });

  it.runIf(available)('rejects a jammed lock with a reason and ignores malformed commands', async () => {
    const [b] = await boot();
    observer = await MqttObserver.connect(b.url, ['stations/S-1/acks']);
    await observer.publish('stations/S-1/locks/1/unlock', 'not json');
    await observer.publish('stations/S-1/locks/2/unlock', { commandId: 'j-1' });
    const ack = await observer.waitFor((m) => m.json?.commandId === 'j-1', 'the rejection');
    expect(ack.json).toEqual({ commandId: 'j-1', lockId: '2', accepted: false, reason: 'jammed' });
    expect(observer.messages).toHaveLength(1);
  });

  it.runIf(available)('acks a duplicate command id twice and executes it once', async () => {
    const [b] = await boot();
    observer = await MqttObserver.connect(b.url, ['stations/S-2/acks', 'stations/S-2/locks/+/state']);
    await observer.waitFor((m) => m.topic.endsWith('/state'), 'the retained state');
    observer.clear();
    await observer.publish('stations/S-2/locks/A/unlock', { commandId: 'dup' });
    await observer.publish('stations/S-2/locks/A/unlock', { commandId: 'dup' });
    await observer.waitFor((m) => m.json?.status === 'locked', 'relock');
    // A wrong second execution would show before a later command has run its course: the station
    // takes commands in order, and its delays, all the same length, fall due in that order.
    await observer.publish('stations/S-2/locks/A/unlock', { commandId: 'later' });
    const states = (): string[] => observer!.messages.filter((m) => m.topic.endsWith('/state')).map((m) => m.json.status);
    await eventually(() => expect(states().filter((status) => status === 'locked')).toHaveLength(2), { what: 'the relock after the later command' });
    const acks = observer.messages.filter((m) => m.topic.endsWith('/acks'));
    expect(acks.map((m) => m.json)).toEqual([
      { commandId: 'dup', lockId: 'A', accepted: true },
      { commandId: 'dup', lockId: 'A', accepted: true },
      { commandId: 'later', lockId: 'A', accepted: true },
    ]);
    expect(states()).toEqual(['unlocked', 'locked', 'unlocked', 'locked']);
  });

  it.runIf(available)('is marked offline by its last will when its connection dies, and says offline when stopped', async () => {
    const [b, f] = await boot();
    observer = await MqttObserver.connect(b.url, ['stations/+/status']);
    await observer.waitFor((m) => m.topic === 'stations/S-1/status' && m.json.status === 'online', 'S-1 online');
    await observer.waitFor((m) => m.topic === 'stations/S-2/status' && m.json.status === 'online', 'S-2 online');
    observer.clear();
    await f.get('S-1')!.kill();
    const will = await observer.waitFor((m) => m.topic === 'stations/S-1/status', 'the last will');
    expect(will.json).toMatchObject({ stationId: 1, status: 'offline' });
    await f.get('S-2')!.stop();
    const clean = await observer.waitFor((m) => m.topic === 'stations/S-2/status', 'the clean offline');
    expect(clean.json).toMatchObject({ stationId: 2, status: 'offline' });
    expect(f.onlineCount()).toBe(0);
  });

  it.runIf(available)('reconnects after a broker restart and republishes its state', async () => {
    const [b, f] = await boot();
    await b.restart();
    // The restarted broker keeps nothing, so retained state can only come from the stations again.
    observer = await MqttObserver.connect(b.url, ['stations/#']);
    await observer.waitFor((m) => m.topic === 'stations/S-1/status' && m.json.status === 'online', 'S-1 back online', 10_000);
    await observer.waitFor((m) => m.topic === 'stations/S-2/status' && m.json.status === 'online', 'S-2 back online', 10_000);
    const late = await MqttObserver.connect(b.url, ['stations/S-1/status']);
    const status = await late.waitFor(() => true, 'the retained status of S-1');
    await late.close();
    expect(status.retain).toBe(true);
    expect(status.json.status).toBe('online');
    await observer.waitFor((m) => m.topic === 'stations/S-2/locks/A/state', 'S-2 lock state back', 10_000);
    await observer.publish('stations/S-2/locks/A/unlock', { commandId: 'after-restart' });
    const ack = await observer.waitFor((m) => m.topic === 'stations/S-2/acks' && m.json?.commandId === 'after-restart', 'an ack after the restart');
    expect(ack.json.accepted).toBe(true);
    expect(f.onlineCount()).toBe(2);
  }, 20_000);
});
