/**
 * A connection the client drops acts as a TCP connection that closes after its data (MQTT 3.1.1
 * §4.6): the broker reads what was sent before the drop, takes the end without DISCONNECT for a
 * lost connection (the last will fires), and the connection goes away, on the broker's thread and
 * on this one.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Duplex } from 'node:stream';
import { startBrokerThread } from '../../src/broker/broker-thread.js';
import { startEmbeddedBroker, type InThreadBroker, type StartedBroker } from '../../src/broker/embedded-broker.js';
import { LeanMqttClient, type LeanTarget } from '../../src/mqtt/lean-client/index.js';
import { eventually } from '../helpers/eventually.js';

const started: StartedBroker[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((broker) => broker.stop()));
});

async function connected(client: LeanMqttClient): Promise<LeanMqttClient> {
  await new Promise<void>((resolve) => client.once('connect', () => resolve()));
  return client;
}

/** A subscriber to `drop/#` and what it received. */
async function listen(target: LeanTarget): Promise<{ got: string[]; end: () => Promise<void> }> {
  const subscriber = await connected(new LeanMqttClient(target, { clientId: 'listener', reconnectPeriod: 0 }));
  const got: string[] = [];
  subscriber.on('message', (topic, payload) => got.push(`${topic}=${payload}`));
  await subscriber.subscribeAsync({ 'drop/#': { qos: 1 } });
  return { got, end: () => subscriber.endAsync() };
}

/** A client publishes, then drops the connection in the same turn (a crashing station). */
async function publishThenDrop(target: LeanTarget, { retain, will }: { retain: boolean; will: boolean }): Promise<void> {
  const client = await connected(
    new LeanMqttClient(target, {
      clientId: 'dropper',
      reconnectPeriod: 0,
      ...(will ? { will: { topic: 'drop/will', payload: Buffer.from('lost'), qos: 0 as const, retain: false } } : {}),
    }),
  );
  client.publish('drop/last-words', 'bye', { qos: 0, retain });
  await client.endAsync(true);
}

type Kind = 'the broker thread' | 'this thread';
async function start(kind: Kind): Promise<{ broker: StartedBroker; target: LeanTarget; streams: Duplex[] }> {
  const broker = kind === 'this thread' ? await startEmbeddedBroker({ port: 0 }) : await startBrokerThread({ port: 0 });
  started.push(broker);
  // On this thread, the streams aedes is handed (the lean client's BrokerLink), to see them close.
  const streams: Duplex[] = [];
  const handle = (stream: Duplex): void => {
    streams.push(stream);
    broker.handle(stream);
  };
  return { broker, streams, target: { kind: 'memory', broker: kind === 'this thread' ? { handle } : broker } };
}

describe.each<Kind>(['the broker thread', 'this thread'])('a client that publishes, then drops the connection, on %s', (kind) => {
  it('has its publication delivered and retained', async () => {
    const { broker, target, streams } = await start(kind);
    const listener = await listen(target);
    await publishThenDrop(target, { retain: true, will: false });
    await eventually(() => expect(listener.got).toEqual(['drop/last-words=bye']));
    expect(await broker.retainedCount()).toBe(1);
    if (kind === 'this thread') {
      // The dropped stream closes, and aedes keeps only the listener.
      await eventually(() => expect(streams[1]!.destroyed).toBe(true));
      expect((broker as InThreadBroker).aedes.connectedClients).toBe(1);
    }
    await listener.end();
  });

  it('has its publication delivered, then its last will (an end without DISCONNECT is a lost connection)', async () => {
    const { target } = await start(kind);
    const listener = await listen(target);
    await publishThenDrop(target, { retain: false, will: true });
    await eventually(() => expect(listener.got).toEqual(['drop/last-words=bye', 'drop/will=lost']));
    await listener.end();
  });
});

describe('a dropped connection on this thread', () => {
  it('closes even when aedes does not read what is left (a CONNECT it is still authenticating)', async () => {
    const broker: InThreadBroker = await startEmbeddedBroker({ port: 0 });
    started.push(broker);
    broker.aedes.authenticate = () => undefined; // never answers: aedes keeps the client paused
    const streams: Duplex[] = [];
    const client = new LeanMqttClient({ kind: 'memory', broker: { handle: (stream) => (streams.push(stream), broker.handle(stream)) } }, { clientId: 'paused', reconnectPeriod: 0 });
    await broker.sync(); // aedes has read the CONNECT
    const link = streams[0]!;
    link.push(Buffer.from([0xc0, 0])); // a PINGREQ aedes will not read while paused
    const closed = new Promise<void>((resolve) => client.once('close', () => resolve()));
    client.end(true);
    await closed; // the client hears at once
    const start = Date.now();
    await eventually(() => expect(link.destroyed).toBe(true));
    expect(Date.now() - start).toBeLessThan(1500);
  });
});
