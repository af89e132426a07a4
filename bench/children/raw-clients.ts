/**
 * Benchmark child, the baseline of the fleet boot: N plain mqtt.js clients doing the MQTT work of a
 * station and nothing else. Each is its own session (client id, last will), connects through the
 * product's own transport (`createMqttClient`: in-memory streams into an embedded aedes in this
 * process, or TCP with TCP_NODELAY to `--broker`), subscribes to its unlock filter and publishes
 * 1 + L retained QoS 1 messages of a station's size, waiting for each PUBACK. Same concurrency as
 * `startFleet` (200). The difference to `boot-fleet.ts` is what station-sim itself costs.
 *
 * With `--certs DIR` (a folder made by `generateTestPki`, for the tokens of `bootFixture`) and an
 * `mqtts://` `--broker`, client i is station i: it reads station i's certificate and key as it
 * connects (as a station does) and checks the broker against the folder's CA, so its CN (the
 * token) is its user name and its topics `stations/<token>/…` pass the broker's ACL.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { MqttClient } from 'mqtt';
import type { StartedBroker } from '../../src/broker/embedded-broker.js';
import type { MqttTransport } from '../../src/mqtt/transport.js';
import type * as BrokerModule from '../../src/broker/embedded-broker.js';
import type * as TransportModule from '../../src/mqtt/transport.js';
import { importProduct } from '../lib/product.js';

const { startEmbeddedBroker } = await importProduct<typeof BrokerModule>('broker/embedded-broker');
const { createMqttClient } = await importProduct<typeof TransportModule>('mqtt/transport');
import { bootTokens } from '../lib/fixtures.js';
import { collectGarbage, reportProgress, serveParent } from '../lib/ipc.js';
import { processMemory, type ProcessMemory } from '../lib/protocol.js';

export interface RawBootFigures {
  clients: number;
  locks: number;
  /** From the first CONNECT until every client is subscribed and has its retained messages PUBACKed. */
  bootMs: number;
  /** Before the broker and clients, after a full GC. */
  before: ProcessMemory;
  /** After every client is up, after a full GC. */
  after: ProcessMemory;
}

const CONCURRENCY = 200;
const { values } = parseArgs({
  options: { clients: { type: 'string' }, locks: { type: 'string', default: '4' }, broker: { type: 'string' }, certs: { type: 'string' } },
});
const count = Number(values.clients);
const certs = values.certs;
const tokens = certs ? bootTokens(count) : [];
const locks = Number(values.locks);
const clients: MqttClient[] = [];
let broker: StartedBroker | undefined;

/** One client's connect, subscribe and retained publications, shaped like a station's. */
async function bootOne(transport: MqttTransport, index: number): Promise<void> {
  const token = certs ? tokens[index]! : `R-${index}`;
  const clientCert = certs
    ? { cert: await readFile(path.join(certs, 'stations', `${token}.crt`), 'utf8'), key: await readFile(path.join(certs, 'stations', `${token}.key`), 'utf8') }
    : undefined;
  const now = new Date().toISOString();
  const status = (state: string): string => JSON.stringify({ stationId: index + 1, status: state, batteryVoltage: 12.6, lastConnection: now });
  const client = createMqttClient(transport, {
    clientId: `raw-${token}`,
    ...(clientCert ? { clientCert } : {}),
    clean: true,
    keepalive: 30,
    reconnectPeriod: 0,
    connectTimeout: 10_000,
    will: { topic: `stations/${token}/status`, payload: Buffer.from(status('offline')), qos: 1, retain: true },
  });
  clients.push(client);
  await new Promise<void>((resolve, reject) => {
    client.once('connect', () => resolve());
    client.once('error', reject);
  });
  await client.subscribeAsync(`stations/${token}/locks/+/unlock`, { qos: 1 });
  const published: Promise<unknown>[] = [client.publishAsync(`stations/${token}/status`, status('online'), { qos: 1, retain: true })];
  for (let lock = 1; lock <= locks; lock += 1) {
    const payload = JSON.stringify({ lockId: String(lock), status: 'locked', lastUpdated: now });
    published.push(client.publishAsync(`stations/${token}/locks/${lock}/state`, payload, { qos: 1, retain: true }));
  }
  await Promise.all(published);
}

await serveParent(
  async (): Promise<RawBootFigures> => {
    collectGarbage();
    const before = processMemory();
    broker = values.broker ? undefined : await startEmbeddedBroker({ port: 0 });
    const tls = certs ? { ca: await readFile(path.join(certs, 'ca.crt'), 'utf8') } : undefined;
    const transport: MqttTransport = broker ? { kind: 'memory', broker } : { kind: 'tcp', url: values.broker!, ...(tls ? { tls } : {}) };
    const started = performance.now();
    let next = 0;
    let done = 0;
    let lastReport = 0;
    const worker = async (): Promise<void> => {
      while (next < count) {
        await bootOne(transport, next++);
        done += 1;
        const now = performance.now();
        if (now - lastReport >= 1000) {
          lastReport = now;
          reportProgress({ ready: done, total: count, elapsedMs: Math.round(now - started) });
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, count) }, worker));
    const bootMs = performance.now() - started;
    collectGarbage();
    return { clients: count, locks, bootMs, before, after: processMemory() };
  },
  {
    stop: async () => {
      const started = performance.now();
      for (let index = 0; index < clients.length; index += CONCURRENCY) {
        await Promise.all(clients.slice(index, index + CONCURRENCY).map((client) => client.endAsync()));
      }
      await broker?.stop();
      return { stopMs: performance.now() - started };
    },
  },
);
