/**
 * The lean in-memory MQTT client against a real aedes: the session behaves as MQTT 3.1.1 says (QoS
 * 1 acknowledged, retained state kept, the last will fired on a dropped connection and not on a
 * clean one, a refused CONNACK reported with its code, a reconnect after the broker closes the
 * session), and packets split over several writes or malformed are handled.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import net from 'node:net';
import mqttPacket, { type Packet } from 'mqtt-packet';
import { startEmbeddedBroker, type InThreadBroker, type StartedBroker } from '../../src/broker/embedded-broker.js';
import { startBrokerThread } from '../../src/broker/broker-thread.js';
import type { Duplex } from 'node:stream';
import { LeanMqttClient, type LeanClientOptions, type LeanTarget } from '../../src/mqtt/lean-client/index.js';
import { encodePublish } from '../../src/mqtt/packet-codec.js';
import { connectError } from '../../src/mqtt/transport.js';
import { ManualClock } from '../../src/shared/clock.js';
import { eventually } from '../helpers/eventually.js';

/**
 * Moves `clock` on by `ms` in steps of `stepMs`, letting the I/O that each step sets off (a packet
 * to the broker, its answer) happen before the next: the connection's timers run in fake time,
 * its packets on real streams and sockets.
 */
async function advance(clock: ManualClock, ms: number, stepMs = 100): Promise<void> {
  for (let passed = 0; passed < ms; passed += stepMs) {
    clock.advance(Math.min(stepMs, ms - passed));
    await ioTurn();
  }
}

/** A few turns of the event loop: long enough for a packet to cross a stream or loopback socket. */
async function ioTurn(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 1));
  await new Promise((resolve) => setImmediate(resolve));
}

const inMemory = (broker: StartedBroker): LeanTarget => ({ kind: 'memory', broker });
const overTcp = (broker: StartedBroker): LeanTarget => ({ kind: 'tcp', host: broker.host, port: broker.port });
const brokers = [
  ['in memory on the same thread', () => startEmbeddedBroker({ port: 0 }), inMemory],
  ['in memory on its own thread', () => startBrokerThread({ port: 0 }), inMemory],
  ['over TCP', () => startEmbeddedBroker({ port: 0 }), overTcp],
] as const;

