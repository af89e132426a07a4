/**
 * MQTT 5 against a real Mosquitto 2 that the test starts on a free port (docs/mqtt-security.md,
 * "MQTT 5"): the /v1 unlock end to end, the Message Expiry Interval on every command (seen by a raw
 * MQTT 5 subscriber), a command expiring in the broker while a persistent session is away, a
 * publish refused by the broker's ACL (PUBACK 0x87) answered and counted, user properties reaching
 * the station and the transcript, request/response when it is switched on, a refused CONNACK's
 * reason code in the start error, the CLI flag across two processes, and the embedded broker's
 * refusal and notice.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt, { type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/index.js';
import { startSimulator, type StartedSimulator } from '../../src/simulator/start-simulator.js';
import { resolveFixture } from '../../src/simulator/resolve-fixture.js';
import { startMqttGateway } from '../../src/service/station-gateway.js';
import { mqttVersionOf } from '../../src/cli/option-checks.js';
import { eventually } from '../helpers/eventually.js';
import { mosquittoAvailable, startMosquitto, type RunningMosquitto } from '../helpers/mosquitto.js';
import { readTranscript } from '../helpers/read-transcript.js';
import { CliProcess, runCliInProcess } from '../helpers/cli-process.js';
import { expectJudgeFindings } from '../helpers/judge-findings.js';

expectJudgeFindings('queues commands by hand for a station that is away, to see the broker expire one');

const available = mosquittoAvailable();

/**
 * The shipped ACL (docs/mosquitto/acl), but the service may send commands to V5-1 and V5-AWAY
 * only: its unlock of V5-DENIED is refused by the broker. The user names are the identities'
 * defaults (the fixture names the service identity, so the defaults apply to every party).
 */
const ACL = [
  'pattern write stations/%u/status',
  'pattern write stations/%u/acks',
  'pattern write stations/%u/locks/+/state',
  'pattern read stations/%u/locks/+/unlock',
  'user station-sim-service',
  'topic write stations/V5-1/locks/+/unlock',
  'topic write stations/V5-AWAY/locks/+/unlock',
  'topic read stations/#',
  'topic readwrite station-sim/service/#',
  'user station-sim-control',
  'topic readwrite station-sim/#',
  'topic read stations/#',
  'user station-sim-agent',
  'topic readwrite station-sim/#',
  'topic read stations/#',
  'user observer',
  'topic readwrite #',
];

function fixture(options: { requestResponse?: boolean; prefix: string }) {
  const stations = options.prefix === 'V5' ? ['V5-1', 'V5-DENIED', 'V5-AWAY'] : ['RR-1'];
  return {
    seed: 5,
    defaults: { unlockDelayMs: { min: 10, max: 20 }, relockMs: 200, heartbeatMs: 60_000, commandTtlMs: 4500 },
    api: { commandTimeoutMs: 3000, loginThrottle: { enabled: false } },
    accounts: [{ email: 'v5@example.com', password: 'v5-password', stations }],
    stations: stations.map((token, i) => ({
      token,
      stationId: i + 1,
      locks: [{ lockId: '1' }],
      ...(token === 'V5-AWAY' ? { behaviour: { session: 'persistent' } } : {}),
    })),
    mqtt: {
      protocolVersion: 5,
      identities: { service: { username: 'station-sim-service' } },
      mqtt5: {
        commandUserProperties: { tenant: 'acme', 'trace-id': 'trace-42' },
        ...(options.requestResponse ? { requestResponse: true } : {}),
      },
    },
  };
}

/** A raw MQTT 5 client, as an observer: what the broker really sends, properties and all. */
async function observer(url: string, filter: string): Promise<{ client: MqttClient; seen: { topic: string; payload: string; properties: Record<string, unknown> | undefined }[] }> {
  const client = await mqtt.connectAsync(url, { protocolVersion: 5, username: 'observer', clientId: `observer-${randomUUID()}`, reconnectPeriod: 0 });
  const seen: { topic: string; payload: string; properties: Record<string, unknown> | undefined }[] = [];
  client.on('message', (topic, payload, packet) => seen.push({ topic, payload: payload.toString(), properties: packet.properties as Record<string, unknown> | undefined }));
  await client.subscribeAsync(filter, { qos: 1 });
  return { client, seen };
}

