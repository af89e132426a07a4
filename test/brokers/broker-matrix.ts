/**
 * The broker matrix (docs/brokers.md): the fleet (`station-sim stations`), the `/v1` API
 * (`station-sim api`) and the judge, each in the process a user would run, against one broker the
 * test starts. Each broker's test file calls `describeBrokerMatrix` once; where a broker does a
 * thing differently, the test asserts what docs/brokers.md says it does (broker-traits.ts), so a
 * difference is never a skip.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type StationSimClient } from '../../src/client/index.js';
import { startSimulator } from '../../src/simulator/start-simulator.js';
import { CliProcess } from '../helpers/cli-process.js';
import { eventually } from '../helpers/eventually.js';
import { MqttObserver } from '../helpers/mqtt-observer.js';
import { brokerAvailable, startMatrixBroker, type BrokerName, type MatrixBroker } from '../helpers/brokers.js';
import { makeTestPki, type TestPki } from '../helpers/tls-mosquitto.js';
import { BROKER_TRAITS, BY_HAND, PAYLOAD_SIZES } from './broker-traits.js';
import { probeClientIds, probeMaxPayload, probeMqtt5, probeQos2, probeRedelivery, probeRetained, probeRetainedAcrossRestart } from './broker-probes.js';

const EMAIL = 'matrix@example.com';
const PASSWORD = 'matrix-password';
/** A queued command older than this when its station comes back is refused `expired`. */
const QUEUE_TTL_MS = 1500;

/** A small fleet: a plain station, a jammed lock, two persistent sessions, four more stations. */
export function matrixFixture(prefix: string): object {
  const token = (name: string): string => `${prefix}-${name}`;
  const listed = ['1', 'JAMMED', 'QUEUE', 'DUP'].map(token);
  const fleet = Array.from({ length: 4 }, (_, i) => token(`F-${i + 1}`));
  return {
    description: 'The broker matrix: fast locks, heartbeats every second, 2 s keepalive.',
    seed: 27,
    defaults: {
      unlockDelayMs: { min: 20, max: 50 },
      relockMs: 200,
      // With a broker that keeps retained messages from wildcard subscriptions (RabbitMQ), the
      // heartbeat is how the API learns a station is online.
      heartbeatMs: 1000,
      keepaliveSeconds: 2,
      battery: { drainPerUnlockV: 0, drainPerHourV: 0 },
    },
    api: { commandTimeoutMs: 2000, loginThrottle: { enabled: false } },
    accounts: [{ email: EMAIL, password: PASSWORD, stations: [...listed, ...fleet] }],
    stations: [
      { token: token('1'), stationId: 1, locks: [{ lockId: '1' }, { lockId: '2' }] },
      { token: token('JAMMED'), stationId: 2, locks: [{ lockId: '1', status: 'jammed' }] },
      { token: token('QUEUE'), stationId: 3, locks: [{ lockId: '1' }], behaviour: { session: 'persistent', commandTtlMs: QUEUE_TTL_MS } },
      { token: token('DUP'), stationId: 4, locks: [{ lockId: '1' }, { lockId: '2' }], behaviour: { session: 'persistent' } },
    ],
    fleets: [{ count: 4, tokenPattern: `${prefix}-F-{n}`, firstStationId: 100, locksPerStation: 1 }],
  };
}

const STATION_COUNT = 8;

function command(): { commandId: string; sentAt: string } {
  return { commandId: randomUUID(), sentAt: new Date().toISOString() };
}

