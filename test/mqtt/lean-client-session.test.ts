/**
 * The lean client's session semantics against fake brokers on raw sockets, which record every
 * packet and answer as each test tells them: QoS 1 publications sent again with DUP and their
 * packet ids after a reconnect in a persistent session (MQTT 3.1.1, 4.4) and not in a clean one,
 * `session present` surfaced and checked (3.2.2.2), the cap on publications in flight, the bounded
 * queue, backpressure from a peer that does not read, and QoS 2 refused both ways.
 */
import { afterEach, describe, expect, it } from 'vitest';
import net from 'node:net';
import mqttPacket, { type Packet } from 'mqtt-packet';
import { LeanMqttClient, type LeanClientOptions } from '../../src/mqtt/lean-client/index.js';
import { eventually } from '../helpers/eventually.js';

type Publish = Packet & { cmd: 'publish'; topic: string; payload: Buffer; qos: number; dup: boolean; messageId?: number };

/** One connection the fake broker accepted: its socket and what the client sent on it, in order. */
interface Connection {
  socket: net.Socket;
  packets: Packet[];
  send(packet: Packet): void;
}

interface FakeBroker {
  port: number;
  connections: Connection[];
  close(): Promise<void>;
}

/**
 * A TCP server speaking just enough MQTT: it answers each CONNECT with a CONNACK whose session
 * present flag `sessionPresent(n)` gives for the n-th connection (0 first), and hands every packet
 * to `onPacket` after recording it. It acknowledges nothing by itself.
 */