describe.runIf(available)('MQTT 5 against Mosquitto 2', () => {
  let mosquitto: RunningMosquitto;
  let sim: StartedSimulator<true>;
  let folder: string;
  let transcriptPath: string;

  beforeAll(async () => {
    mosquitto = await startMosquitto({ acl: ACL });
    folder = await mkdtemp(join(tmpdir(), 'mqtt5-'));
    transcriptPath = join(folder, 'run.jsonl');
    sim = await startSimulator({ fixture: fixture({ prefix: 'V5' }), broker: mosquitto.url, record: transcriptPath, http: true });
  });

  afterAll(async () => {
    await sim?.stop();
    await mosquitto?.stop();
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  it('unlocks end to end over MQTT 5: /v1 → gateway → station → ack, with the command expiring after its TTL', async () => {
    const watch = await observer(mosquitto.url, 'stations/+/locks/+/unlock');
    try {
      const user = createClient({ baseUrl: sim.apiUrl, email: 'v5@example.com', password: 'v5-password' });
      const answer = await user.unlock('V5-1', '1');
      expect(answer).toEqual({ success: true });
      await eventually(() => expect(watch.seen.filter((m) => m.topic === 'stations/V5-1/locks/1/unlock')).toHaveLength(1), { what: 'the command on the broker' });
      const command = watch.seen.find((m) => m.topic === 'stations/V5-1/locks/1/unlock')!;
      // MQTT 5.0, 3.3.2.3.3: the broker passes the interval on, less the time it held the message.
      expect(command.properties?.messageExpiryInterval).toBeGreaterThanOrEqual(4);
      expect(command.properties?.messageExpiryInterval).toBeLessThanOrEqual(5);
      expect(command.properties?.userProperties).toEqual({ tenant: 'acme', 'trace-id': 'trace-42' });
      // Request/response is off by default: no Response Topic, no Correlation Data.
      expect(command.properties?.responseTopic).toBeUndefined();
      expect(command.properties?.correlationData).toBeUndefined();
      await eventually(async () => expect((await user.getStation('V5-1')).locks[0]?.status).toBe('unlocked'));
    } finally {
      await watch.client.endAsync();
    }
  });

  it('answers a command the broker refuses (ACL → PUBACK 0x87) at once, and counts it in health', async () => {
    const user = createClient({ baseUrl: sim.apiUrl, email: 'v5@example.com', password: 'v5-password' });
    const started = Date.now();
    const answer = await user.unlock('V5-DENIED', '1');
    expect(answer).toEqual({ success: false, message: 'The MQTT broker refused the command (PUBACK reason code 0x87: Not authorized)' });
    // Definite and at once: no wait for the 3 s ack timeout.
    expect(Date.now() - started).toBeLessThan(2500);
    const health = (await (await fetch(`${sim.controlUrl}/health`)).json()) as { gateway?: { brokerRefused?: Record<string, number> } };
    expect(health.gateway?.brokerRefused).toEqual({ 'PUBACK 0x87': 1 });
  });

  it('passes the user properties through to the station, and the transcript records them with the protocol level', async () => {
    await eventually(
      async () => {
        const { entries } = await readTranscript(await readFile(transcriptPath, 'utf8'));
        expect(entries[0]).toMatchObject({ kind: 'sim', event: 'mqtt-version', protocolVersion: 5 });
        const received = entries.find((entry) => entry.kind === 'mqtt' && entry.message === 'unlock' && entry.station === 'V5-1');
        expect(received).toMatchObject({ delivery: { properties: { userProperties: { tenant: 'acme', 'trace-id': 'trace-42' } } } });
      },
      { what: 'the unlock entry of V5-1 in the transcript' },
    );
  });

  it('keeps a persistent session while the station is away, and the broker drops a command that expired meanwhile', async () => {
    const station = sim.fleet.get('V5-AWAY')!;
    const acks = await observer(mosquitto.url, 'stations/V5-AWAY/acks');
    const publisher = await mqtt.connectAsync(mosquitto.url, { protocolVersion: 5, username: 'observer', clientId: `publisher-${randomUUID()}`, reconnectPeriod: 0 });
    try {
      // A real disconnect without DISCONNECT: the broker keeps the session (Session Expiry Interval 3600 s).
      await station.goOffline();
      const sentAt = new Date().toISOString();
      const stale = `stale-${randomUUID()}`;
      const fresh = `fresh-${randomUUID()}`;
      await publisher.publishAsync('stations/V5-AWAY/locks/1/unlock', JSON.stringify({ commandId: stale, sentAt }), { qos: 1, properties: { messageExpiryInterval: 1 } });
      await publisher.publishAsync('stations/V5-AWAY/locks/1/unlock', JSON.stringify({ commandId: fresh, sentAt }), { qos: 1, properties: { messageExpiryInterval: 60 } });
      // The broker expires on its own real clock, in whole seconds: nothing to wait on but time.
      await new Promise((resolve) => setTimeout(resolve, 2100));
      await station.goOnline();
      // The kept session delivers the command queued for it (the fresh one is acknowledged) ...
      await eventually(() => expect(acks.seen.map((m) => JSON.parse(m.payload).commandId)).toContain(fresh), { what: 'the ack of the queued command' });
      // ... and, in order (MQTT 5.0, 4.6), the expired one before it would have come first: it never does.
      expect(acks.seen.map((m) => JSON.parse(m.payload).commandId)).not.toContain(stale);
      // The judge, told of the command that waited, reads its MQTT 5 expiry too.
      await eventually(
        () => expect(sim.fleet.judge.findings().filter((finding) => finding.commandId === fresh).map((finding) => finding.detail)).toEqual([
          expect.stringMatching(/while the station's status said offline .*; it came over MQTT 5 with \d+ s of message expiry left$/),
        ]),
        { what: 'the judge finding of the queued command' },
      );
    } finally {
      await publisher.endAsync();
      await acks.client.endAsync();
    }
  });
});

describe.runIf(available)('MQTT 5 last will', () => {
  let mosquitto: RunningMosquitto;
  let sim: StartedSimulator<true>;

  beforeAll(async () => {
    mosquitto = await startMosquitto();
    sim = await startSimulator({ fixture: 'ci', broker: mosquitto.url, mqttVersion: 5, http: true });
  });

  afterAll(async () => {
    await sim?.stop();
    await mosquitto?.stop();
  });

  it('is in the first CONNECT already: a station killed in its first session is marked offline by its will', async () => {
    const statuses = await observer(mosquitto.url, 'stations/CI-2/status');
    try {
      await eventually(() => expect(statuses.seen.map((m) => JSON.parse(m.payload).status)).toEqual(['online']), { what: 'the retained online status' });
      await sim.fleet.get('CI-2')!.kill();
      await eventually(() => expect(statuses.seen.map((m) => JSON.parse(m.payload).status)).toEqual(['online', 'offline']), { what: 'the last will' });
    } finally {
      await statuses.client.endAsync();
    }
  });
});

describe.runIf(available)('MQTT 5 request/response, switched on', () => {
  let mosquitto: RunningMosquitto;
  let sim: StartedSimulator<true>;

  beforeAll(async () => {
    mosquitto = await startMosquitto({ acl: ACL.map((line) => line.replace('stations/V5-1/locks', 'stations/RR-1/locks')) });
    sim = await startSimulator({ fixture: fixture({ prefix: 'RR', requestResponse: true }), broker: mosquitto.url, http: true });
  });

  afterAll(async () => {
    await sim?.stop();
    await mosquitto?.stop();
  });

  it('sends a Response Topic and Correlation Data, and the station answers there with the same Correlation Data', async () => {
    const commands = await observer(mosquitto.url, 'stations/RR-1/locks/+/unlock');
    const acks = await observer(mosquitto.url, 'stations/RR-1/acks');
    try {
      const user = createClient({ baseUrl: sim.apiUrl, email: 'v5@example.com', password: 'v5-password' });
      expect(await user.unlock('RR-1', '1')).toEqual({ success: true });
      const command = commands.seen[0]!;
      const commandId = JSON.parse(command.payload).commandId as string;
      expect(command.properties?.responseTopic).toBe('stations/RR-1/acks');
      expect(Buffer.from(command.properties?.correlationData as Buffer).toString()).toBe(commandId);
      await eventually(() => expect(acks.seen).toHaveLength(1), { what: 'the ack on the response topic' });
      expect(JSON.parse(acks.seen[0]!.payload)).toEqual({ commandId, lockId: '1', accepted: true });
      expect(Buffer.from(acks.seen[0]!.properties?.correlationData as Buffer).toString()).toBe(commandId);
    } finally {
      await commands.client.endAsync();
      await acks.client.endAsync();
    }
  });
});

describe.runIf(available)('station-sim stations + station-sim api with --mqtt-version 5', () => {
  let mosquitto: RunningMosquitto;
  let stations: CliProcess | undefined;
  let api: CliProcess | undefined;

  beforeAll(async () => {
    mosquitto = await startMosquitto();
  });

  afterAll(async () => {
    await api?.signal('SIGTERM');
    await stations?.signal('SIGTERM');
    await mosquitto?.stop();
  });

  it('unlocks through two processes that each speak MQTT 5 to the broker', async () => {
    const watch = await observer(mosquitto.url, 'stations/CI-1/locks/+/unlock');
    try {
      stations = new CliProcess(['stations', '--broker', mosquitto.url, '--mqtt-version', '5', '--fixture', 'fixtures/ci.json', '--json']);
      expect((await stations.readyJson()).online).toBe(24);
      api = new CliProcess(['api', '--broker', mosquitto.url, '--mqtt-version', '5', '--fixture', 'fixtures/ci.json', '--http-port', '0', '--json']);
      const { apiUrl } = await api.readyJson();
      const user = createClient({ baseUrl: apiUrl, email: 'ci@example.com', password: 'ci-password' });
      expect(await user.unlock('CI-1', '1')).toEqual({ success: true });
      // Only an MQTT 5 publisher can set it: the gateway of the other process spoke MQTT 5.
      await eventually(() => expect(watch.seen[0]?.properties?.messageExpiryInterval).toBeGreaterThan(0), { what: 'the command with its expiry' });
    } finally {
      await watch.client.endAsync();
    }
  });
});

describe.runIf(available)('MQTT 5 reason codes of a refused CONNACK, surfaced in the error', () => {
  let mosquitto: RunningMosquitto;

  beforeAll(async () => {
    mosquitto = await startMosquitto({ users: { 'station-sim-service': 'service-password' } });
  });

  afterAll(async () => {
    await mosquitto?.stop();
  });

  // Mosquitto 2.0 answers a wrong password with 0x87 (not authorized) rather than 0x86.
  it('names the CONNACK reason code of a refused connection (0x87 not authorized)', async () => {
    const fixture = await resolveFixture('ci');
    const url = `mqtt://station-sim-service:wrong-password@127.0.0.1:${mosquitto.port}`;
    const started = startMqttGateway({ mqttUrl: url, fixture, mqttVersion: 5, syncTimeoutMs: 100 });
    await expect(started).rejects.toThrow(`The MQTT broker at mqtt://***@127.0.0.1:${mosquitto.port} refused the connection: Not authorized (CONNACK reason code 0x87)`);
    await expect(started).rejects.toMatchObject({ code: 'BROKER_REFUSED', cause: { code: 0x87 } });
  });
});

describe('MQTT 5 and the embedded broker, which speaks 3.1.1 only', () => {
  it('refuses `up --mqtt-version 5` without --broker in one usage line', async () => {
    const { code, stderr } = await runCliInProcess(['up', '--mqtt-version', '5', '--fixture', 'ci']);
    expect(code).toBe(2);
    expect(stderr).toContain('--mqtt-version 5: MQTT 5 needs an external broker (--broker mqtt://host:port): the embedded broker speaks MQTT 3.1.1 only');
  });

  it('refuses an explicit MQTT 5 without an external broker, in the library and on the command line', async () => {
    await expect(startSimulator({ fixture: 'ci', mqttVersion: 5, http: false })).rejects.toThrow(
      'MQTT 5 needs an external broker (--broker mqtt://host:port): the embedded broker speaks MQTT 3.1.1 only',
    );
    expect(() => mqttVersionOf({ 'mqtt-version': '5' })).toThrow('--mqtt-version 5: MQTT 5 needs an external broker');
    expect(mqttVersionOf({ 'mqtt-version': '5', broker: 'mqtt://127.0.0.1:1' })).toBe(5);
  });

  it('runs a fixture that asks for MQTT 5 on MQTT 3.1.1, with a notice at start', async () => {
    const notices: string[] = [];
    const ci = JSON.parse(await readFile(new URL('../../fixtures/ci.json', import.meta.url), 'utf8')) as Record<string, unknown>;
    const sim = await startSimulator({ fixture: { ...ci, mqtt: { protocolVersion: 5 } }, http: false, onNotice: (message) => notices.push(message) });
    try {
      expect(notices.filter((line) => line.includes('MQTT 5'))).toEqual([
        'the fixture (<fixture>) asks for MQTT 5 (mqtt.protocolVersion), but the embedded broker speaks MQTT 3.1.1 only: running MQTT 3.1.1; give --broker for MQTT 5',
      ]);
      expect(sim.fleet.onlineCount()).toBeGreaterThan(0);
    } finally {
      await sim.stop();
    }
  });
});