describe.each(brokers)('LeanMqttClient against aedes %s', (_, start, targetOf) => {
  let broker: StartedBroker;
  const clients: LeanMqttClient[] = [];

  beforeEach(async () => {
    broker = await start();
  });

  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.endAsync(true)));
    await broker.stop();
  });

  function connect(options: Partial<LeanClientOptions> & { clientId: string }): Promise<LeanMqttClient> {
    const client = new LeanMqttClient(targetOf(broker), { reconnectPeriod: 0, ...options });
    clients.push(client);
    return new Promise((resolve, reject) => {
      client.once('connect', () => resolve(client));
      client.once('error', reject);
    });
  }

  function subscribe(client: LeanMqttClient, filter: string, qos: 0 | 1 = 1): Promise<{ topic: string; payload: string }[]> {
    const seen: { topic: string; payload: string }[] = [];
    client.on('message', (topic, payload) => seen.push({ topic, payload: payload.toString() }));
    return new Promise((resolve, reject) => client.subscribe(filter, { qos }, (error) => (error ? reject(error) : resolve(seen))));
  }

  /**
   * Publishes a marker that `watcher` also receives, and waits for it: anything the broker published
   * to `watcher` before the marker (a will fired when a connection ended) has arrived by then, as
   * aedes delivers to one subscription in the order it publishes.
   */
  async function marker(watcher: LeanMqttClient, seen: { topic: string }[], topic: string): Promise<void> {
    await watcher.publishAsync(topic, 'marker', { qos: 1 });
    await eventually(() => seen.some((message) => message.topic === topic), { what: `the marker on ${topic}` });
  }

  it('publishes at QoS 1 (the callback waits for the PUBACK) and receives what it subscribed to', async () => {
    const a = await connect({ clientId: 'a' });
    const b = await connect({ clientId: 'b' });
    const seen = await subscribe(b, 'room/+/light');
    await a.publishAsync('room/1/light', 'on', { qos: 1 });
    await a.publishAsync('room/2/door', 'open', { qos: 1 });
    a.publish('room/3/light', 'off', { qos: 0 });
    await eventually(() => seen.length === 2, { what: 'both light messages' });
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
    await eventually(() => seen.length === 1, { what: 'the retained status' });
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
    await eventually(() => seen.length === 1, { what: 'the dropped connection\'s will' });
    // The clean connection ended first: had its will fired, it would come before a marker sent now.
    await marker(watcher, seen, 'will/marker');
    expect(seen).toEqual([
      { topic: 'will/dropped', payload: 'gone' },
      { topic: 'will/marker', payload: 'marker' },
    ]);
    expect(dropped.connected).toBe(false);
  });

  it('reconnects after the broker closes the session, and fails what was in flight', async () => {
    const client = new LeanMqttClient(targetOf(broker), { clientId: 'again', reconnectPeriod: 10 });
    clients.push(client);
    let connects = 0;
    let closes = 0;
    client.on('connect', () => (connects += 1));
    client.on('close', () => (closes += 1));
    await eventually(() => connects === 1, { what: 'the first CONNACK' });
    // A second session with the same client id takes over: the broker closes the first (MQTT 3.1.1, 3.1.4).
    const thief = new LeanMqttClient(targetOf(broker), { clientId: 'again', reconnectPeriod: 0 });
    clients.push(thief);
    await eventually(() => closes === 1, { what: 'the takeover to close the first session' });
    await thief.endAsync();
    await eventually(() => connects === 2, { what: 'the reconnect' });
    expect(client.connected).toBe(true);
    await expect(client.publishAsync('t', 'x', { qos: 1 })).resolves.toBeUndefined();
  });

  it('asks a will given as a function again for every CONNECT: after a reconnect, a drop fires the new one', async () => {
    const watcher = await connect({ clientId: 'watcher' });
    const seen = await subscribe(watcher, 'will/+');
    let sessions = 0;
    const will = () => ({ topic: 'will/renewed', payload: Buffer.from(`session ${(sessions += 1)}`), qos: 1 as const, retain: false });
    const client = new LeanMqttClient(targetOf(broker), { clientId: 'renewed', reconnectPeriod: 10, will });
    clients.push(client);
    let connects = 0;
    client.on('connect', () => (connects += 1));
    await eventually(() => connects === 1, { what: 'the first CONNACK' });
    // A second session with the same client id takes over: the broker closes the first (MQTT 3.1.1, 3.1.4).
    const thief = new LeanMqttClient(targetOf(broker), { clientId: 'renewed', reconnectPeriod: 0 });
    clients.push(thief);
    await eventually(() => !client.connected, { what: 'the takeover to close the first session' });
    await thief.endAsync();
    await eventually(() => connects === 2, { what: 'the reconnect' });
    await client.endAsync(true);
    await eventually(() => seen.some(({ payload }) => payload === 'session 2'), { what: 'the second session\'s will' });
    // Nothing later: no third CONNECT asked the will again, no will came after the second session's.
    await marker(watcher, seen, 'will/marker');
    expect(sessions).toBe(2);
    // Whether the broker fires the first session's will on the takeover is its own choice; the drop fires the second's.
    expect(seen.filter(({ topic }) => topic === 'will/renewed').at(-1)).toEqual({ topic: 'will/renewed', payload: 'session 2' });
    expect(seen.at(-1)).toEqual({ topic: 'will/marker', payload: 'marker' });
  });
});

