/**
 * The client side of docs/mqtt-security.md against a real Mosquitto: stations (lean client) and
 * mqtt.js over mqtts:// with their own certificates, over ws:// with passwords from the environment
 * and from files, over wss://; and each certificate failure as its own one-line error that never
 * holds a password.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { MqttClient } from 'mqtt';
import { mosquittoAvailable } from '../helpers/mosquitto.js';
import { makeTestPki, startTlsMosquitto, type TestPki, type TlsMosquitto } from '../helpers/tls-mosquitto.js';
import { loadIdentities, type IdentitiesOptions, type MqttIdentities } from '../../src/mqtt/identity.js';
import { createMqttClient, createSession, firstConnect, type MqttTransport } from '../../src/mqtt/transport.js';
import type { MqttSession } from '../../src/mqtt/lean-client/index.js';
import { StationClient } from '../../src/mqtt/station-client.js';
import { parseFixture } from '../../src/fixture/load-fixture.js';
import { ManualClock } from '../../src/shared/clock.js';
import { seededRandom } from '../../src/station/random.js';
import { SimError } from '../../src/errors.js';
import { eventually } from '../helpers/eventually.js';

const ENV_SECRET = 'env-secret-Zq81';
const FILE_SECRET = 'file-secret-Wp22';

describe.skipIf(!mosquittoAvailable())('MQTT over TLS and WebSocket, against Mosquitto', () => {
  let pki: TestPki;
  let broker: TlsMosquitto;
  let fixtureSource: string;
  const open: (MqttSession | MqttClient)[] = [];
  const stations: StationClient[] = [];

  beforeAll(async () => {
    pki = await makeTestPki();
    fixtureSource = join(pki.dir, 'fixture.json');
    // The `certs` folder layout of docs/mqtt-security.md, made with openssl here.
    await pki.client('S1', { stem: 'certs/stations/S1' });
    await pki.client('S2', { stem: 'certs/stations/S2' });
    await pki.client('S9', { stem: 'certs/stations/S9', byOtherCa: true });
    await pki.client('station-sim-service', { stem: 'certs/service' });
    await pki.client('station-sim-control', { stem: 'certs/control' });
    await pki.client('station-sim-agent', { stem: 'certs/agent' });
    await mkdir(join(pki.dir, 'secrets'), { mode: 0o755 });
    await writeFile(join(pki.dir, 'secrets', 'S2.pass'), `${FILE_SECRET}\nignored second line\n`);
    broker = await startTlsMosquitto(pki, { users: { S1: ENV_SECRET, S2: FILE_SECRET } });
  }, 60_000);

  afterAll(async () => {
    for (const station of stations) await station.stop().catch(() => undefined);
    for (const client of open) await client.endAsync(true).catch(() => undefined);
    await broker?.stop();
    if (pki) await rm(pki.dir, { recursive: true, force: true });
  });

  const identities = (options: Partial<IdentitiesOptions> = {}): Promise<MqttIdentities> =>
    loadIdentities({ settings: { certs: 'certs', tls: { ca: 'ca.crt' } }, fixtureSource, secure: true, ...options });

  /** A lean session, connected (or the error of its first connection). */
  async function session(url: string, identity: Awaited<ReturnType<MqttIdentities['station']>>, tls: MqttIdentities['tls']): Promise<MqttSession> {
    const transport: MqttTransport = { kind: 'tcp', url, tls };
    const client = createSession(transport, { ...identity, reconnectPeriod: 0, keepalive: 10 });
    open.push(client);
    await firstConnect(client, transport);
    return client;
  }

  /** Subscribes to `topic`, publishes on it at QoS 1 (resolving on the PUBACK) and returns what came back. */
  async function roundTrip(client: MqttSession, topic: string): Promise<string> {
    const received = new Promise<string>((resolve) => client.on('message', (_topic, payload) => resolve(payload.toString())));
    const granted = await client.subscribeAsync({ [topic]: { qos: 1 } });
    expect(granted).toEqual([{ topic, qos: 1 }]);
    await client.publishAsync(topic, 'hello', { qos: 1 });
    return received;
  }

  it('connects a station over mqtts:// with its own certificate (read when it connects) and exchanges a QoS 1 publication', async () => {
    const ids = await identities();
    const identity = await ids.station('S1');
    expect(identity).toMatchObject({ clientId: 'station-sim-S1', username: 'S1' });
    expect(typeof identity.clientCert).toBe('function');
    const client = await session(broker.mqttsUrl, identity, ids.tls);
    expect(await roundTrip(client, 'test/S1/tls')).toBe('hello');
  });

  it('runs a station over mqtts:// and the service identity reads its retained status with mqtt.js', async () => {
    const ids = await identities();
    const [config] = parseFixture({ defaults: { heartbeatMs: 0 }, stations: [{ token: 'S2', stationId: 2, locks: [{ lockId: '1' }] }] }).stations;
    const transport: MqttTransport = { kind: 'tcp', url: broker.mqttsUrl, tls: ids.tls };
    const station = new StationClient({ config: config!, transport, identity: await ids.station('S2'), clock: new ManualClock(), random: seededRandom(1) });
    stations.push(station);
    await station.start();
    expect(station.connected).toBe(true);

    const service = await ids.service();
    expect(service.clientId).toMatch(/^station-sim-api-[0-9a-f]{8}$/);
    const observer = createMqttClient(transport, { ...service, reconnectPeriod: 0 });
    open.push(observer);
    await firstConnect(observer, transport);
    const statuses: string[] = [];
    observer.on('message', (topic, payload) => {
      if (topic.includes('S2') && topic.endsWith('status')) statuses.push(payload.toString());
    });
    await observer.subscribeAsync('#', { qos: 1 });
    await eventually(() => statuses.length > 0, { timeout: 5000, what: "the station's retained status" });
    expect(JSON.parse(statuses[0]!)).toMatchObject({ status: 'online' });
  });

  it('leaves the retained offline record of a station that starts offline, with its own certificate', async () => {
    const ids = await identities();
    const [config] = parseFixture({ defaults: { heartbeatMs: 0 }, stations: [{ token: 'S1', stationId: 1, initialStatus: 'offline', locks: [{ lockId: '1' }] }] }).stations;
    const transport: MqttTransport = { kind: 'tcp', url: broker.mqttsUrl, tls: ids.tls };
    const station = new StationClient({ config: config!, transport, identity: await ids.station('S1'), clock: new ManualClock(), random: seededRandom(1) });
    await station.start();
    expect(station.connected).toBe(false);
  });

  it('fails the connection of a station whose certificate file is missing, naming the file', async () => {
    const ids = await identities();
    const transport: MqttTransport = { kind: 'tcp', url: broker.mqttsUrl, tls: ids.tls };
    const client = createSession(transport, { ...(await ids.station('S7')), reconnectPeriod: 0 });
    await expect(firstConnect(client, transport)).rejects.toMatchObject({
      code: 'MQTT_CREDENTIALS',
      message: `Cannot read the certificate of station S7: ${join(pki.dir, 'certs', 'stations', 'S7.crt')} (ENOENT)`,
    });
  });

  it('connects over ws:// with each station its password, from the environment and from a file', async () => {
    const ids = await loadIdentities({
      settings: { identities: { station: { password: { env: 'PW_{token}' } } } },
      fixtureSource,
      env: { PW_S1: ENV_SECRET },
    });
    const fromEnv = await ids.station('S1');
    expect(fromEnv).toMatchObject({ clientId: 'station-sim-S1', username: 'S1', password: ENV_SECRET });
    expect(await roundTrip(await session(broker.wsUrl, fromEnv, ids.tls), 'test/S1/ws')).toBe('hello');

    const fileIds = await loadIdentities({ settings: { identities: { station: { password: { file: 'secrets/{token}.pass' } } } }, fixtureSource });
    const fromFile = await fileIds.station('S2');
    expect(fromFile.password).toBe(FILE_SECRET);
    expect(await roundTrip(await session(broker.wsUrl, fromFile, fileIds.tls), 'test/S2/ws')).toBe('hello');
  });

  it('connects over wss:// with a client certificate', async () => {
    const ids = await identities();
    expect(await roundTrip(await session(broker.wssUrl, await ids.station('S1'), ids.tls), 'test/S1/wss')).toBe('hello');
  });

  it('connects mqtt.js over wss:// and ws:// as well', async () => {
    const ids = await identities();
    const control = await ids.control();
    expect(control).toMatchObject({ username: 'station-sim-control' });
    const wss: MqttTransport = { kind: 'tcp', url: broker.wssUrl, tls: ids.tls };
    const overWss = createMqttClient(wss, { ...control, reconnectPeriod: 0 });
    open.push(overWss);
    await firstConnect(overWss, wss);

    const ws: MqttTransport = { kind: 'tcp', url: broker.wsUrl };
    const overWs = createMqttClient(ws, { clientId: 'mqttjs-ws', username: 'S1', password: ENV_SECRET, reconnectPeriod: 0 });
    open.push(overWs);
    await firstConnect(overWs, ws);
    expect(overWs.connected && overWss.connected).toBe(true);
  });

  /** The error of a first connection that must fail, from the lean client and from mqtt.js. */
  async function failures(url: string, ids: MqttIdentities, token = 'S1'): Promise<SimError[]> {
    const transport: MqttTransport = { kind: 'tcp', url, tls: ids.tls };
    const [station, service] = [await ids.station(token), await ids.service()];
    // firstConnect listens from the moment a client exists: an await in between could let a fast
    // handshake fail before anyone listens (its error lost, or the start never settling).
    const lean = createSession(transport, { ...station, reconnectPeriod: 0 });
    const viaMqttJs = createMqttClient(transport, { ...service, reconnectPeriod: 0 });
    const errors = await Promise.all([firstConnect(lean, transport), firstConnect(viaMqttJs, transport)].map((connecting) => connecting.then(() => undefined, (error: unknown) => error)));
    return errors.map((error) => {
      expect(error).toBeInstanceOf(SimError);
      return error as SimError;
    });
  }

  it('says a broker certificate from an unknown CA is not trusted, naming the broker and --broker-ca', async () => {
    // No CA given: the system CAs, which do not know the test CA.
    const ids = await loadIdentities({ settings: { certs: 'certs' }, fixtureSource, secure: true, overrides: { ca: pki.otherCa } });
    for (const error of await failures(broker.mqttsUrl, ids)) {
      expect(error.code).toBe('BROKER_CERTIFICATE');
      expect(error.message).toMatch(new RegExp(`^The MQTT broker at ${broker.mqttsUrl} has a certificate this machine does not trust \\(.+\\): give its CA with --broker-ca$`));
    }
  });

  it('says the broker certificate has expired', async () => {
    for (const error of await failures(broker.expiredUrl, await identities())) {
      expect(error.code).toBe('BROKER_CERTIFICATE');
      expect(error.message).toBe(`The MQTT broker at ${broker.expiredUrl} has a certificate that has expired: renew the broker's certificate (or check this machine's clock)`);
    }
  });

  it('says the broker certificate is for another host name', async () => {
    for (const error of await failures(broker.mqttsUrl, await identities({ overrides: { servername: 'localhost' } }))) {
      expect(error.code).toBe('BROKER_CERTIFICATE');
      expect(error.message).toMatch(new RegExp(`^The MQTT broker at ${broker.mqttsUrl} has a certificate for another host name \\(.*localhost.*\\): connect by a name it carries, or give it with --broker-servername$`));
    }
  });

  it('says the broker refused a client certificate it does not trust', async () => {
    const ids = await identities();
    const transport: MqttTransport = { kind: 'tcp', url: broker.mqttsUrl, tls: ids.tls };
    const lean = await firstConnect(createSession(transport, { ...(await ids.station('S9')), reconnectPeriod: 0 }), transport).then(
      () => undefined,
      (error: SimError) => error,
    );
    expect(lean!.code).toBe('BROKER_REFUSED');
    expect(lean!.message).toMatch(new RegExp(`^The MQTT broker at ${broker.mqttsUrl} refused the client certificate \\(TLS alert: [a-z ]+\\)$`));
  });

  it('never shows a password: a wrong one is refused, a missing variable or file is named', async () => {
    const transport: MqttTransport = { kind: 'tcp', url: broker.wsUrl };
    const wrong = createSession(transport, { clientId: 'station-sim-S1', username: 'S1', password: `${ENV_SECRET}-wrong`, reconnectPeriod: 0 });
    const refused = await firstConnect(wrong, transport).then(() => undefined, (error: SimError) => error);
    expect(refused).toMatchObject({ code: 'BROKER_REFUSED' });
    expect(refused!.message).not.toContain(ENV_SECRET);

    const noVariable = loadIdentities({ settings: { identities: { station: { password: { env: 'PW_{token}' } } } }, fixtureSource, env: {} });
    await expect((await noVariable).station('S1')).rejects.toThrow(
      new SimError('MQTT_CREDENTIALS', 'The MQTT password of station S1 is in the environment variable PW_S1, which is not set'),
    );
    const noFile = await loadIdentities({ settings: { identities: { station: { password: { file: 'secrets/{token}.pass' } } } }, fixtureSource });
    const missing = await noFile.station('S7').then(() => undefined, (error: SimError) => error);
    expect(missing).toMatchObject({ code: 'MQTT_CREDENTIALS', message: `Cannot read the MQTT password of station S7: ${join(pki.dir, 'secrets', 'S7.pass')} (ENOENT)` });
    // What is in the password files never shows either.
    const present = await noFile.station('S2');
    expect(JSON.stringify({ ...present, password: undefined })).not.toContain(FILE_SECRET);
  });
});
