/**
 * The AsyncAPI document of the station contract (src/mqtt/asyncapi.ts): valid for AsyncAPI's own
 * parser, following the fixture's topic templates, the same from the CLI and from the control
 * plane, and true to what a running simulator really publishes on its broker.
 */
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Parser } from '@asyncapi/parser';
import { Ajv, type ValidateFunction } from 'ajv';
import { buildAsyncApi, type AsyncApiDocument } from '../../src/mqtt/asyncapi.js';
import { AckPayloadSchema, LockStatePayloadSchema, StatusPayloadSchema, UnlockCommandSchema } from '../../src/contract/payloads.js';
import { loadFixture, parseFixture } from '../../src/fixture/load-fixture.js';
import { startSimulator, type StartedSimulator } from '../../src/simulator/start-simulator.js';
import { createClient } from '../../src/client/index.js';
import { MqttObserver } from '../helpers/mqtt-observer.js';
import { runCliInProcess } from '../helpers/cli-process.js';

/** Spectral's severities: 0 is an error (1 warning, 2 information, 3 hint). */
const ERROR = 0;

async function errorsOf(document: unknown): Promise<string[]> {
  const { diagnostics } = await new Parser().parse(JSON.stringify(document));
  return diagnostics.filter((d) => d.severity === ERROR).map((d) => `${d.code} ${d.message} at ${d.path.join('.')}`);
}

interface Channel {
  address: string;
  messages: Record<string, { $ref: string }>;
}

/** Follows a local `#/a/b` reference. */
function resolve(document: AsyncApiDocument, ref: string): any {
  return ref
    .replace(/^#\//, '')
    .split('/')
    .reduce<any>((node, key) => node[key], document);
}

/** Per channel id: a pattern of its address and a validator of its payload, compiled with ajv. */
function channelValidators(document: AsyncApiDocument): { id: string; pattern: RegExp; validate: ValidateFunction }[] {
  const ajv = new Ajv({ allErrors: true });
  return Object.entries(document.channels as Record<string, Channel>).map(([id, channel]) => {
    const messages = Object.values(channel.messages);
    expect(messages).toHaveLength(1);
    const message = resolve(document, messages[0]!.$ref);
    const payload = message.payload.$ref ? resolve(document, message.payload.$ref) : message.payload;
    const source = channel.address
      .split(/(\{[^}]+\})/)
      .map((part) => (part.startsWith('{') ? '[^/]+' : part.replace(/[.*+?^$()|[\]\\]/g, '\\$&')))
      .join('');
    return { id, pattern: new RegExp(`^${source}$`), validate: ajv.compile(payload) };
  });
}

function channelOf(document: AsyncApiDocument, topic: string) {
  const found = channelValidators(document).filter((channel) => channel.pattern.test(topic));
  expect(found, `exactly one channel for ${topic}`).toHaveLength(1);
  return found[0]!;
}

