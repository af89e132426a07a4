/**
 * The real Mosquitto 2, configured as docs/mqtt-security.md says production should be, with
 * certificates from `station-sim certs`, probed with raw mqtt.js clients: each station is held to
 * its own topics, the service's unlocks reach the station, and revoked, expired and foreign
 * certificates and wrong passwords are refused.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateTestPki, revokeStation } from '../../src/certs/test-pki.js';
import { eventually } from '../helpers/eventually.js';
import { MqttObserver } from '../helpers/mqtt-observer.js';
import { mosquittoAvailable, productionConfig, startProductionMosquitto, type ProductionMosquitto } from '../helpers/production-mosquitto.js';
import { makeExpiredStationCert, makeForeignCaStationCert } from '../helpers/test-pki.js';

const TOKENS = ['ST-A', 'ST-B', 'ST-REVOKED'];
const OBSERVER_PASSWORD = 'observer-test-password';
const STATION_PASSWORD = 'station-a-test-password';

describe.runIf(mosquittoAvailable())('Mosquitto configured as production, with certificates from station-sim certs', () => {
  let certsDir: string;
  let broker: ProductionMosquitto;
  const clients: MqttClient[] = [];

  beforeAll(async () => {
    certsDir = join(await mkdtemp(join(tmpdir(), 'certs-mosquitto-')), 'certs');
    await generateTestPki({ dir: certsDir, tokens: TOKENS });
    broker = await startProductionMosquitto({ certsDir, users: { 'station-sim-observer': OBSERVER_PASSWORD, 'ST-A': STATION_PASSWORD } });
  });

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.endAsync(true)));
    await broker?.stop();
  });

  const tls = (stem: string): IClientOptions => ({
    ca: readFileSync(join(certsDir, 'ca.crt')),
    cert: readFileSync(join(certsDir, `${stem}.crt`)),
    key: readFileSync(join(certsDir, `${stem}.key`)),
  });

  /** Connects once (no retries); rejects if the broker or TLS refuses. */
  async function connect(url: string, options: IClientOptions): Promise<MqttClient> {
    const client = await mqtt.connectAsync(url, { reconnectPeriod: 0, connectTimeout: 10_000, protocolVersion: 4, ...options }, false);
    clients.push(client);
    return client;
  }

  const station = (token: string, clientId = `station-sim-${token}`) => connect(broker.certificateUrl, { ...tls(`stations/${token}`), clientId });

  async function observer(filters: string[]): Promise<MqttObserver> {
    const seen = await MqttObserver.connect(broker.certificateUrl, filters, { ...tls('observer'), clientId: 'station-sim-observer', reconnectPeriod: 0 });
    clients.push(seen.client);
    return seen;
  }

  it('runs exactly the config and ACL docs/mqtt-security.md shows, ports and folder aside', async () => {
    const doc = await readFile('docs/mqtt-security.md', 'utf8');
    const section = doc.slice(doc.indexOf('## Mosquitto configured as production'));
    const blocks = [...section.matchAll(/```(\w+)\n([\s\S]*?)```/g)].map((match) => ({ lang: match[1], text: match[2] ?? '' }));
    const template = await readFile('docs/mosquitto/station-sim.conf', 'utf8');
    const acl = await readFile('docs/mosquitto/acl', 'utf8');
    expect(blocks.find((block) => block.text.startsWith('# Mosquitto 2.0 configured as production'))?.text).toBe(template);
    expect(blocks.find((block) => block.text.startsWith('# Mosquitto ACL for station-sim'))?.text).toBe(acl);
    const dir = /^cafile (.*)\/ca\.crt$/m.exec(broker.config)![1]!;
    const ports = [...broker.config.matchAll(/^listener (\d+) 127\.0\.0\.1$/gm)].map((match) => Number(match[1]));
    expect(broker.config).toBe(productionConfig(template, { dir, certificatePort: ports[0]!, passwordPort: ports[1]! }));
    expect(broker.config).toContain('require_certificate true\nuse_identity_as_username true\nuse_username_as_clientid true');
  });

  it('a station publishes its own status, which an observer sees, and not another station’s', async () => {
    const seen = await observer(['stations/+/status']);
    const a = await station('ST-A');
    await a.publishAsync('stations/ST-B/status', '{"spoofed":true}', { qos: 1 });
    await a.publishAsync('stations/ST-A/status', '{"own":true}', { qos: 1 });
    // Mosquitto delivers one publisher's messages in order: once the second is seen, the first
    // would have been seen before it had the broker let it through.
    await seen.waitFor((m) => m.topic === 'stations/ST-A/status', 'ST-A status');
    expect(seen.messages.map((m) => `${m.topic} ${m.payload}`)).toEqual(['stations/ST-A/status {"own":true}']);
  });

  it('the service sends an unlock the station receives; another station that subscribes to it receives nothing', async () => {
    const b = await station('ST-B');
    await b.subscribeAsync('stations/ST-B/locks/+/unlock', { qos: 1 });
    const spy = await station('ST-A');
    // Mosquitto 2.0's acl_file grants the subscription (SUBACK QoS 1, not 128) and checks each
    // message against the subscriber's read rights when it delivers it: the spy gets nothing.
    const granted = await spy.subscribeAsync(['stations/ST-B/locks/+/unlock', 'stations/ST-A/locks/+/unlock'], { qos: 1 });
    const spied: string[] = [];
    spy.on('message', (topic) => spied.push(topic));
    const received: string[] = [];
    b.on('message', (topic, payload) => received.push(`${topic} ${payload.toString()}`));

    const service = await connect(broker.certificateUrl, { ...tls('service'), clientId: 'station-sim-api-1' });
    await service.publishAsync('stations/ST-B/locks/1/unlock', '{"commandId":"c-1"}', { qos: 1 });
    await service.publishAsync('stations/ST-A/locks/2/unlock', '{"commandId":"c-2"}', { qos: 1 });
    await eventually(() => expect(received).toEqual(['stations/ST-B/locks/1/unlock {"commandId":"c-1"}']), { what: 'the unlock at ST-B' });
    await eventually(() => expect(spied).toContain('stations/ST-A/locks/2/unlock'), { what: 'the later unlock at ST-A' });
    expect(granted.map((grant) => grant.qos === 128 || spied.every((topic) => !topic.startsWith('stations/ST-B/')))).toEqual([true, true]);
    expect(spied).toEqual(['stations/ST-A/locks/2/unlock']);
  });

  it('the certificate’s CN is the client id: a station cannot take over another’s session by naming its client id', async () => {
    const b = await station('ST-B', 'station-sim-ST-B');
    let closed = false;
    b.on('close', () => (closed = true));
    await station('ST-A', 'station-sim-ST-B');
    // ST-B is still connected: a QoS 1 publish is acknowledged on its session.
    await b.publishAsync('stations/ST-B/status', '{"still":"here"}', { qos: 1 });
    expect(closed).toBe(false);
  });

  it('refuses an expired certificate and one from another CA', async () => {
    const work = await mkdtemp(join(tmpdir(), 'certs-bad-'));
    const expired = await makeExpiredStationCert(certsDir, 'ST-A', work);
    const foreign = await makeForeignCaStationCert('ST-A', work);
    const ca = readFileSync(join(certsDir, 'ca.crt'));
    for (const files of [expired, foreign]) {
      await expect(connect(broker.certificateUrl, { ca, cert: readFileSync(files.cert), key: readFileSync(files.key), clientId: 'station-sim-ST-A' }), files.cert).rejects.toThrow();
    }
    // Without a client certificate at all, too.
    await expect(connect(broker.certificateUrl, { ca, clientId: 'anonymous' })).rejects.toThrow();
  });

  it('the password listener takes the right password and refuses a wrong one', async () => {
    const ca = readFileSync(join(certsDir, 'ca.crt'));
    const a = await connect(broker.passwordUrl, { ca, username: 'ST-A', password: STATION_PASSWORD, clientId: 'station-sim-ST-A' });
    await a.publishAsync('stations/ST-A/acks', '{"ok":1}', { qos: 1 });
    const seen = await MqttObserver.connect(broker.passwordUrl, ['stations/#'], { ca, username: 'station-sim-observer', password: OBSERVER_PASSWORD, reconnectPeriod: 0 });
    clients.push(seen.client);
    await a.publishAsync('stations/ST-A/status', '{"by":"password"}', { qos: 1 });
    await seen.waitFor((m) => m.topic === 'stations/ST-A/status' && m.payload === '{"by":"password"}', 'the password station’s status');
    const refused = connect(broker.passwordUrl, { ca, username: 'ST-A', password: 'wrong-password', clientId: 'station-sim-ST-A' });
    await expect(refused).rejects.toMatchObject({ code: 5 });
    await expect(connect(broker.passwordUrl, { ca, clientId: 'nobody' })).rejects.toMatchObject({ code: 5 });
  });

  it('refuses a revoked station once Mosquitto has reloaded (SIGHUP) or restarted with the new CRL', async () => {
    const before = await station('ST-REVOKED');
    await before.endAsync();
    await revokeStation({ dir: certsDir, token: 'ST-REVOKED' });
    await broker.reload();
    await eventually(
      async () => {
        const outcome = await station('ST-REVOKED').then(
          (client) => client.endAsync().then(() => 'connected'),
          () => 'refused',
        );
        expect(outcome).toBe('refused');
      },
      { what: 'Mosquitto to refuse the revoked certificate after SIGHUP', timeout: 10_000, interval: 200 },
    );
    await broker.restart();
    await expect(station('ST-REVOKED')).rejects.toThrow();
    // The others still connect.
    const a = await station('ST-A');
    await a.publishAsync('stations/ST-A/status', '{"after":"restart"}', { qos: 1 });
  });
});
