/**
 * The whole simulator against a broker we did not write, Mosquitto 2 configured as
 * docs/mqtt-security.md says production should be (TLS with `require_certificate`,
 * `use_identity_as_username`, the ACL file, the CRL), and against the embedded broker secured by
 * the same fixture (its TLS listener), both with certificates from `station-sim certs`. On each,
 * every station connects over TLS with its own certificate, unlocks go end to end through `/v1`,
 * a station's identity cannot change another station's state, a revoked station is refused, and a
 * wrong CA, a wrong host name and an expired certificate each fail with their own message.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateTestPki, revokeStation } from '../../src/certs/test-pki.js';
import { embeddedBrokerSettings } from '../../src/broker/broker-settings.js';
import { startEmbeddedBroker } from '../../src/broker/embedded-broker.js';
import { loadFixture } from '../../src/fixture/load-fixture.js';
import { startSimulator } from '../../src/simulator/start-simulator.js';
import { startTestSimulator, type TestSimulator } from '../../src/testing/test-simulator.js';
import { eventually } from '../helpers/eventually.js';
import { mosquittoAvailable, startProductionMosquitto, type ProductionMosquitto } from '../helpers/production-mosquitto.js';
import { makeExpiredStationCert, makeForeignCaStationCert } from '../helpers/test-pki.js';

const TOKENS = ['PM-1', 'PM-2', 'PM-3'];
const PASSWORD = 'pm-account-password';

/** A broker requiring client certificates, as each kind is started for these tests. */
interface SecuredBroker {
  /** mqtts:// URL of the listener that requires a client certificate. */
  url: string;
  /**
   * How it refuses an expired client certificate: Mosquitto at the TLS handshake, the embedded
   * broker (which takes password clients on the same TLS listener) with CONNACK 5.
   */
  expiredRefusal: RegExp;
  /** After a revocation: the URL of a listener that has read the new CRL. */
  afterRevocation(): Promise<string>;
  stop(): Promise<void>;
}

const brokers: { name: string; available: boolean; start: (certsDir: string, fixture: string) => Promise<SecuredBroker> }[] = [
  {
    name: 'Mosquitto configured as production',
    available: mosquittoAvailable(),
    start: async (certsDir) => {
      const mosquitto: ProductionMosquitto = await startProductionMosquitto({ certsDir });
      return {
        url: mosquitto.certificateUrl,
        expiredRefusal: /^The MQTT broker at mqtts:\/\/127\.0\.0\.1:\d+ refused the client certificate \(TLS alert: certificate expired\)$/,
        afterRevocation: async () => {
          await mosquitto.reload();
          return mosquitto.certificateUrl;
        },
        stop: () => mosquitto.stop(),
      };
    },
  },
  {
    name: 'the embedded broker secured by the fixture',
    available: true,
    start: async (_certsDir, fixture) => {
      const { settings } = embeddedBrokerSettings(await loadFixture(fixture), { host: '127.0.0.1', tlsPort: 0 });
      const embedded = await startEmbeddedBroker({ port: 0, host: '127.0.0.1', ...settings });
      return {
        url: embedded.tlsUrl!,
        expiredRefusal: /^The MQTT broker at mqtts:\/\/127\.0\.0\.1:\d+ refused the connection: Not authorized$/,
        // It watches its CRL: the same listener refuses the revoked station within a second or so.
        afterRevocation: async () => embedded.tlsUrl!,
        stop: () => embedded.stop(),
      };
    },
  },
];