export function describeBrokerMatrix(name: BrokerName): void {
  const traits = BROKER_TRAITS[name];
  const prefix = `M${name.slice(0, 3).toUpperCase()}`;
  const token = (what: string): string => `${prefix}-${what}`;

  describe.runIf(brokerAvailable(name))(`the fleet, /v1 and the judge against ${traits.server}`, () => {
    let pki: TestPki;
    let broker: MatrixBroker;
    let dir: string;
    let fixture: string;
    let stations: CliProcess;
    let api: CliProcess;
    let controlUrl: string;
    let user: StationSimClient;
    let observer: MqttObserver;

    const startStations = async (): Promise<Record<string, any>> => {
      stations = new CliProcess(['stations', '--broker', broker.url, '--fixture', fixture, '--json']);
      return stations.readyJson(60_000);
    };
    const control = (path: string, body?: object): Promise<Response> =>
      fetch(`${controlUrl}${path}`, body ? { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {});
    const statusOf = async (station: string): Promise<string> => (await user.getStation(station)).status;

    beforeAll(async () => {
      pki = await makeTestPki();
      dir = await mkdtemp(join(tmpdir(), `matrix-${name}-`));
      fixture = join(dir, 'fixture.json');
      await writeFile(fixture, JSON.stringify(matrixFixture(prefix)));
      broker = await startMatrixBroker(name, pki);
      expect((await startStations()).online).toBe(STATION_COUNT);
      api = new CliProcess(['api', '--broker', broker.url, '--fixture', fixture, '--http-port', '0', '--json']);
      const ready = await api.readyJson(60_000);
      controlUrl = ready.controlUrl;
      user = createClient({ baseUrl: ready.apiUrl, email: EMAIL, password: PASSWORD });
      observer = await MqttObserver.connect(broker.url, [`stations/+/acks`, `stations/+/locks/+/state`, `stations/+/status`]);
      // The API knows a station once it has its status: from the retained record, or (on a broker
      // that keeps retained messages from wildcard subscriptions) its next heartbeat.
      // Every station, not only the first: on RabbitMQ each one is known only from its own heartbeat,
      // up to a second apart, and a test that unlocks one the API has not heard from yet gets
      // "Station is offline".
      const everyStation = ['1', 'JAMMED', 'QUEUE', 'DUP', 'F-1', 'F-2', 'F-3', 'F-4'].map(token);
      await eventually(async () => expect(await Promise.all(everyStation.map(statusOf))).toEqual(everyStation.map(() => 'online')), { timeout: 15_000, what: 'the API to see the whole fleet' });
    }, 150_000);

    afterAll(async () => {
      await observer?.close();
      await api?.signal('SIGTERM');
      await stations?.signal('SIGTERM');
      await broker?.stop();
      if (dir) await rm(dir, { recursive: true, force: true });
      if (pki) await rm(pki.dir, { recursive: true, force: true });
    }, 60_000);

    it('unlocks a lock: accepted, then unlocked, then locked again; the judge finds nothing', async () => {
      const before = new Date().toISOString();
      expect(await user.unlock(token('1'), '1')).toEqual({ success: true });
      // The lock is open for 200 ms: its retained state messages say so, where a poll could miss it.
      const state = `stations/${token('1')}/locks/1/state`;
      const opened = await observer.waitFor((m) => m.topic === state && m.json?.status === 'unlocked' && m.json.lastUpdated >= before, 'the lock to open', 10_000);
      await observer.waitFor((m) => m.topic === state && m.json?.status === 'locked' && m.json.lastUpdated >= opened.json.lastUpdated, 'the lock to close again', 10_000);
      await eventually(async () => expect((await user.getStation(token('1'))).locks[0]).toMatchObject({ status: 'locked', lastUpdated: expect.any(String) }));
      const judge = await (await control('/judge')).json();
      expect(judge.summary).toEqual({});
    });

    it('answers an unlock of a jammed lock with the station’s refusal', async () => {
      expect(await user.unlock(token('JAMMED'), '1')).toEqual({ success: false, message: 'Lock is jammed' });
    });

    it('queues a command for a persistent session that is away; back after its TTL, the station refuses it and the judge says why', async () => {
      const queue = token('QUEUE');
      expect((await control(`/stations/${queue}/connection`, { online: false })).status).toBe(200);
      await eventually(async () => expect(await statusOf(queue)).toBe('offline'));
      // A backend that ignores the offline status: the API itself would refuse (Station is offline).
      const late = command();
      await observer.publish(`stations/${queue}/locks/1/unlock`, late);
      await new Promise((resolve) => setTimeout(resolve, QUEUE_TTL_MS + 300)); // the TTL has to run out: time must pass
      expect((await control(`/stations/${queue}/connection`, { online: true })).status).toBe(200);
      const ack = await observer.waitFor((m) => m.topic === `stations/${queue}/acks` && m.json?.commandId === late.commandId, 'the queued command’s ack', 15_000);
      expect(ack.json).toMatchObject({ accepted: false, reason: 'expired', lockId: '1' });
      expect((await user.getStation(queue)).locks[0]?.status).toBe('locked');
      await eventually(async () => expect((await (await control('/judge')).json()).summary).toMatchObject({ 'service.stale-sent-at': 1 }), { what: 'the judge’s finding' });
    });

    it('QoS 1 redelivery: the broker sends an unacknowledged command again; a station acks a repeat and carries it out once', async () => {
      expect(await probeRedelivery(broker.url)).toEqual(traits.redelivery);
      const dup = token('DUP');
      const repeated = command();
      const unlock = `stations/${dup}/locks/1/unlock`;
      await observer.client.publishAsync(unlock, JSON.stringify(repeated), { qos: 1 });
      await observer.client.publishAsync(unlock, JSON.stringify(repeated), { qos: 1, dup: true });
      const acks = (): unknown[] => observer.messages.filter((m) => m.topic === `stations/${dup}/acks` && m.json?.commandId === repeated.commandId).map((m) => m.json);
      await eventually(() => expect(acks()).toHaveLength(2), { what: 'an ack for each copy' });
      expect(acks()).toEqual([expect.objectContaining({ accepted: true }), expect.objectContaining({ accepted: true })]);
      // A later command to the other lock, carried out after both copies: when it has run its course,
      // any second opening of lock 1 would have been reported before it.
      const later = command();
      await observer.publish(`stations/${dup}/locks/2/unlock`, later);
      await observer.waitFor((m) => m.topic === `stations/${dup}/locks/2/state` && m.json?.status === 'locked' && m.json.lastUpdated > later.sentAt, 'lock 2 to open and close', 10_000);
      const opened = observer.messages.filter((m) => m.topic === `stations/${dup}/locks/1/state` && m.json?.status === 'unlocked' && m.json.lastUpdated >= repeated.sentAt);
      expect(opened).toHaveLength(1);
      const judge = await (await control('/judge')).json();
      expect(judge.summary['service.command-id-reused']).toBeUndefined();
    });

    it('marks every station offline by its last will when the fleet process is killed', async () => {
      expect(traits.will).toBe(true);
      await stations.signal('SIGKILL');
      await eventually(async () => expect(await statusOf(token('1'))).toBe('offline'), { timeout: 15_000, what: 'the will of a killed station' });
      expect(await user.unlock(token('1'), '1')).toEqual({ success: false, message: 'Station is offline' });
      await observer.waitFor((m) => m.topic === `stations/${token('F-4')}/status` && m.json?.status === 'offline', 'the will of the last station', 10_000);
    });

    it('brings the fleet back after a restart, its retained state there for a new subscriber as the broker keeps it', async () => {
      expect((await startStations()).online).toBe(STATION_COUNT);
      await eventually(async () => expect(await statusOf(token('1'))).toBe('online'), { timeout: 15_000 });
      expect(await user.unlock(token('1'), '2')).toEqual({ success: true });
      // A new subscriber (a dashboard, another API process) reads the fleet from the retained records.
      const fresh = await MqttObserver.connect(broker.url, ['stations/+/status']);
      try {
        const retained = (): string[] => [...new Set(fresh.messages.filter((m) => m.retain).map((m) => m.topic))];
        if (traits.retainedOnWildcard) {
          await eventually(() => expect(retained()).toHaveLength(STATION_COUNT), { what: 'every station’s retained status' });
        } else {
          // Nothing comes from the wildcard subscription; the exact topic's record, asked for after
          // it, closes the wait (RabbitMQ answers subscriptions in order).
          await fresh.client.subscribeAsync(`stations/${token('1')}/status`, { qos: 1 });
          await fresh.waitFor((m) => m.topic === `stations/${token('1')}/status` && m.retain, 'the retained status by its exact topic', 10_000);
          expect(retained()).toEqual([`stations/${token('1')}/status`]);
        }
      } finally {
        await fresh.close();
      }
      expect(await probeRetained(broker.url)).toEqual({ exact: true, wildcard: traits.retainedOnWildcard });
    });

    it('runs the fleet and /v1 over TLS', async () => {
      expect(traits.tls).toBe(true);
      const tlsFixture = join(dir, 'tls-fixture.json');
      await writeFile(tlsFixture, JSON.stringify(matrixFixture(`${prefix}TLS`)));
      const sim = await startSimulator({ fixture: tlsFixture, broker: broker.tlsUrl, brokerTls: { ca: pki.ca } });
      try {
        expect(sim.mqttUrl).toBe(broker.tlsUrl);
        const overTls = createClient({ baseUrl: sim.apiUrl, email: EMAIL, password: PASSWORD });
        await eventually(async () => expect((await overTls.getStation(`${prefix}TLS-1`)).status).toBe('online'), { timeout: 15_000 });
        expect(await overTls.unlock(`${prefix}TLS-1`, '1')).toEqual({ success: true });
      } finally {
        await sim.stop();
      }
    }, 60_000);

    it('measures what differs between brokers: QoS 2, client ids, packet size, MQTT 5, retained storage', async () => {
      expect(await probeQos2(broker.url)).toMatchObject({ granted: traits.qos2Granted, publish: traits.qos2Publish });
      expect(await probeClientIds(broker.url)).toEqual(traits.clientIds);
      expect(await probeMaxPayload(broker.url, PAYLOAD_SIZES)).toBe(traits.maxPayloadBytes);
      expect(await probeMqtt5(broker.url)).toBe(traits.mqtt5);
      if (broker.restart) expect(await probeRetainedAcrossRestart(broker.url, broker.restart)).toBe(traits.retainedAfterRestart);
      else expect(traits.retainedAfterRestart).toBe(BY_HAND);
    }, 60_000);
  });
}
