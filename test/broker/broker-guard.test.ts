/**
 * The pieces of the secured broker on their own: the fixed-header size guard, the refusal log's
 * rate limit, and the packet size limit on in-memory connections (TCP, TLS and WebSocket are in
 * secured-broker.test.ts).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import mqtt from 'mqtt';
import { PacketSizeGuard } from '../../src/broker/packet-size-guard.js';
import { RefusalLog, type BrokerRefusal } from '../../src/broker/refusal-log.js';
import { startEmbeddedBroker, type InThreadBroker } from '../../src/broker/embedded-broker.js';
import { duplexPair } from '../../src/mqtt/duplex-pair.js';
import { eventually } from '../helpers/eventually.js';

describe('PacketSizeGuard', () => {
  /** A PUBLISH QoS 0 with `bodyBytes` of remaining length (the length encoded as MQTT does). */
  const publishHeader = (bodyBytes: number): number[] => {
    const bytes = [0x30];
    let rest = bodyBytes;
    do {
      let byte = rest % 128;
      rest = Math.floor(rest / 128);
      if (rest > 0) byte |= 0x80;
      bytes.push(byte);
    } while (rest > 0);
    return bytes;
  };

  it('lets packets up to the limit through, however the bytes are cut', () => {
    const guard = new PacketSizeGuard(1024);
    const packets = Buffer.concat([Buffer.from([...publishHeader(1021)]), Buffer.alloc(1021), Buffer.from([0xc0, 0]), Buffer.from(publishHeader(200)), Buffer.alloc(200)]);
    for (let at = 0; at < packets.length; at += 7) expect(guard.feed(packets.subarray(at, at + 7))).toBe(true);
  });

  it('says no at the fixed header of a larger packet, before its body, even split in the length bytes', () => {
    const guard = new PacketSizeGuard(1024);
    const header = Buffer.from(publishHeader(1022)); // 1 + 2 + 1022 = 1025 bytes
    expect(guard.feed(header.subarray(0, 2))).toBe(true);
    expect(guard.feed(header.subarray(2))).toBe(false);
    expect(new PacketSizeGuard(65_536).feed(Buffer.from([0x30, 0xff, 0xff, 0xff, 0xff, 0x7f]))).toBe(false); // a fifth length byte
  });
});

describe('RefusalLog', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('counts every refusal but hands on at most 20 a second, and the counts catch up', () => {
    vi.useFakeTimers();
    const seen: [BrokerRefusal, Record<string, number>][] = [];
    const log = new RefusalLog((refusal, counts) => seen.push([refusal, counts]));
    for (let index = 0; index < 1000; index++) log.add({ kind: 'connect', clientId: `c${index}`, reason: 'bad user name or password' });
    expect(log.counts.connect).toBe(1000);
    expect(seen).toHaveLength(20);
    vi.advanceTimersByTime(1000);
    expect(seen).toHaveLength(21);
    expect(seen.at(-1)![1]).toMatchObject({ connect: 1000 });
    log.stop();
  });

  it('clips long fields', () => {
    const seen: BrokerRefusal[] = [];
    const log = new RefusalLog((refusal) => seen.push(refusal));
    log.add({ kind: 'publish', clientId: 'x'.repeat(5000), topic: 't'.repeat(5000), reason: 'not allowed' });
    expect(seen[0]!.clientId!.length).toBeLessThan(210);
    expect(seen[0]!.topic!.length).toBeLessThan(210);
  });
});

describe('the packet size limit on an in-memory connection', () => {
  let broker: InThreadBroker | undefined;
  afterEach(async () => {
    await broker?.stop();
    broker = undefined;
  });

  it('closes it on a packet larger than maxPacketBytes, and counts it', async () => {
    broker = await startEmbeddedBroker({ port: 0, maxPacketBytes: 4096 });
    const started = broker;
    const client = new mqtt.MqttClient(
      () => {
        const [ours, theirs] = duplexPair();
        started.handle(theirs);
        return ours;
      },
      { clientId: 'big', reconnectPeriod: 0, protocolVersion: 4 },
    );
    client.on('error', () => undefined);
    await new Promise((resolve) => client.once('connect', resolve));
    const closed = new Promise<void>((resolve) => client.once('close', () => resolve()));
    client.publish('big/topic', Buffer.alloc(5000), { qos: 1 });
    await closed;
    await eventually(() => expect(broker!.refusedCounts()['packet-too-large']).toBe(1), { what: 'the refusal counted' });
    client.end(true);
  });
});