describe.each(brokers)('the simulator on $name', ({ available, start }) => {
  if (!available) return;
  let dir: string;
  let certsDir: string;
  let fixture: string;
  let broker: SecuredBroker;
  let simulator: TestSimulator;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'production-mosquitto-sim-'));
    certsDir = join(dir, 'certs');
    await generateTestPki({ dir: certsDir, tokens: TOKENS });
    fixture = join(dir, 'fixture.json');
    await writeFile(
      fixture,
      JSON.stringify({
        api: { loginThrottle: { enabled: false } },
        accounts: [{ email: 'pm@example.com', password: PASSWORD, stations: TOKENS }],
        stations: TOKENS.map((token, index) => ({ token, stationId: 700 + index, locks: [{ lockId: '1' }, { lockId: '2' }, { lockId: '3' }], behaviour: { unlockDelayMs: 20, relockMs: 10_000 } })),
        mqtt: { certs: './certs' },
      }),
    );
    broker = await start(certsDir, fixture);
    simulator = await startTestSimulator({ fixture, broker: broker.url });
  }, 120_000);

  afterAll(async () => {
    await simulator?.stop();
    await broker?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('connects every station with its own certificate, and every unlock works end to end through /v1', async () => {
    const client = await simulator.login('pm@example.com');
    for (const token of TOKENS) {
      const station = await client.getStation(token);
      expect(station.status).toBe('online');
      for (const lockId of ['1', '2']) expect(await client.unlock(token, lockId)).toEqual({ success: true });
    }
    for (const token of TOKENS) await simulator.waitForLock(token, '2', 'unlocked');
  });

  it("refuses a station's identity on another station's topics: the state the API serves does not change", async () => {
    const pki = (name: string) => readFile(join(certsDir, name));
    const intruder = await mqtt.connectAsync(
      broker.url,
      { ca: await pki('ca.crt'), cert: await pki('stations/PM-1.crt'), key: await pki('stations/PM-1.key'), clientId: 'station-sim-PM-1', reconnectPeriod: 0, protocolVersion: 4 },
      false,
    );
    intruder.on('error', () => undefined);
    const closed = new Promise<void>((resolve) => intruder.once('close', () => resolve()));
    // Mosquitto acknowledges and drops what its ACL refuses; the embedded broker closes the connection.
    const attempt = (topic: string, payload: unknown, retain: boolean) =>
      Promise.race([intruder.publishAsync(topic, JSON.stringify(payload), { qos: 1, retain }).catch(() => undefined), closed]);
    try {
      const fake = { stationId: 6666, status: 'offline', batteryVoltage: 99.9, lastConnection: new Date().toISOString() };
      await attempt('stations/PM-2/status', fake, true);
      await attempt('stations/PM-2/acks', { commandId: 'x', accepted: true }, false);
      // A publication of its own goes through: once the API sees it, the intruder's earlier ones had their chance.
      const client = await simulator.login('pm@example.com');
      const before = await client.getStation('PM-2');
      expect(before.status).toBe('online');
      expect(before.batteryVoltage).not.toBe(99.9);
      // The broker drops what the ACL refuses; an unlock of PM-2 still runs through PM-2 itself.
      expect(await client.unlock('PM-2', '1')).toEqual({ success: true });
    } finally {
      await intruder.endAsync(true);
    }
  });

  it("keeps a station's identity off other stations' commands, the control topics and their traffic, and refuses an oversized packet", async () => {
    const pki = (name: string) => readFile(join(certsDir, name));
    const options = { ca: await pki('ca.crt'), cert: await pki('stations/PM-1.crt'), key: await pki('stations/PM-1.key'), clientId: 'station-sim-PM-1', reconnectPeriod: 0, protocolVersion: 4 as const };
    const intruder = await mqtt.connectAsync(broker.url, options, false);
    intruder.on('error', () => undefined);
    const seen: string[] = [];
    intruder.on('message', (topic) => seen.push(topic));
    let closed = false;
    const closedOnce = new Promise<void>((resolve) => intruder.once('close', () => { closed = true; resolve(); }));
    const attempt = (topic: string, payload: unknown) =>
      Promise.race([intruder.publishAsync(topic, JSON.stringify(payload), { qos: 1 }).catch(() => undefined), closedOnce]);
    try {
      // Reading everything: Mosquitto grants the filter and delivers nothing its ACL refuses; the
      // embedded broker checks at delivery too (or refuses the filter).
      await Promise.race([intruder.subscribeAsync(['#', 'stations/PM-2/#', 'station-sim/#'], { qos: 1 }).catch(() => undefined), closedOnce]);
      // Opening another station's lock, and driving the fleet through the control topics.
      await attempt('stations/PM-2/locks/3/unlock', { commandId: 'intruder-1', sentAt: new Date().toISOString() });
      await attempt('station-sim/control/PM-2', { requestId: 'intruder2', action: 'connection', online: false });
      await attempt('station-sim/control/PM-2', { requestId: 'intruder3', action: 'physical', lockId: '3', physical: 'forceOpen' });
      await attempt('station-sim/fleet', { requestId: 'intruder4', action: 'reset' });

      // What the broker had let through reached PM-2 before the unlock the API now sends to it.
      const client = await simulator.login('pm@example.com');
      expect(await client.unlock('PM-2', '2')).toEqual({ success: true });
      await simulator.waitForLock('PM-2', '2', 'unlocked');
      const station = await client.getStation('PM-2');
      expect(station.status).toBe('online');
      expect(station.locks.find((lock) => lock.lockId === '3')?.status).toBe('locked');
      // The traffic of PM-2's unlock was not delivered to PM-1's identity, nor were the control topics.
      expect(seen.filter((topic) => !topic.startsWith('stations/PM-1/'))).toEqual([]);

      // A packet over the brokers' limit (64 KiB, docs/mosquitto/station-sim.conf) ends the connection.
      if (!closed) {
        intruder.publish('stations/PM-1/status', Buffer.alloc(70_000, 0x20), { qos: 0 });
        await closedOnce;
      }
      expect(closed).toBe(true);
    } finally {
      await intruder.endAsync(true).catch(() => undefined);
    }
  });

  it('refuses a revoked station once the broker reloads its CRL', async () => {
    const pki = (name: string) => readFile(join(certsDir, name));
    const options = {
      ca: await pki('ca.crt'),
      cert: await pki('stations/PM-3.crt'),
      key: await pki('stations/PM-3.key'),
      clientId: 'station-sim-PM-3',
      reconnectPeriod: 0,
      protocolVersion: 4 as const,
    };
    // Before: the certificate is good (this connection takes over PM-3's own session for a moment).
    await (await mqtt.connectAsync(broker.url, options, false)).endAsync();
    await revokeStation({ dir: certsDir, token: 'PM-3' });
    const url = await broker.afterRevocation();
    await eventually(async () => {
      await expect(mqtt.connectAsync(url, options, false)).rejects.toThrow();
    }, { what: 'the revoked certificate refused' });
  });

  it('fails to start against the wrong CA, the wrong host name or an expired certificate, each with its own message', async () => {
    const foreign = await makeForeignCaStationCert('PM-1', join(dir, 'foreign'));
    const wrongCa = startSimulator({ fixture, broker: broker.url, brokerTls: { ca: foreign.ca }, http: false });
    await expect(wrongCa).rejects.toThrow(/^The MQTT broker at mqtts:\/\/127\.0\.0\.1:\d+ has a certificate this machine does not trust \(.+\): give its CA with --broker-ca$/);

    const wrongHost = startSimulator({ fixture, broker: broker.url, brokerTls: { servername: 'not-the-broker.example' }, http: false });
    await expect(wrongHost).rejects.toThrow(/^The MQTT broker at mqtts:\/\/127\.0\.0\.1:\d+ has a certificate for another host name \(.*not-the-broker\.example.*\): connect by a name it carries, or give it with --broker-servername$/);

    const expiredDir = join(dir, 'expired');
    const expired = await makeExpiredStationCert(certsDir, 'PM-1', expiredDir);
    const expiredFixture = join(dir, 'expired-fixture.json');
    await writeFile(
      expiredFixture,
      JSON.stringify({
        stations: [{ token: 'PM-1', stationId: 700, locks: [{ lockId: '1' }] }],
        mqtt: { certs: './certs', identities: { station: { cert: expired.cert, key: expired.key } } },
      }),
    );
    const expiredStart = startSimulator({ fixture: expiredFixture, broker: broker.url, http: false });
    await expect(expiredStart).rejects.toThrow(broker.expiredRefusal);
  });
});
