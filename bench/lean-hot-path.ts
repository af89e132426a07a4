/**
 * The lean client's hot path alone: QoS 1 publish → PUBACK and QoS 0 publish, against an `attach`
 * broker that answers at once; CPU time (user + system) per publication. To compare two trees on
 * a shared machine, alternate them and compare the lowest of several runs:
 * `node --import tsx bench/lean-hot-path.ts [path of a checkout, default this one]`.
 */
import { fileURLToPath } from 'node:url';

const root = process.argv[2] ?? fileURLToPath(new URL('..', import.meta.url));
const { LeanMqttClient } = await import(`${root}/src/mqtt/lean-client/index.ts`);
const CONNACK = Buffer.from([0x20, 2, 0, 0]);
const broker = {
  handle() { throw new Error('no streams'); },
  attach(peer: { receive(b: Buffer): void }) {
    return {
      send(packet: Buffer) {
        const type = packet[0]! >> 4;
        if (type === 1) queueMicrotask(() => peer.receive(CONNACK));
        else if (type === 3 && (packet[0]! & 6) === 2) {
          // QoS 1 PUBLISH: PUBACK with its id
          let i = 1; let len = 0; let mul = 1; let byte;
          do { byte = packet[i++]!; len += (byte & 127) * mul; mul *= 128; } while (byte & 128);
          const idAt = i + 2 + packet.readUInt16BE(i);
          const ack = Buffer.from([0x40, 2, packet[idAt]!, packet[idAt + 1]!]);
          queueMicrotask(() => peer.receive(ack));
        }
      },
      end() {}, destroy() {},
    };
  },
};
const client = new LeanMqttClient(broker, { clientId: 'hot', reconnectPeriod: 0, keepalive: 0 });
await new Promise((r) => client.once('connect', r));
const payload = '{"commandId":"abcdefgh-1234","sentAt":"2026-11-25T17:00:00.000Z"}';
async function round(n: number, qos: 0 | 1) {
  const start = process.cpuUsage();
  let done = 0;
  await new Promise<void>((resolve) => {
    let i = 0;
    const batch = () => {
      for (let j = 0; j < 50 && i < n; j += 1, i += 1) client.publish('stations/ST-1/locks/1/unlock', payload, { qos }, () => { if (++done === n) resolve(); });
      if (i < n) setImmediate(batch);
    };
    batch();
  });
  const used = process.cpuUsage(start);
  return ((used.user + used.system) * 1000) / n; // ns per publication
}
await round(100_000, 1); await round(100_000, 0); // warm-up
const q1 = await round(300_000, 1);
const q0 = await round(300_000, 0);
console.log(JSON.stringify({ root, qos1NsPerPublish: Math.round(q1), qos0NsPerPublish: Math.round(q0) }));
process.exit(0);