describe('the AsyncAPI document', () => {
  it('passes @asyncapi/parser without errors, with and without a server', async () => {
    const fixture = await loadFixture('fixtures/ci.json');
    expect(await errorsOf(buildAsyncApi(fixture))).toEqual([]);
    const withServer = buildAsyncApi(fixture, { brokerUrl: 'mqtts://broker.example:8883' });
    expect(await errorsOf(withServer)).toEqual([]);
    expect(withServer).toMatchObject({
      asyncapi: '3.0.0',
      servers: {
        broker: {
          host: 'broker.example:8883',
          protocol: 'secure-mqtt',
          bindings: { mqtt: { lastWill: { topic: 'stations/{token}/status', qos: 1, retain: true }, bindingVersion: '0.2.0' } },
        },
      },
    });
    expect(buildAsyncApi(fixture)).not.toHaveProperty('servers');
  });

  it('states QoS 1 on every operation, retain on status and lock state only, and who sends what', () => {
    const document = buildAsyncApi(parseFixture({ stations: [{ token: 'A', stationId: 1, locks: [{ lockId: '1' }] }] }));
    const operations = document.operations as Record<string, { action: string; channel: { $ref: string }; bindings: { mqtt: { qos: number; retain: boolean } } }>;
    const summary = Object.fromEntries(Object.values(operations).map((o) => [o.channel.$ref.split('/').pop(), [o.action, o.bindings.mqtt.qos, o.bindings.mqtt.retain]]));
    expect(summary).toEqual({
      status: ['send', 1, true],
      lockState: ['send', 1, true],
      unlock: ['receive', 1, false],
      acks: ['send', 1, false],
    });
    const channels = document.channels as Record<string, Channel & { parameters: Record<string, unknown> }>;
    expect(Object.values(channels).map((c) => [c.address, Object.keys(c.parameters)])).toEqual([
      ['stations/{token}/status', ['token']],
      ['stations/{token}/locks/{lockId}/state', ['token', 'lockId']],
      ['stations/{token}/locks/{lockId}/unlock', ['token', 'lockId']],
      ['stations/{token}/acks', ['token']],
    ]);
  });

  it("follows the fixture's topic templates: custom ones give their own addresses, beside the defaults", async () => {
    const fixture = parseFixture({
      defaults: { topics: { prefix: 'acme/v2' } },
      stations: [
        { token: 'A', stationId: 1, locks: [{ lockId: '1' }] },
        { token: 'B', stationId: 2, locks: [{ lockId: '7' }], behaviour: { topics: { status: 'fw/{token}/alive', unlock: '{prefix}/cmd/{token}/{lockId}' } } },
      ],
    });
    const document = buildAsyncApi(fixture);
    expect(await errorsOf(document)).toEqual([]);
    const addresses = Object.fromEntries(Object.entries(document.channels as Record<string, Channel>).map(([id, c]) => [id, c.address]));
    expect(addresses).toEqual({
      status: 'acme/v2/{token}/status',
      lockState: 'acme/v2/{token}/locks/{lockId}/state',
      unlock: 'acme/v2/{token}/locks/{lockId}/unlock',
      acks: 'acme/v2/{token}/acks',
      'status-2': 'fw/{token}/alive',
      'lockState-2': 'acme/v2/{token}/locks/{lockId}/state',
      'unlock-2': 'acme/v2/cmd/{token}/{lockId}',
      'acks-2': 'acme/v2/{token}/acks',
    });
    expect((document.channels as Record<string, { parameters: { token: { examples: string[] } } }>)['status-2']!.parameters.token.examples).toEqual(['B']);
  });

  it('carries the payload schemas the code checks messages with, unchanged', () => {
    const schemas = (buildAsyncApi({ stations: [] }).components as { schemas: Record<string, unknown> }).schemas;
    expect(schemas).toEqual({
      StatusPayload: JSON.parse(JSON.stringify(StatusPayloadSchema)),
      LockStatePayload: JSON.parse(JSON.stringify(LockStatePayloadSchema)),
      UnlockCommand: JSON.parse(JSON.stringify(UnlockCommandSchema)),
      AckPayload: JSON.parse(JSON.stringify(AckPayloadSchema)),
    });
  });

  it("has examples that fit their messages' schemas", async () => {
    const document = buildAsyncApi(await loadFixture('fixtures/ci.json'));
    const messages = (document.components as { messages: Record<string, { examples: { payload: unknown }[] }> }).messages;
    const checked = Object.keys(document.channels as object).flatMap((id) => {
      const channel = (document.channels as Record<string, Channel>)[id]!;
      const { validate } = channelValidators(document).find((c) => c.id === id)!;
      const message = messages[Object.keys(channel.messages)[0]!]!;
      return message.examples.map((example) => [id, validate(example.payload)]);
    });
    expect(checked).toEqual([
      ['status', true],
      ['status', true],
      ['lockState', true],
      ['unlock', true],
      ['acks', true],
      ['acks', true],
    ]);
  });

  it('refuses payloads that break the contract', async () => {
    const document = buildAsyncApi(await loadFixture('fixtures/ci.json'));
    const status = channelOf(document, 'stations/CI-1/status').validate;
    expect(status({ stationId: 1, status: 'online', batteryVoltage: 12.4, lastConnection: '2026-11-25T10:00:00.000Z' })).toBe(true);
    expect(status({ stationId: 1, status: 'online', batteryVoltage: '12.4', lastConnection: '2026-11-25T10:00:00.000Z' })).toBe(false);
    expect(status({ stationId: 1, status: 'sleeping', batteryVoltage: 12.4, lastConnection: '2026-11-25T10:00:00.000Z' })).toBe(false);
    const acks = channelOf(document, 'stations/CI-1/acks').validate;
    expect(acks({ commandId: 'c', lockId: '1', accepted: false })).toBe(false);
    expect(acks({ lockId: '1', accepted: true })).toBe(false);
    expect(channelOf(document, 'stations/CI-1/locks/1/unlock').validate({ commandId: '' })).toBe(false);
  });
});

