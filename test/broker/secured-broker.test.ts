/**
 * The embedded broker, secured (docs/mqtt-security.md): the attacks of issue 17, each by MQTT
 * clients we did not write (mqtt.js, mosquitto_pub/mosquitto_sub) against its TCP, TLS and
 * WebSocket listeners, must fail, and every refusal is counted and reported.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import { parseFixture } from '../../src/fixture/load-fixture.js';
import { startBrokerThread } from '../../src/broker/broker-thread.js';
import { brokerSecurity } from '../../src/broker/broker-security.js';
import type { BrokerRefusal } from '../../src/broker/refusal-log.js';
import type { StartedBroker } from '../../src/broker/embedded-broker.js';
import { eventually } from '../helpers/eventually.js';

const dir = mkdtempSync(path.join(tmpdir(), 'secured-broker-'));
const certs = path.join(dir, 'certs');
const PASS = { 'ST-1': 'station-one-pass', 'ST-2': 'station-two-pass', service: 'service-pass', observer: 'observer-pass', control: 'control-pass', agent: 'agent-pass' };

function openssl(...args: string[]): void {
  execFileSync('openssl', args, { cwd: certs, stdio: 'pipe' });
}

/** A test PKI made with openssl: a CA, the broker's certificate, ST-1's, ST-2's (then revoked), and ST-1's from another CA. */
function makeCerts(): void {
  mkdirSync(certs, { recursive: true });
  const key = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  openssl('req', '-x509', ...key, '-keyout', 'ca.key', '-out', 'ca.crt', '-subj', '/CN=test-ca', '-days', '2');
  openssl('req', '-x509', ...key, '-keyout', 'rogue-ca.key', '-out', 'rogue-ca.crt', '-subj', '/CN=rogue-ca', '-days', '2');
  writeFileSync(path.join(certs, 'server.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  writeFileSync(path.join(certs, 'client.ext'), 'extendedKeyUsage=clientAuth\n');
  const leaf = (name: string, cn: string, ca: string, ext: string) => {
    openssl('req', ...key, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`);
    openssl('x509', '-req', '-in', `${name}.csr`, '-CA', `${ca}.crt`, '-CAkey', `${ca}.key`, '-CAcreateserial', '-out', `${name}.crt`, '-days', '2', '-extfile', ext);
  };
  leaf('server', 'localhost', 'ca', 'server.ext');
  leaf('st1', 'ST-1', 'ca', 'client.ext');
  leaf('st2', 'ST-2', 'ca', 'client.ext');
  leaf('rogue-st1', 'ST-1', 'rogue-ca', 'client.ext');
  writeFileSync(path.join(certs, 'index.txt'), '');
  writeFileSync(path.join(certs, 'crlnumber'), '01\n');
  writeFileSync(
    path.join(certs, 'ca.cnf'),
    ['[ca]', 'default_ca = ca_default', '[ca_default]', `database = ${path.join(certs, 'index.txt')}`, `crlnumber = ${path.join(certs, 'crlnumber')}`, 'default_md = sha256', 'default_crl_days = 2', ''].join('\n'),
  );
  openssl('ca', '-config', 'ca.cnf', '-keyfile', 'ca.key', '-cert', 'ca.crt', '-revoke', 'st2.crt');
  openssl('ca', '-config', 'ca.cnf', '-keyfile', 'ca.key', '-cert', 'ca.crt', '-gencrl', '-out', 'crl.pem');
}

function makeFixture() {
  mkdirSync(path.join(dir, 'secrets'));
  for (const token of ['ST-1', 'ST-2'] as const) writeFileSync(path.join(dir, 'secrets', `${token}.pass`), `${PASS[token]}\n`, { mode: 0o600 });
  writeFileSync(path.join(dir, 'secrets', 'observer.pass'), PASS.observer, { mode: 0o600 });
  process.env.SECURED_TEST_SERVICE_PASSWORD = PASS.service;
  process.env.SECURED_TEST_CONTROL_PASSWORD = PASS.control;
  process.env.SECURED_TEST_AGENT_PASSWORD = PASS.agent;
  return parseFixture(
    {
      stations: [
        { token: 'ST-1', stationId: 1, locks: [{ lockId: '1' }, { lockId: '2' }] },
        { token: 'ST-2', stationId: 2, locks: [{ lockId: '1' }] },
      ],
      mqtt: {
        certs: './certs',
        identities: {
          station: { password: { file: 'secrets/{token}.pass' } },
          service: { password: { env: 'SECURED_TEST_SERVICE_PASSWORD' } },
          control: { password: { env: 'SECURED_TEST_CONTROL_PASSWORD' } },
          agent: { password: { env: 'SECURED_TEST_AGENT_PASSWORD' } },
          observer: { password: { file: 'secrets/observer.pass' } },
        },
      },
    },
    path.join(dir, 'fixture.json'),
  );
}

let broker: StartedBroker;
const refusals: BrokerRefusal[] = [];
const clients: MqttClient[] = [];

beforeAll(async () => {
  makeCerts();
  const fixture = makeFixture();
  broker = await startBrokerThread({ port: 0, security: brokerSecurity(fixture), certs, tlsPort: 0, wsPort: 0 });
  broker.onRefused((refusal) => refusals.push(refusal));
}, 30_000);

afterAll(async () => {
  for (const client of clients) client.end(true);
  await broker?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const station = (token: 'ST-1' | 'ST-2'): IClientOptions => ({ clientId: `station-sim-${token}`, username: token, password: PASS[token] });
const service: IClientOptions = { clientId: 'station-sim-api-test', username: 'station-sim-service', password: PASS.service };
const observer: IClientOptions = { clientId: 'dashboard-1', username: 'station-sim-observer', password: PASS.observer };

/** Connects, or rejects with the CONNACK's return code (`code`) or the transport's error. */
async function connect(options: IClientOptions, url = broker.url): Promise<MqttClient> {
  const client = await mqtt.connectAsync(url, { reconnectPeriod: 0, connectTimeout: 5000, protocolVersion: 4, ...options }, false);
  client.on('error', () => undefined);
  clients.push(client);
  return client;
}

async function refusedCode(options: IClientOptions, url = broker.url): Promise<number | string> {
  try {
    const client = await connect(options, url);
    client.end(true);
    return 'connected';
  } catch (error) {
    return (error as { code?: number | string }).code ?? (error as Error).message;
  }
}

/** Publishes QoS 1 and says whether the broker kept the connection (PUBACK) or closed it. */
async function publishOutcome(client: MqttClient, topic: string, payload: string | Buffer, retain = false): Promise<'acked' | 'closed'> {
  return new Promise((resolve) => {
    client.once('close', () => resolve('closed'));
    client.publish(topic, payload, { qos: 1, retain }, (error) => {
      if (!error) resolve('acked');
    });
  });
}

async function subscribeGranted(client: MqttClient, filter: string): Promise<number> {
  try {
    const granted = await client.subscribeAsync(filter, { qos: 1 });
    return granted[0]!.qos;
  } catch (error) {
    // mqtt.js rejects a SUBACK of 128, with the packet.
    const granted = (error as { packet?: { granted?: (number | { qos: number })[] } }).packet?.granted?.[0];
    if (granted === undefined) throw error;
    return typeof granted === 'number' ? granted : granted.qos;
  }
}

describe('the secured embedded broker', () => {
  it('reports its TLS and WebSocket listeners', () => {
    expect(broker.auth).toBe(true);
    expect(broker.tlsUrl).toMatch(/^mqtts:\/\/127\.0\.0\.1:\d+$/);
    expect(broker.wsUrl).toMatch(/^wss:\/\/127\.0\.0\.1:\d+$/);
  });

  it('refuses anonymous connections and wrong passwords, and counts them without the password', async () => {
    const before = broker.refusedCounts().connect;
    expect(await refusedCode({ clientId: 'anyone' })).toBe(4);
    expect(await refusedCode({ ...station('ST-1'), password: 'guess' })).toBe(4);
    expect(await refusedCode({ ...station('ST-1'), password: PASS['ST-2'] })).toBe(4);
    expect(await refusedCode({ clientId: 'x', username: 'nobody', password: 'secret-typed-as-user' })).toBe(4);
    await eventually(() => expect(broker.refusedCounts().connect).toBe(before + 4), { what: 'the connect refusals counted' });
    const text = JSON.stringify(refusals);
    for (const secret of [...Object.values(PASS), 'guess', 'secret-typed-as-user']) expect(text).not.toContain(secret);
    expect(text).not.toContain('nobody');
  });

  it('keeps each station to its own topics', async () => {
    const one = await connect(station('ST-1'));
    expect(await publishOutcome(one, 'stations/ST-1/status', '{}')).toBe('acked');
    expect(await publishOutcome(one, 'stations/ST-1/locks/2/state', '{}')).toBe('acked');
    expect(await publishOutcome(one, 'stations/ST-1/acks', '{}')).toBe('acked');
    expect(await subscribeGranted(one, 'stations/ST-1/locks/+/unlock')).toBe(1);
    expect(await subscribeGranted(one, 'stations/ST-1/locks/1/unlock')).toBe(1);
    for (const filter of ['#', 'stations/#', 'stations/ST-2/locks/+/unlock', 'stations/+/locks/+/unlock', 'stations/ST-1/status', 'station-sim/#']) {
      expect(await subscribeGranted(one, filter), filter).toBe(128);
    }
    const before = broker.refusedCounts().publish;
    for (const topic of ['stations/ST-1/locks/999/state', 'stations/ST-2/status', 'stations/ST-2/locks/1/state', 'stations/ST-2/acks', 'stations/ST-2/locks/1/unlock', 'stations/ST-1/locks/1/unlock', 'station-sim/control/ST-2', 'station-sim/fleet']) {
      const attacker = await connect(station('ST-1'));
      expect(await publishOutcome(attacker, topic, '{"commandId":"x"}'), topic).toBe('closed');
    }
    await eventually(() => expect(broker.refusedCounts().publish).toBe(before + 8), { what: 'the publish refusals counted' });
    expect(refusals.some((r) => r.kind === 'publish' && r.identity === 'station:ST-1' && r.topic === 'stations/ST-2/status')).toBe(true);
  });

  it('does not store retained fake state from a non-owner', async () => {
    const before = await broker.retainedCount();
    const two = await connect(station('ST-2'));
    expect(await publishOutcome(two, 'stations/ST-1/status', '{"online":true}', true)).toBe('closed');
    const empty = await connect(station('ST-2'));
    expect(await publishOutcome(empty, 'stations/ST-1/locks/1/state', '', true)).toBe('closed');
    await broker.sync();
    expect(await broker.retainedCount()).toBe(before);
    // What a reader gets on subscribing is only the owner's.
    const owner = await connect(station('ST-1'));
    expect(await publishOutcome(owner, 'stations/ST-1/status', '{"owner":true}', true)).toBe('acked');
    const reader = await connect(observer);
    const got: string[] = [];
    reader.on('message', (_topic, payload) => got.push(payload.toString()));
    await reader.subscribeAsync('stations/ST-1/status', { qos: 1 });
    await eventually(() => expect(got).toEqual(['{"owner":true}']), { what: 'the retained status' });
  });

  it('lets the service send unlocks and read states, and nothing else', async () => {
    const api = await connect(service);
    expect(await subscribeGranted(api, 'stations/+/status')).toBe(1);
    expect(await subscribeGranted(api, 'stations/+/locks/+/state')).toBe(1);
    expect(await subscribeGranted(api, 'stations/+/acks')).toBe(1);
    expect(await subscribeGranted(api, 'station-sim/service/station-sim-api-test/sync')).toBe(1);
    expect(await subscribeGranted(api, 'station-sim/control/+')).toBe(128);
    expect(await publishOutcome(api, 'stations/ST-2/locks/1/unlock', '{}')).toBe('acked');
    expect(await publishOutcome(api, 'station-sim/service/station-sim-api-test/sync', '{}')).toBe('acked');
    expect(await publishOutcome(api, 'stations/ST-2/locks/1/state', '{}')).toBe('closed');
    const other = await connect(service);
    expect(await publishOutcome(other, 'station-sim/control/ST-1', '{}')).toBe('closed');
  });

  it('lets an observer read station topics only', async () => {
    const reader = await connect(observer);
    expect(await subscribeGranted(reader, 'stations/+/locks/+/state')).toBe(1);
    expect(await subscribeGranted(reader, 'station-sim/#')).toBe(128);
    expect(await publishOutcome(reader, 'stations/ST-1/locks/1/unlock', '{}')).toBe('closed');
  });

  it("grants a reader's wider filter, as Mosquitto does, and holds back at delivery what it may not read", async () => {
    const wide = await connect({ ...observer, clientId: 'dashboard-wide' });
    const seen: string[] = [];
    wide.on('message', (topic) => seen.push(topic));
    expect(await subscribeGranted(wide, '#')).toBe(1);
    const control = await connect({ clientId: 'station-sim-control-wide', username: 'station-sim-control', password: PASS.control });
    expect(await publishOutcome(control, 'station-sim/control/ST-2', '{"hidden":true}')).toBe('acked');
    const owner = await connect(station('ST-2'));
    expect(await publishOutcome(owner, 'stations/ST-2/status', '{"seen":true}')).toBe('acked');
    await eventually(() => expect(seen).toContain('stations/ST-2/status'), { what: 'the station status through #' });
    await broker.sync();
    expect(seen.filter((topic) => !topic.startsWith('stations/'))).toEqual([]);
    // The service's `#` is held to what it reads too.
    const api = await connect({ ...service, clientId: 'station-sim-api-wide' });
    const apiSeen: string[] = [];
    api.on('message', (topic) => apiSeen.push(topic));
    expect(await subscribeGranted(api, '#')).toBe(1);
    expect(await publishOutcome(control, 'station-sim/control/ST-2', '{"hidden":true}')).toBe('acked');
    expect(await publishOutcome(owner, 'stations/ST-2/status', '{"seen":2}')).toBe('acked');
    await eventually(() => expect(apiSeen).toContain('stations/ST-2/status'), { what: 'the status through the service’s #' });
    await broker.sync();
    expect(apiSeen.filter((topic) => !topic.startsWith('stations/'))).toEqual([]);
  });

  it('gives the control topics to the control identity only', async () => {
    const control = await connect({ clientId: 'station-sim-control-1', username: 'station-sim-control', password: PASS.control });
    expect(await subscribeGranted(control, 'station-sim/#')).toBe(1);
    expect(await publishOutcome(control, 'station-sim/control/ST-1', '{}')).toBe('acked');
    const api = await connect(service);
    expect(await subscribeGranted(api, 'station-sim/replies/+')).toBe(128);
  });

  it('refuses a client id that belongs to another identity, and the real station stays connected', async () => {
    const real = await connect(station('ST-1'));
    let closed = false;
    real.on('close', () => (closed = true));
    expect(await refusedCode({ ...station('ST-2'), clientId: 'station-sim-ST-1' })).toBe(2);
    expect(await refusedCode({ ...service, clientId: 'station-sim-ST-1' })).toBe(2);
    expect(await refusedCode({ ...station('ST-1'), clientId: 'station-sim-api-evil' })).toBe(2);
    expect(await refusedCode({ clientId: 'station-sim-ST-1' })).toBe(4);
    expect(await publishOutcome(real, 'stations/ST-1/status', '{"still":true}')).toBe('acked');
    expect(closed).toBe(false);
  });

  it("refuses every identity every other identity's client id: CONNACK 2, and the victim's will does not fire", async () => {
    // Each identity's credentials, and the client ids its template gives it (the observer has no template: any id).
    const identities: Record<string, { login: IClientOptions; ids: string[] }> = {
      'station:ST-1': { login: station('ST-1'), ids: ['station-sim-ST-1'] },
      'station:ST-2': { login: station('ST-2'), ids: ['station-sim-ST-2'] },
      service: { login: service, ids: ['station-sim-api', 'station-sim-api-victim'] },
      control: { login: { username: 'station-sim-control', password: PASS.control }, ids: ['station-sim-control', 'station-sim-control-victim'] },
      agent: { login: { username: 'station-sim-agent', password: PASS.agent }, ids: ['station-sim-agent', 'station-sim-agent-victim'] },
      observer: { login: observer, ids: ['dashboard-victim'] },
    };
    // Every victim connected, each with a last will on a topic the watcher reads (only stations may
    // publish to station topics, so the others' wills go to topics of their own).
    const watcher = await connect({ ...observer, clientId: 'dashboard-watcher' });
    const wills: string[] = [];
    // What earlier tests retained is not a will.
    watcher.on('message', (topic, payload, packet) => packet.retain || wills.push(`${topic} ${payload.toString()}`));
    await watcher.subscribeAsync('stations/+/status', { qos: 1 });
    const victims: MqttClient[] = [];
    for (const [name, { login, ids }] of Object.entries(identities)) {
      for (const clientId of ids) {
        const will = name.startsWith('station:') ? { topic: `stations/${name.slice('station:'.length)}/status`, payload: Buffer.from('{"will":true}'), qos: 1 as const, retain: false } : undefined;
        const victim = await connect({ ...login, clientId, ...(will ? { will } : {}) });
        victim.on('close', () => wills.push(`closed ${clientId}`));
        victims.push(victim);
      }
    }
    let tried = 0;
    const perIdentity: Record<string, number> = {};
    for (const [attacker, { login }] of Object.entries(identities)) {
      for (const [victim, { ids }] of Object.entries(identities)) {
        if (victim === attacker) continue;
        for (const clientId of ids) {
          expect(await refusedCode({ ...login, clientId }), `${attacker} as ${clientId}`).toBe(2);
          tried += 1;
          perIdentity[attacker] = (perIdentity[attacker] ?? 0) + 1;
        }
      }
    }
    // 6 identities, each against the 9 client ids of the 5 others less its own.
    expect(tried).toBe(Object.values(perIdentity).reduce((sum, count) => sum + count, 0));
    expect(perIdentity).toEqual({ 'station:ST-1': 8, 'station:ST-2': 8, service: 7, control: 7, agent: 7, observer: 8 });
    // A marker from each station after every attempt: what the watcher has by then includes any will.
    for (const token of ['ST-1', 'ST-2'] as const) {
      const victim = victims.find((client) => client.options.clientId === `station-sim-${token}`)!;
      expect(await publishOutcome(victim, `stations/${token}/status`, '{"marker":true}')).toBe('acked');
    }
    await eventually(() => expect(wills.filter((line) => line.includes('marker'))).toHaveLength(2), { what: 'both markers' });
    expect(wills.filter((line) => !line.includes('marker'))).toEqual([]);
    for (const victim of victims) expect(victim.connected, String(victim.options.clientId)).toBe(true);
  });

  it("refuses a last will on a topic that is not the station's own", async () => {
    expect(await refusedCode({ ...station('ST-1'), will: { topic: 'stations/ST-2/status', payload: Buffer.from('{}'), qos: 1, retain: true } })).toBe(5);
    const ok = await connect({ ...station('ST-1'), will: { topic: 'stations/ST-1/status', payload: Buffer.from('{}'), qos: 1, retain: true } });
    expect(ok.connected).toBe(true);
  });

  it('closes the connection on a packet larger than the limit (100 KiB publish), and counts it', async () => {
    const before = broker.refusedCounts()['packet-too-large'];
    const one = await connect(station('ST-1'));
    expect(await publishOutcome(one, 'stations/ST-1/status', Buffer.alloc(100 * 1024, 0x61), true)).toBe('closed');
    await eventually(() => expect(broker.refusedCounts()['packet-too-large']).toBe(before + 1), { what: 'the oversized packet counted' });
  });

  it('authenticates by client certificate over TLS (CN = identity), and refuses revoked and foreign ones', async () => {
    const read = (name: string) => ({ cert: readCert(`${name}.crt`), key: readCert(`${name}.key`) });
    const ca = readCert('ca.crt');
    const byCert = await connect({ clientId: 'station-sim-ST-1', ca, ...read('st1') }, broker.tlsUrl);
    expect(await publishOutcome(byCert, 'stations/ST-1/status', '{}')).toBe('acked');
    const wrong = await connect({ clientId: 'station-sim-ST-1', ca, ...read('st1') }, broker.tlsUrl);
    expect(await publishOutcome(wrong, 'stations/ST-2/status', '{}')).toBe('closed');
    expect(await refusedCode({ clientId: 'station-sim-ST-2', ca, ...read('st2') }, broker.tlsUrl)).toBe(5);
    expect(await refusedCode({ clientId: 'station-sim-ST-1', ca, ...read('rogue-st1') }, broker.tlsUrl)).toBe(5);
    // A password still works over TLS, and over WebSocket with TLS.
    const byPassword = await connect({ ...station('ST-2'), ca }, broker.tlsUrl);
    expect(byPassword.connected).toBe(true);
    const overWs = await connect({ ...station('ST-2'), ca }, broker.wsUrl);
    expect(await publishOutcome(overWs, 'stations/ST-2/status', '{}')).toBe('acked');
    expect(await refusedCode({ clientId: 'x', ca }, broker.wsUrl)).toBe(4);
  });

  it('refuses what mosquitto_pub and mosquitto_sub try beyond their rights, over TCP and TLS', async () => {
    const port = new URL(broker.url).port;
    const tlsPort = new URL(broker.tlsUrl!).port;
    const ca = path.join(certs, 'ca.crt');
    const st1 = ['-i', 'station-sim-ST-1', '--cafile', ca, '--cert', path.join(certs, 'st1.crt'), '--key', path.join(certs, 'st1.key')];
    const pub = (...args: string[]) => run('mosquitto_pub', ['-h', '127.0.0.1', '-q', '1', '-m', '{"commandId":"x"}', ...args]);
    // Anonymous over TCP: refused at CONNECT.
    const anonymous = await pub('-p', port, '-t', 'stations/ST-1/locks/1/unlock');
    expect(anonymous.code).not.toBe(0);
    expect(anonymous.stderr).toContain('Connection Refused: bad user name or password');
    // ST-1 by certificate over TLS: its own status goes, another's closes the connection.
    expect((await pub('-p', tlsPort, '-t', 'stations/ST-1/status', ...st1)).code).toBe(0);
    const foreign = await pub('-p', tlsPort, '-t', 'stations/ST-2/status', ...st1);
    expect(foreign.code).not.toBe(0);
    expect(foreign.stderr).toContain('The connection was lost');
    // ST-1 by password over TCP, reading everything: denied.
    const sub = await run('mosquitto_sub', ['-h', '127.0.0.1', '-p', port, '-t', '#', '-W', '3', '-i', 'station-sim-ST-1', '-u', 'ST-1', '-P', PASS['ST-1']]);
    expect(sub.stdout + sub.stderr).toContain('All subscription requests were denied');
  });
});

function readCert(name: string): Buffer {
  return execFileSync('cat', [path.join(certs, name)]);
}

function run(command: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (bytes: Buffer) => (stdout += bytes.toString()));
    child.stderr.on('data', (bytes: Buffer) => (stderr += bytes.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
