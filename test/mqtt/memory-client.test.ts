/**
 * The lean in-memory MQTT client against a real aedes: the packets it writes by hand parse as
 * mqtt-packet reads them, and the session behaves as MQTT 3.1.1 says (QoS 1 acknowledged, retained
 * state kept, the last will fired on a dropped connection and not on a clean one, a refused
 * CONNACK reported with its code, a reconnect after the broker closes the session).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import mqttPacket, { type Packet } from 'mqtt-packet';
import { startEmbeddedBroker, type StartedBroker } from '../../src/broker/embedded-broker.js';
import type { Duplex } from 'node:stream';
import { MemoryMqttClient, encodePublish, encodePuback, wholePacketsLength, type MemoryClientOptions } from '../../src/mqtt/memory-client.js';
import { connectError } from '../../src/mqtt/transport.js';

function parseOne(buffer: Buffer): Packet {
  const parser = mqttPacket.parser({ protocolVersion: 4 });
  const packets: Packet[] = [];
  parser.on('packet', (packet: Packet) => packets.push(packet));
  const left = parser.parse(buffer);
  expect(left).toBe(0);
  expect(packets).toHaveLength(1);
  return packets[0]!;
}

describe('hand-written packets', () => {
  it('PUBLISH parses back to the same topic, payload, QoS, retain flag and packet id', () => {
    // Remaining lengths of 1, 2 and 3 bytes (MQTT 3.1.1, section 2.2.3), a multi-byte topic, QoS 0 and 1.
    for (const size of [0, 100, 200, 20_000]) {
      const payload = 'é'.repeat(size / 2) + 'x'.repeat(size % 2);
      for (const [qos, retain] of [[0, false], [1, true], [1, false]] as const) {
        const packet = parseOne(encodePublish('stations/ÜT-1/locks/1/state', payload, qos, retain, 4242));
        expect(packet).toMatchObject({ cmd: 'publish', topic: 'stations/ÜT-1/locks/1/state', qos, retain });
        expect((packet as { payload: Buffer }).payload.toString()).toBe(payload);
        if (qos === 1) expect(packet.messageId).toBe(4242);
      }
    }
    expect((parseOne(encodePublish('t', Buffer.from([0, 1, 2]), 0, false, 0)) as { payload: Buffer }).payload).toEqual(Buffer.from([0, 1, 2]));
  });

  it('PUBACK parses back to its packet id', () => {
    expect(parseOne(encodePuback(65535))).toMatchObject({ cmd: 'puback', messageId: 65535 });
    expect(parseOne(encodePuback(1))).toMatchObject({ cmd: 'puback', messageId: 1 });
  });
});

describe('MemoryMqttClient against aedes', () => {
  let broker: StartedBroker;
  const clients: MemoryMqttClient[] = [];

  beforeEach(async () => {
    broker = await startEmbeddedBroker({ port: 0 });
  });

  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.endAsync(true)));
    await broker.stop();
  });

  function connect(options: Partial<MemoryClientOptions> & { clientId: string }): Promise<MemoryMqttClient> {
    const client = new MemoryMqttClient(broker, { reconnectPeriod: 0, ...options });
    clients.push(client);
    return new Promise((resolve, reject) => {
      client.once('connect', () => resolve(client));
      client.once('error', reject);
    });
  }

  function subscribe(client: MemoryMqttClient, filter: string, qos: 0 | 1 = 1): Promise<{ topic: string; payload: string }[]> {
    const seen: { topic: string; payload: string }[] = [];
    client.on('message', (topic, payload) => seen.push({ topic, payload: payload.toString() }));
    return new Promise((resolve, reject) => client.subscribe(filter, { qos }, (error) => (error ? reject(error) : resolve(seen))));
  }

  async function until(check: () => boolean): Promise<void> {
    for (let i = 0; i < 200 && !check(); i += 1) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(check()).toBe(true);
  }

  it('publishes at QoS 1 (the callback waits for the PUBACK) and receives what it subscribed to', async () => {
    const a = await connect({ clientId: 'a' });
    const b = await connect({ clientId: 'b' });
    const seen = await subscribe(b, 'room/+/light');
    await a.publishAsync('room/1/light', 'on', { qos: 1 });
    await a.publishAsync('room/2/door', 'open', { qos: 1 });
    a.publish('room/3/light', 'off', { qos: 0 });
    await until(() => seen.length === 2);
    // Two topics: MQTT orders messages per topic only (section 4.6), and aedes delivers QoS 0 sooner.
    expect(seen.sort((x, y) => x.topic.localeCompare(y.topic))).toEqual([
      { topic: 'room/1/light', payload: 'on' },
      { topic: 'room/3/light', payload: 'off' },
    ]);
    expect(a.connected).toBe(true);
  });

  it('leaves retained state that a later subscriber receives', async () => {
    const a = await connect({ clientId: 'a' });
    await a.publishAsync('stations/S/status', '{"status":"online"}', { qos: 1, retain: true });
    const b = await connect({ clientId: 'b' });
    const seen = await subscribe(b, 'stations/#');
    await until(() => seen.length === 1);
    expect(seen[0]).toEqual({ topic: 'stations/S/status', payload: '{"status":"online"}' });
  });

  it('a dropped connection fires the last will; a clean DISCONNECT does not', async () => {
    const watcher = await connect({ clientId: 'watcher' });
    const seen = await subscribe(watcher, 'will/+');
    const will = (topic: string) => ({ topic, payload: Buffer.from('gone'), qos: 1 as const, retain: false });
    const dropped = await connect({ clientId: 'dropped', will: will('will/dropped') });
    const clean = await connect({ clientId: 'clean', will: will('will/clean') });
    await clean.endAsync();
    await dropped.endAsync(true);
    await until(() => seen.length === 1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(seen).toEqual([{ topic: 'will/dropped', payload: 'gone' }]);
    expect(dropped.connected).toBe(false);
  });

  it('reports a refused CONNACK with its return code, which becomes BROKER_REFUSED', async () => {
    broker.aedes.authenticate = (_client, _user, _password, callback) => {
      const error = Object.assign(new Error('Not authorized'), { returnCode: 5 });
      callback(error as never, false);
    };
    const error = await connect({ clientId: 'x' }).then(
      () => undefined,
      (failure: Error) => failure,
    );
    expect(error).toMatchObject({ code: 5 });
    expect(connectError(error!).code).toBe('BROKER_REFUSED');
  });

  it('reconnects after the broker closes the session, and fails what was in flight', async () => {
    const client = new MemoryMqttClient(broker, { clientId: 'again', reconnectPeriod: 10 });
    clients.push(client);
    let connects = 0;
    let closes = 0;
    client.on('connect', () => (connects += 1));
    client.on('close', () => (closes += 1));
    await until(() => connects === 1);
    // A second session with the same client id takes over: the broker closes the first (MQTT 3.1.1, 3.1.4).
    const thief = new MemoryMqttClient(broker, { clientId: 'again', reconnectPeriod: 0 });
    clients.push(thief);
    await until(() => closes === 1);
    await thief.endAsync();
    await until(() => connects === 2);
    expect(client.connected).toBe(true);
    await expect(client.publishAsync('t', 'x', { qos: 1 })).resolves.toBeUndefined();
  });
});

describe('framing of what the broker writes', () => {
  it('counts only whole packets, whatever the length of their remaining-length field', () => {
    const one = encodePuback(7);
    const big = encodePublish('t', 'x'.repeat(20_000), 1, false, 9); // 3-byte remaining length
    expect(wholePacketsLength(one)).toBe(4);
    expect(wholePacketsLength(Buffer.concat([one, big]))).toBe(4 + big.length);
    expect(wholePacketsLength(Buffer.concat([one, big.subarray(0, 2)]))).toBe(4);
    expect(wholePacketsLength(Buffer.concat([one, big.subarray(0, 100)]))).toBe(4);
    expect(wholePacketsLength(Buffer.from([0x30]))).toBe(0);
    // A remaining length longer than 4 bytes is malformed: handed on whole, so the parser rejects it.
    expect(wholePacketsLength(Buffer.from([0x30, 0xff, 0xff, 0xff, 0xff, 0x01]))).toBe(6);
  });

  it('delivers packets split over several writes, and drops a link that writes garbage', async () => {
    const links: Duplex[] = [];
    // A broker that only records its end of each link; like aedes, it listens for the link's errors.
    const broker = { handle: (stream: Duplex) => links.push(stream.on('error', () => undefined)) };
    const client = new MemoryMqttClient(broker, { clientId: 'c', reconnectPeriod: 0 });
    const events: string[] = [];
    client.on('connect', () => events.push('connect'));
    client.on('message', (topic, payload) => events.push(`${topic}=${payload.length}`));
    client.on('close', () => events.push('close'));
    client.on('error', () => events.push('error'));
    const link = links[0]!;
    const connack = mqttPacket.generate({ cmd: 'connack', returnCode: 0, sessionPresent: false });
    link.write(connack.subarray(0, 1));
    link.write(connack.subarray(1));
    const publish = encodePublish('a/b', 'y'.repeat(300), 0, false, 0);
    link.write(publish.subarray(0, 2));
    link.write(publish.subarray(2, 50));
    link.write(publish.subarray(50));
    await new Promise((resolve) => setImmediate(resolve));
    expect(events).toEqual(['connect', 'a/b=300']);
    link.write(Buffer.from([0x00, 0x00])); // packet type 0 is reserved (MQTT 3.1.1, section 2.2.1)
    await new Promise((resolve) => setImmediate(resolve));
    expect(events).toEqual(['connect', 'a/b=300', 'error', 'close']);
    expect(client.connected).toBe(false);
  });
});