describe('LeanMqttClient and aedes hooks', () => {
  let broker: InThreadBroker;

  beforeEach(async () => {
    broker = await startEmbeddedBroker({ port: 0 });
  });

  afterEach(async () => {
    await broker.stop();
  });

  it('reports a refused CONNACK with its return code, which becomes BROKER_REFUSED', async () => {
    broker.aedes.authenticate = (_client, _user, _password, callback) => {
      const error = Object.assign(new Error('Not authorized'), { returnCode: 5 });
      callback(error as never, false);
    };
    const client = new LeanMqttClient(broker, { clientId: 'x', reconnectPeriod: 0 });
    const error = await new Promise<void>((resolve, reject) => {
      client.once('connect', () => resolve());
      client.once('error', reject);
    }).then(
      () => undefined,
      (failure: Error) => failure,
    );
    expect(error).toMatchObject({ code: 5 });
    expect(connectError(error!).code).toBe('BROKER_REFUSED');
    await client.endAsync(true);
  });
});

describe('framing of what the broker writes', () => {
  it('delivers packets split over several writes, and drops a link that writes garbage', async () => {
    const links: Duplex[] = [];
    // A broker that only records its end of each link; like aedes, it listens for the link's errors.
    const broker = { handle: (stream: Duplex) => links.push(stream.on('error', () => undefined)) };
    const client = new LeanMqttClient(broker, { clientId: 'c', reconnectPeriod: 0 });
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

describe('LeanMqttClient at the edges of the protocol', () => {
  /**
   * A broker end that answers CONNECT with CONNACK (and PINGREQ with PINGRESP when asked) and
   * records every packet the client sends; it never acknowledges a publication unless `answer`
   * gives what to send back for a packet.
   */
  function recordingBroker(options: { pingresp?: boolean; connacks?: number; answer?: (packet: Packet) => Packet | undefined } = {}) {
    const links: Duplex[] = [];
    const packets: Packet[] = [];
    return {
      links,
      packets,
      handle(stream: Duplex): void {
        links.push(stream.on('error', () => undefined));
        const parser = mqttPacket.parser({ protocolVersion: 4 });
        parser.on('packet', (packet: Packet) => {
          packets.push(packet);
          if (packet.cmd === 'connect') {
            for (let i = 0; i < (options.connacks ?? 1); i += 1) stream.write(mqttPacket.generate({ cmd: 'connack', returnCode: 0, sessionPresent: false }));
          }
          if (packet.cmd === 'pingreq' && options.pingresp) stream.write(mqttPacket.generate({ cmd: 'pingresp' }));
          const answer = options.answer?.(packet);
          if (answer) stream.write(mqttPacket.generate(answer));
        });
        stream.on('data', (chunk: Buffer) => parser.parse(chunk));
      },
    };
  }

  async function connected(client: LeanMqttClient): Promise<void> {
    if (!client.connected) await new Promise<void>((resolve) => client.once('connect', () => resolve()));
  }

  it('reports a will function that throws on a reconnect as an error, and tries again after reconnectPeriod', async () => {
    const broker = recordingBroker();
    let calls = 0;
    const will = () => {
      calls += 1;
      if (calls === 2) throw new Error('no will this time');
      return { topic: 'w', payload: Buffer.from(`will ${calls}`), qos: 1 as const, retain: true };
    };
    const client = new LeanMqttClient(broker, { clientId: 'wills', reconnectPeriod: 5, will });
    const errors: string[] = [];
    client.on('error', (error) => errors.push(error.message));
    await connected(client);
    broker.links[0]!.destroy();
    await new Promise<void>((resolve) => client.once('connect', () => resolve()));
    await client.endAsync();
    expect(errors).toEqual(['no will this time']);
    const wills = broker.packets.flatMap((packet) => (packet.cmd === 'connect' ? [packet.will?.payload.toString()] : []));
    expect(wills).toEqual(['will 1', 'will 3']);
  });

  it('waits what reconnectDelay gives for each attempt, counting from 1 again after a CONNACK', async () => {
    const up = recordingBroker();
    let refusing = false;
    let opened = 0;
    // While refusing, the broker drops each connection before answering it: a reconnect that fails.
    const broker = {
      handle(stream: Duplex): void {
        opened += 1;
        if (!refusing) return up.handle(stream);
        stream.on('error', () => undefined);
        setImmediate(() => stream.destroy());
      },
    };
    const clock = new ManualClock();
    const attempts: number[] = [];
    const reconnectDelay = (attempt: number): number => {
      attempts.push(attempt);
      return 1000 * attempt;
    };
    const client = new LeanMqttClient(broker, { clientId: 'backoff', clock, reconnectDelay });
    await connected(client);
    refusing = true;
    up.links[0]!.destroy();
    await ioTurn();
    for (const delay of [1000, 2000]) {
      await advance(clock, delay - 100);
      const before = opened;
      await advance(clock, 100);
      expect(opened).toBe(before + 1);
    }
    refusing = false;
    await advance(clock, 3000);
    await connected(client);
    up.links.at(-1)!.destroy();
    await ioTurn();
    expect(attempts).toEqual([1, 2, 3, 1]);
    await client.endAsync(true);
  });

  it('fails a QoS 1 publication at once when all 65,535 packet ids are in flight', async () => {
    const client = new LeanMqttClient(recordingBroker(), { clientId: 'busy', reconnectPeriod: 0, maxInflight: 65_535, maxQueued: 0 });
    await connected(client);
    const failures: string[] = [];
    for (let i = 0; i < 65_535; i += 1) client.publish('t', 'x', { qos: 1 }, (error) => error && failures.push(error.message));
    expect(failures).toEqual([]);
    let answer: Error | undefined;
    client.publish('t', 'one more', { qos: 1 }, (error) => (answer = error));
    // maxInflight stops it before the packet ids run out; with no queue it fails at once.
    expect(answer?.message).toMatch(/^publish queue full: 0 publications wait .* behind 65535 unacknowledged/);
    await expect(client.subscribeAsync({ t: { qos: 1 } })).rejects.toThrow(/no packet id is free/);
    await client.endAsync(true);
    // Closing fails every one of them once.
    expect(failures).toHaveLength(65_535);
  });

  it('refuses a password without a user name before it opens any connection', () => {
    const broker = recordingBroker();
    expect(() => new LeanMqttClient(broker, { clientId: 'c', password: 'secret' })).toThrow(/Username is required/);
    expect(broker.links).toEqual([]);
  });

  it('joins a large packet that arrives in many pieces, its header cut in two', async () => {
    const broker = recordingBroker();
    const client = new LeanMqttClient(broker, { clientId: 'big', reconnectPeriod: 0 });
    await connected(client);
    const received: Buffer[] = [];
    client.on('message', (_topic, payload) => received.push(Buffer.from(payload)));
    const payload = Buffer.alloc(3 * 1024 * 1024, 7);
    payload.write('end', payload.length - 3);
    const packet = encodePublish('big/one', payload, 0, false, 0);
    const link = broker.links[0]!;
    link.write(packet.subarray(0, 2)); // the fixed header has 4 bytes here: cut after the second
    for (let at = 2; at < packet.length; at += 64 * 1024) link.write(packet.subarray(at, Math.min(at + 64 * 1024, packet.length)));
    link.write(encodePublish('small/two', 'after', 0, false, 0));
    await vi.waitFor(() => expect(received).toHaveLength(2));
    expect(received[0]!.equals(payload)).toBe(true);
    expect(received[1]!.toString()).toBe('after');
    await client.endAsync(true);
  });

  /** The client's 'message', 'error' and 'close' events, in order. */
  function recordEvents(client: LeanMqttClient): string[] {
    const events: string[] = [];
    client.on('message', (topic, payload) => events.push(`${topic}=${payload.length}`));
    client.on('error', (error) => events.push(`error: ${error.message}`));
    client.on('close', () => events.push('close'));
    return events;
  }

  it('drops the connection as soon as the broker announces a packet over the limit, without waiting for its body', async () => {
    const broker = recordingBroker();
    const client = new LeanMqttClient(broker, { clientId: 'huge', reconnectPeriod: 0, maxIncomingPacketBytes: 1024 * 1024 });
    await connected(client);
    const events = recordEvents(client);
    // A PUBLISH whose remaining length is the largest MQTT allows, 268,435,455 (section 2.2.3), and a few bytes of it.
    broker.links[0]!.write(Buffer.from([0x30, 0xff, 0xff, 0xff, 0x7f, 0x00, 0x01, 0x74]));
    await vi.waitFor(() => expect(events).toEqual(['error: incoming MQTT packet of 268435460 bytes is over the limit of 1048576 bytes', 'close']));
    expect(client.connected).toBe(false);
  });

  it('delivers a packet of exactly maxIncomingPacketBytes, and refuses one a byte larger even when it arrives whole', async () => {
    const broker = recordingBroker();
    const client = new LeanMqttClient(broker, { clientId: 'limited', reconnectPeriod: 0, maxIncomingPacketBytes: 1024 });
    await connected(client);
    const events = recordEvents(client);
    const fits = encodePublish('t', Buffer.alloc(1018), 0, false, 0);
    const over = encodePublish('t', Buffer.alloc(1019), 0, false, 0);
    expect([fits.length, over.length]).toEqual([1024, 1025]);
    const link = broker.links[0]!;
    link.write(fits.subarray(0, 10)); // cut short: it waits for the rest
    link.write(fits.subarray(10));
    link.write(over);
    await vi.waitFor(() => expect(events).toEqual(['t=1018', 'error: incoming MQTT packet of 1025 bytes is over the limit of 1024 bytes', 'close']));
  });

  it('refuses a limit that is not a positive whole number of bytes', () => {
    const broker = recordingBroker();
    for (const limit of [0, -1, 1.5, Number.NaN]) {
      expect(() => new LeanMqttClient(broker, { clientId: 'c', maxIncomingPacketBytes: limit })).toThrow(/maxIncomingPacketBytes/);
    }
    expect(broker.links).toEqual([]);
  });

  it.each([
    ['a SUBSCRIBE with a PUBACK', 'SUBACK', (packet: Packet) => (packet.cmd === 'subscribe' ? { cmd: 'puback', messageId: packet.messageId } : undefined)],
    ['a QoS 1 PUBLISH with a SUBACK', 'PUBACK', (packet: Packet) => (packet.cmd === 'publish' ? { cmd: 'suback', messageId: packet.messageId, granted: [1] } : undefined)],
  ] as const)('drops the connection when the broker acknowledges %s: the ack of the wrong kind completes nothing', async (_, expected, answer) => {
    const broker = recordingBroker({ answer: answer as (packet: Packet) => Packet | undefined });
    const client = new LeanMqttClient(broker, { clientId: 'acks', reconnectPeriod: 0 });
    await connected(client);
    const events = recordEvents(client);
    const waiting = expected === 'SUBACK' ? client.subscribeAsync({ t: { qos: 1 } }) : client.publishAsync('t', 'x', { qos: 1 });
    await expect(waiting).rejects.toThrow('connection closed');
    const sent = expected === 'SUBACK' ? 'PUBACK' : 'SUBACK';
    expect(events).toEqual([`error: the broker sent a ${sent} for packet id 1, which is waiting for a ${expected}`, 'close']);
    expect(client.connected).toBe(false);
  });

  it("acknowledges a message whose listener throws, stays connected, and lets the listener's error surface", async () => {
    const broker = recordingBroker();
    const client = new LeanMqttClient(broker, { clientId: 'l', reconnectPeriod: 0 });
    await connected(client);
    client.on('message', () => {
      throw new Error('bug in a listener');
    });
    const later: (() => void)[] = [];
    const spy = vi.spyOn(globalThis, 'queueMicrotask').mockImplementation((callback) => void later.push(callback));
    try {
      broker.links[0]!.write(encodePublish('t', 'x', 1, false, 42));
    } finally {
      spy.mockRestore();
    }
    await vi.waitFor(() => expect(broker.packets.map((packet) => packet.cmd)).toContain('puback'));
    expect(broker.packets.find((packet) => packet.cmd === 'puback')).toMatchObject({ messageId: 42 });
    expect(client.connected).toBe(true);
    expect(later).toHaveLength(1);
    expect(() => later[0]!()).toThrow('bug in a listener');
    await client.endAsync(true);
  });

  it('sends nothing after DISCONNECT: end() makes it disconnected at once', async () => {
    const broker = recordingBroker();
    const client = new LeanMqttClient(broker, { clientId: 'e', reconnectPeriod: 0 });
    await connected(client);
    const closed = client.endAsync();
    expect(client.connected).toBe(false);
    let answer: Error | undefined;
    client.publish('t', 'late', { qos: 0 }, (error) => (answer = error));
    expect(answer?.message).toBe('client disconnected');
    await closed;
    expect(broker.packets.map((packet) => packet.cmd)).toEqual(['connect', 'disconnect']);
  });

  it('pings once per keepalive period when idle, and drops a connection that sends a second CONNACK', async () => {
    const broker = recordingBroker({ pingresp: true });
    const clock = new ManualClock();
    const client = new LeanMqttClient(broker, { clientId: 'idle', keepalive: 1, reconnectPeriod: 0, clock });
    await connected(client);
    await advance(clock, 3200);
    // Checks every 0.5 s: a PINGREQ at 0.5, 1.5 and 2.5 s; its own PINGREQ and PINGRESP cover the checks between.
    expect(broker.packets.filter((packet) => packet.cmd === 'pingreq')).toHaveLength(3);
    await client.endAsync(true);

    const twice = recordingBroker({ connacks: 2 });
    const confused = new LeanMqttClient(twice, { clientId: 'twice', reconnectPeriod: 0 });
    const errors: string[] = [];
    confused.on('error', (error) => errors.push(error.message));
    let connects = 0;
    confused.on('connect', () => (connects += 1));
    await new Promise<void>((resolve) => confused.once('close', () => resolve()));
    expect(connects).toBe(1);
    expect(errors).toEqual(['the broker sent a second CONNACK']);
  });
});

describe('LeanMqttClient over TCP', () => {
  /** A TCP server that answers CONNECT with CONNACK and records what it read; it never answers PINGREQ. */
  async function silentBroker(): Promise<{ port: number; packets: Packet[]; sockets: Set<net.Socket>; close: () => Promise<void> }> {
    const packets: Packet[] = [];
    const sockets = new Set<net.Socket>();
    const server = net.createServer((socket) => {
      sockets.add(socket);
      const parser = mqttPacket.parser({ protocolVersion: 4 });
      parser.on('packet', (packet: Packet) => {
        packets.push(packet);
        if (packet.cmd === 'connect') socket.write(mqttPacket.generate({ cmd: 'connack', returnCode: 0, sessionPresent: false }));
      });
      socket.on('data', (chunk) => parser.parse(chunk));
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
      port: (server.address() as net.AddressInfo).port,
      packets,
      sockets,
      close: () => {
        for (const socket of sockets) socket.destroy();
        return new Promise((resolve) => server.close(() => resolve()));
      },
    };
  }

  it('sends its credentials, and drops a connection whose PINGREQ gets no PINGRESP', async () => {
    const broker = await silentBroker();
    try {
      const clock = new ManualClock();
      const client = new LeanMqttClient(
        { kind: 'tcp', host: '127.0.0.1', port: broker.port },
        { clientId: 'pinger', keepalive: 1, reconnectPeriod: 0, username: 'station', password: 'secret', clock },
      );
      const errors: string[] = [];
      client.on('error', (error) => errors.push(error.message));
      await new Promise<void>((resolve) => client.once('connect', () => resolve()));
      const connect = broker.packets[0] as Packet & { username?: string; password?: Buffer };
      expect(connect).toMatchObject({ cmd: 'connect', clientId: 'pinger', keepalive: 1, username: 'station' });
      expect(connect.password?.toString()).toBe('secret');
      const closed = new Promise<void>((resolve) => client.once('close', () => resolve()));
      // Keepalive 1 s, checked every half second: a PINGREQ at the first check, after half a second
      // of silence; still unanswered a whole period later (the third check), the connection is dropped.
      await advance(clock, 1400);
      expect(client.connected).toBe(true);
      await vi.waitFor(() => expect(broker.packets.map((packet) => packet.cmd)).toEqual(['connect', 'pingreq']));
      await advance(clock, 100);
      await closed;
      expect(broker.packets.map((packet) => packet.cmd)).toEqual(['connect', 'pingreq']);
      expect(errors).toEqual(['no PINGRESP within the keepalive period']);
      expect(client.connected).toBe(false);
    } finally {
      await broker.close();
    }
  });

  it('finds a dead connection while it keeps sending: nothing received means a PINGREQ too', async () => {
    const broker = await silentBroker();
    try {
      const clock = new ManualClock();
      const client = new LeanMqttClient({ kind: 'tcp', host: '127.0.0.1', port: broker.port }, { clientId: 'talker', keepalive: 1, reconnectPeriod: 0, clock });
      const errors: string[] = [];
      client.on('error', (error) => errors.push(error.message));
      await new Promise<void>((resolve) => client.once('connect', () => resolve()));
      const start = clock.now();
      const droppedAt: number[] = [];
      client.on('error', () => droppedAt.push(clock.now() - start));
      let closed = false;
      client.once('close', () => (closed = true));
      // A publication every 100 ms of fake time, and nothing ever comes back.
      for (let i = 0; i < 30 && !closed; i += 1) {
        client.publish('t', 'x', { qos: 0 });
        await advance(clock, 100);
      }
      expect(closed).toBe(true);
      await vi.waitFor(() => expect(broker.packets.map((packet) => packet.cmd)).toContain('pingreq'));
      expect(errors).toEqual(['no PINGRESP within the keepalive period']);
      // The check at 0.5 s still saw the CONNACK; the one at 1 s sends a PINGREQ, unanswered a whole period later.
      expect(droppedAt).toEqual([2000]);
    } finally {
      await broker.close();
    }
  });

  it('closes the socket when the broker announces a packet over maxIncomingPacketBytes', async () => {
    const broker = await silentBroker();
    try {
      const client = new LeanMqttClient({ kind: 'tcp', host: '127.0.0.1', port: broker.port }, { clientId: 'tcp-huge', reconnectPeriod: 0, maxIncomingPacketBytes: 1000 });
      const errors: string[] = [];
      client.on('error', (error) => errors.push(error.message));
      await new Promise<void>((resolve) => client.once('connect', () => resolve()));
      const [socket] = broker.sockets;
      const closedByClient = new Promise<void>((resolve) => socket!.once('close', () => resolve()));
      // The fixed header of a 1,003-byte PUBLISH and the start of its topic; the rest never comes.
      socket!.write(Buffer.from([0x30, 0xe8, 0x07, 0x00, 0x01]));
      await new Promise<void>((resolve) => client.once('close', () => resolve()));
      await closedByClient;
      expect(errors).toEqual(['incoming MQTT packet of 1003 bytes is over the limit of 1000 bytes']);
      expect(client.connected).toBe(false);
    } finally {
      await broker.close();
    }
  });

  it('reports a refused connection with the socket error code, which becomes BROKER_UNREACHABLE', async () => {
    const broker = await silentBroker();
    await broker.close(); // nothing listens on the port any more
    const client = new LeanMqttClient({ kind: 'tcp', host: '127.0.0.1', port: broker.port }, { clientId: 'nobody', reconnectPeriod: 0 });
    const error = await new Promise<Error & { code?: string }>((resolve) => client.once('error', resolve));
    expect(error.code).toBe('ECONNREFUSED');
    expect(connectError(error, 'mqtt://127.0.0.1').code).toBe('BROKER_UNREACHABLE');
    await client.endAsync(true);
  });
});