async function fakeBroker(
  options: { sessionPresent?: (connection: number) => boolean; onPacket?: (connection: Connection, packet: Packet, index: number) => void } = {},
): Promise<FakeBroker> {
  const connections: Connection[] = [];
  const server = net.createServer((socket) => {
    const index = connections.length;
    const connection: Connection = {
      socket,
      packets: [],
      send: (packet) => {
        if (!socket.destroyed) socket.write(mqttPacket.generate(packet));
      },
    };
    connections.push(connection);
    const parser = mqttPacket.parser({ protocolVersion: 4 });
    parser.on('packet', (packet: Packet) => {
      connection.packets.push(packet);
      if (packet.cmd === 'connect') {
        connection.send({ cmd: 'connack', returnCode: 0, sessionPresent: options.sessionPresent?.(index) ?? false });
      }
      options.onPacket?.(connection, packet, index);
    });
    socket.on('data', (chunk: Buffer) => parser.parse(chunk));
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    connections,
    close: () => {
      for (const { socket } of connections) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

const publishes = (connection: Connection | undefined): Publish[] => (connection?.packets ?? []).filter((packet): packet is Publish => packet.cmd === 'publish');

describe('LeanMqttClient session semantics (fake brokers over TCP)', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function start(broker: FakeBroker, options: Partial<LeanClientOptions> = {}): Promise<{ client: LeanMqttClient; connacks: boolean[]; errors: string[] }> {
    const client = new LeanMqttClient({ kind: 'tcp', host: '127.0.0.1', port: broker.port }, { clientId: 'session', reconnectPeriod: 0, ...options });
    cleanups.push(() => client.endAsync(true));
    const connacks: boolean[] = [];
    const errors: string[] = [];
    client.on('connect', (connack: { sessionPresent: boolean }) => connacks.push(connack.sessionPresent));
    client.on('error', (error) => errors.push(error.message));
    await eventually(() => client.connected, { what: 'the first CONNACK' });
    return { client, connacks, errors };
  }

  async function broker(options: Parameters<typeof fakeBroker>[0]): Promise<FakeBroker> {
    const started = await fakeBroker(options);
    cleanups.push(started.close);
    return started;
  }

  it('sends unacknowledged QoS 1 publications again first after a reconnect, with DUP, the same packet ids, in order (clean: false)', async () => {
    const fake = await broker({
      sessionPresent: (connection) => connection > 0,
      onPacket: (connection, packet, index) => {
        // The first connection drops as soon as three publications are in, before any PUBACK.
        if (index === 0 && publishes(connection).length === 3) connection.socket.destroy();
        if (index > 0 && packet.cmd === 'publish') connection.send({ cmd: 'puback', messageId: (packet as Publish).messageId! });
      },
    });
    const { client, connacks } = await start(fake, { clean: false, reconnectPeriod: 20 });
    const acked = ['a', 'b', 'c'].map((payload) => client.publishAsync('t', payload, { qos: 1, retain: payload === 'b' }));
    await Promise.all(acked);
    const [first, second] = [publishes(fake.connections[0]), publishes(fake.connections[1])];
    expect(first.map(({ dup }) => dup)).toEqual([false, false, false]);
    expect(second.map(({ payload, dup, retain, messageId }) => ({ payload: payload.toString(), dup, retain, messageId }))).toEqual(
      first.map(({ payload, retain, messageId }) => ({ payload: payload.toString(), dup: true, retain, messageId })),
    );
    // Nothing went out before the resends on the new connection [MQTT-4.4.0-1].
    expect(fake.connections[1]!.packets.map(({ cmd }) => cmd)).toEqual(['connect', 'publish', 'publish', 'publish']);
    expect((fake.connections[1]!.packets[0] as Packet & { clean: boolean }).clean).toBe(false);
    expect(connacks).toEqual([false, true]);
    expect(client.flow).toEqual({ inFlight: 0, queued: 0, unsentBytes: 0 });
  });

  it('still sends them again when the broker lost the session (session present 0), and says so', async () => {
    const fake = await broker({
      onPacket: (connection, packet, index) => {
        if (index === 0 && packet.cmd === 'publish') connection.socket.destroy();
        if (index > 0 && packet.cmd === 'publish') connection.send({ cmd: 'puback', messageId: (packet as Publish).messageId! });
      },
    });
    const { client, connacks } = await start(fake, { clean: false, reconnectPeriod: 20 });
    await client.publishAsync('t', 'kept', { qos: 1 });
    expect(publishes(fake.connections[1]).map(({ payload, dup }) => [payload.toString(), dup])).toEqual([['kept', true]]);
    expect(connacks).toEqual([false, false]);
  });

  it('fails what a persistent session kept when the client ends before it reconnects', async () => {
    const fake = await broker({
      onPacket: (connection, packet) => {
        if (packet.cmd === 'publish') connection.socket.destroy();
      },
    });
    const { client } = await start(fake, { clean: false, reconnectPeriod: 60_000 });
    const kept = client.publishAsync('t', 'kept', { qos: 1 });
    await new Promise<void>((resolve) => client.once('close', () => resolve()));
    expect(client.flow.inFlight).toBe(1);
    await client.endAsync();
    await expect(kept).rejects.toThrow('connection closed');
    expect(client.flow.inFlight).toBe(0);
    expect(fake.connections).toHaveLength(1);
  });

  it('fails unacknowledged publications with "connection closed" and sends nothing again in a clean session', async () => {
    const fake = await broker({
      onPacket: (connection, packet, index) => {
        if (index === 0 && publishes(connection).length === 2) connection.socket.destroy();
      },
    });
    const { client, connacks } = await start(fake, { clean: true, reconnectPeriod: 20 });
    const results = await Promise.allSettled([client.publishAsync('t', 'a', { qos: 1 }), client.publishAsync('t', 'b', { qos: 1 })]);
    expect(results.map((result) => (result.status === 'rejected' ? (result.reason as Error).message : 'fulfilled'))).toEqual([
      'connection closed',
      'connection closed',
    ]);
    await eventually(() => connacks.length === 2, { what: 'the reconnect' });
    expect(fake.connections[1]!.packets.map(({ cmd }) => cmd)).toEqual(['connect']);
    expect(client.flow.inFlight).toBe(0);
  });

  it('closes the connection when a clean session is answered with session present 1 [MQTT-3.2.2-1]', async () => {
    const fake = await broker({ sessionPresent: () => true });
    const client = new LeanMqttClient({ kind: 'tcp', host: '127.0.0.1', port: fake.port }, { clientId: 'session', reconnectPeriod: 0 });
    cleanups.push(() => client.endAsync(true));
    const errors: string[] = [];
    let connects = 0;
    client.on('error', (error) => errors.push(error.message));
    client.on('connect', () => (connects += 1));
    await new Promise<void>((resolve) => client.once('close', () => resolve()));
    expect(errors).toEqual(['the broker answered a clean session with session present 1']);
    expect(connects).toBe(0);
  });

  it('writes no more than maxInflight QoS 1 publications before a PUBACK comes back, then the next', async () => {
    const fake = await broker({});
    const { client } = await start(fake, { maxInflight: 2 });
    const order: string[] = [];
    for (const payload of ['one', 'two', 'three']) client.publish('t', payload, { qos: 1 }, (error) => order.push(error ? error.message : payload));
    expect(client.flow).toMatchObject({ inFlight: 2, queued: 1 });
    await eventually(() => publishes(fake.connections[0]).length === 2, { what: 'two publications' });
    // The third is held by the client (flow says so), not on its way: a SUBSCRIBE written after it
    // arrives behind the two alone, and the client writes its packets in order on one connection.
    const connection = fake.connections[0]!;
    client.subscribe('later', { qos: 0 });
    await eventually(() => connection.packets.some((packet) => packet.cmd === 'subscribe'), { what: 'the SUBSCRIBE written after the third publication' });
    expect(publishes(connection).map(({ payload }) => payload.toString())).toEqual(['one', 'two']);
    connection.send({ cmd: 'puback', messageId: publishes(connection)[0]!.messageId! });
    await eventually(() => publishes(connection).length === 3, { what: 'the third publication' });
    expect(publishes(connection)[2]).toMatchObject({ dup: false, qos: 1 });
    expect(new Set(publishes(connection).map(({ messageId }) => messageId)).size).toBe(3);
    expect(order).toEqual(['one']);
    expect(client.flow).toMatchObject({ inFlight: 2, queued: 0 });
  });

  it('fails a publication at once when the queue is full, through its callback or as an error', async () => {
    const fake = await broker({});
    const { client, errors } = await start(fake, { maxInflight: 1, maxQueued: 1 });
    const answers: (string | undefined)[] = [];
    for (let i = 0; i < 3; i += 1) client.publish('t', `m${i}`, { qos: 1 }, (error) => answers.push(error?.message));
    expect(answers).toEqual(['publish queue full: 1 publications wait to be sent (maxQueued) behind 1 unacknowledged (maxInflight 1)']);
    client.publish('t', 'no callback', { qos: 0 });
    expect(errors).toEqual([answers[0]]);
    expect(client.flow).toMatchObject({ inFlight: 1, queued: 1 });
  });

  it('applies backpressure to a peer that does not read: what it holds stays bounded while 20 MiB are published', async () => {
    let reader: Connection | undefined;
    const fake = await broker({
      onPacket: (connection, packet) => {
        // After the CONNACK the broker stops reading: the kernel's buffers fill, then the socket's.
        if (packet.cmd === 'connect') {
          reader = connection;
          connection.socket.pause();
        }
      },
    });
    const highWater = 256 * 1024;
    const { client } = await start(fake, { writeHighWaterBytes: highWater, maxQueued: 20 });
    const payload = Buffer.alloc(64 * 1024, 7);
    const outcomes = { written: 0, failed: 0 };
    let mostUnsent = 0;
    let mostQueued = 0;
    const started = Date.now();
    // 320 × 64 KiB = 20 MiB, bounded in count and in time.
    for (let i = 0; i < 320 && Date.now() - started < 10_000; i += 1) {
      client.publish('bulk', payload, { qos: 0 }, (error) => (error ? (outcomes.failed += 1) : (outcomes.written += 1)));
      mostUnsent = Math.max(mostUnsent, client.flow.unsentBytes);
      mostQueued = Math.max(mostQueued, client.flow.queued);
      if (i % 16 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    // One publication may take the socket over its mark; after that they wait in the queue.
    expect(mostUnsent).toBeLessThanOrEqual(highWater + payload.length + 16);
    expect(mostQueued).toBe(20);
    expect(outcomes.failed).toBeGreaterThan(0);
    const accepted = 320 - outcomes.failed;
    expect(outcomes.written + client.flow.queued).toBe(accepted);
    // The peer reads again: the socket drains and the queue follows it out, in order.
    reader!.socket.resume();
    await eventually(() => outcomes.written === accepted, { what: 'the queue to drain', timeout: 10_000 });
    await eventually(() => publishes(reader).length === accepted, { what: 'every accepted publication at the broker', timeout: 10_000 });
    expect(client.flow).toEqual({ inFlight: 0, queued: 0, unsentBytes: 0 });
  });

  it('refuses QoS 2: a publication or subscription asked for throws, a QoS 2 PUBLISH from the broker closes the connection', async () => {
    const fake = await broker({});
    const { client, errors } = await start(fake);
    expect(() => client.publish('t', 'x', { qos: 2 as 1 })).toThrow('QoS 2 is not supported: this MQTT client publishes at QoS 0 and 1 only');
    await expect(client.publishAsync('t', 'x', { qos: 2 as 1 })).rejects.toThrow(/QoS 2 is not supported/);
    await expect(client.subscribeAsync({ t: { qos: 2 as 1 } })).rejects.toThrow(/QoS 2 is not supported: this MQTT client subscribes/);
    expect(() => client.unsubscribe('t')).toThrow(/UNSUBSCRIBE is not supported/);
    expect(fake.connections[0]!.packets.map(({ cmd }) => cmd)).toEqual(['connect']);
    const closed = new Promise<void>((resolve) => client.once('close', () => resolve()));
    fake.connections[0]!.send({ cmd: 'publish', topic: 'cmd', payload: Buffer.from('x'), qos: 2, messageId: 9, retain: false, dup: false });
    await closed;
    expect(errors).toEqual(['the broker sent a QoS 2 PUBLISH on cmd, which this client never subscribes to']);
    expect(() => new LeanMqttClient({ kind: 'tcp', host: '127.0.0.1', port: fake.port }, { clientId: 'w', will: { topic: 'w', payload: Buffer.from('x'), qos: 2 as 1, retain: false } })).toThrow(
      /last will at QoS 2 is not supported/,
    );
  });
});