describe('the document against a running simulator', () => {
  let sim: StartedSimulator | undefined;
  let observer: MqttObserver | undefined;
  afterEach(async () => {
    await observer?.client.endAsync();
    await sim?.stop();
    observer = sim = undefined;
  });

  it('is served behind the control token, equals the CLI output, and accepts every message the simulator publishes', async () => {
    const controlToken = 'a-control-token-for-asyncapi-tests-0123';
    sim = await startSimulator({ fixture: 'fixtures/ci.json', controlToken });
    const url = `${sim.controlUrl}/asyncapi.json`;
    expect((await fetch(url)).status).toBe(401);
    const response = await fetch(url, { headers: { authorization: `Bearer ${controlToken}` } });
    expect(response.status).toBe(200);
    const served = (await response.json()) as AsyncApiDocument;
    expect(await errorsOf(served)).toEqual([]);
    expect(served).toMatchObject({ servers: { broker: { host: new URL(sim.mqttUrl).host, protocol: 'mqtt' } } });

    // The CLI, told the same fixture and broker, prints the same document (to stdout and to --out).
    const printed = await runCliInProcess(['contract', 'asyncapi', '--fixture', 'fixtures/ci.json', '--broker', sim.mqttUrl]);
    expect(printed.code).toBe(0);
    expect(JSON.parse(printed.stdout)).toEqual(served);
    const out = join(await mkdtemp(join(tmpdir(), 'asyncapi-')), 'station.asyncapi.json');
    expect((await runCliInProcess(['contract', 'asyncapi', '-f', 'fixtures/ci.json', '--broker', sim.mqttUrl, '--out', out])).code).toBe(0);
    expect(JSON.parse(await readFile(out, 'utf8'))).toEqual(served);

    // Everything on the station topics while a lock is unlocked through /v1 and a station loses its connection.
    observer = await MqttObserver.connect(sim.mqttUrl, ['stations/#']);
    await observer.waitFor((m) => m.topic === 'stations/CI-2/status' && m.json?.status === 'online', 'the retained status of CI-2');
    const client = createClient({ baseUrl: sim.apiUrl!, email: 'ci@example.com', password: 'ci-password' });
    expect(await client.unlock('CI-1', '1')).toEqual({ success: true });
    await observer.waitFor((m) => m.topic === 'stations/CI-1/locks/1/state' && m.json?.status === 'unlocked', 'the unlocked state');
    const offline = await fetch(`${sim.controlUrl}/stations/CI-2/connection`, {
      method: 'POST',
      headers: { authorization: `Bearer ${controlToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ online: false }),
    });
    expect(offline.status).toBe(200);
    const will = await observer.waitFor((m) => m.topic === 'stations/CI-2/status' && m.json?.status === 'offline', 'the last will of CI-2');

    const seen = new Set<string>();
    for (const message of observer.messages) {
      const channel = channelOf(served, message.topic);
      expect(channel.validate(message.json), `${message.topic} ${message.payload}: ${JSON.stringify(channel.validate.errors)}`).toBe(true);
      seen.add(channel.id);
    }
    expect([...seen].sort()).toEqual(['acks', 'lockState', 'status', 'unlock']);
    // The will carries the time of the CONNECT, which is never after the status it replaced.
    const online = observer.messages.find((m) => m.topic === 'stations/CI-2/status' && m.json?.status === 'online')!;
    expect(Date.parse(will.json.lastConnection)).toBeLessThanOrEqual(Date.parse(online.json.lastConnection));

    // A broken message is refused by the same schema that accepted the real ones.
    expect(channelOf(served, will.topic).validate({ ...will.json, lastConnection: 42 })).toBe(false);
  });
});

describe('station-sim contract asyncapi, usage', () => {
  it('answers a usage error with exit code 2', async () => {
    expect((await runCliInProcess(['contract'])).code).toBe(2);
    expect((await runCliInProcess(['contract', 'openapi'])).code).toBe(2);
    const badBroker = await runCliInProcess(['contract', 'asyncapi', '--broker', 'ftp://user:secret@host']);
    expect(badBroker.code).toBe(2);
    expect(badBroker.stderr).not.toContain('secret');
    const withCredentials = await runCliInProcess(['contract', 'asyncapi', '--broker', 'mqtts://user:secret@broker.example:8883']);
    expect(withCredentials.code).toBe(0);
    expect(withCredentials.stdout).not.toContain('secret');
    expect(JSON.parse(withCredentials.stdout).servers.broker.host).toBe('broker.example:8883');
  });

  it('uses the demo fixture when told none, and writes custom templates from a file', async () => {
    const demo = await runCliInProcess(['contract', 'asyncapi']);
    expect(demo.code).toBe(0);
    expect(await errorsOf(JSON.parse(demo.stdout))).toEqual([]);
    const dir = await mkdtemp(join(tmpdir(), 'asyncapi-'));
    const file = join(dir, 'custom.json');
    await writeFile(file, JSON.stringify({ defaults: { topics: { prefix: 'acme' } }, stations: [{ token: 'X', stationId: 1, locks: [{ lockId: '1' }] }] }));
    const custom = await runCliInProcess(['contract', 'asyncapi', '--fixture', file]);
    expect(JSON.parse(custom.stdout).channels.status.address).toBe('acme/{token}/status');
  });
});
