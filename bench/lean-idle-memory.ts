/**
 * Memory per idle TCP session: N lean clients or N mqtt.js clients, each subscribed to its own
 * topic, against one embedded aedes on its own thread; the JS heap of this thread and the RSS of
 * the process after a full GC, before and after. One kind per process:
 * `node --expose-gc --import tsx bench/lean-idle-memory.ts lean|mqttjs [N]`.
 */
import mqtt from 'mqtt';
import { startBrokerThread } from '../src/broker/broker-thread.js';
import { LeanMqttClient } from '../src/mqtt/lean-client/index.js';

const kind = process.argv[2] === 'mqttjs' ? 'mqttjs' : 'lean';
const count = Number(process.argv[3] ?? 1000);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');

const broker = await startBrokerThread({ port: 0 });
const measure = async () => {
  for (let i = 0; i < 3; i += 1) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const { heapUsed, rss } = process.memoryUsage();
  return { heapUsed, rss };
};
const before = await measure();
const closers: (() => Promise<unknown>)[] = [];
const deadline = Date.now() + 120_000;
for (let i = 0; i < count; i += 100) {
  if (Date.now() > deadline) throw new Error('took over 120 s');
  await Promise.all(
    Array.from({ length: Math.min(100, count - i) }, async (_, j) => {
      const clientId = `idle-${i + j}`;
      if (kind === 'lean') {
        const client = new LeanMqttClient({ kind: 'tcp', host: broker.host, port: broker.port }, { clientId, reconnectPeriod: 0 });
        await new Promise<void>((resolve, reject) => {
          client.once('connect', () => resolve());
          client.once('error', reject);
        });
        await client.subscribeAsync({ [`t/${clientId}`]: { qos: 1 } });
        closers.push(() => client.endAsync(true));
      } else {
        const client = await mqtt.connectAsync({ host: broker.host, port: broker.port, clientId, reconnectPeriod: 0 });
        await client.subscribeAsync(`t/${clientId}`, { qos: 1 });
        closers.push(() => client.endAsync(true));
      }
    }),
  );
}
const after = await measure();
const kib = (bytes: number) => Math.round((bytes / 1024 / count) * 10) / 10;
console.log(JSON.stringify({ kind, count, heapKiBPerClient: kib(after.heapUsed - before.heapUsed), rssKiBPerClient: kib(after.rss - before.rss) }));
await Promise.all(closers.map((close) => close()));
await broker.stop();
process.exit(0);
