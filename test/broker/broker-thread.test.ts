/**
 * The embedded broker on its own thread: the batch format both sides speak, the port rules of the
 * CLI, in-memory and TCP clients on one broker, taps, and what happens to clients when it stops.
 */
import net from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import mqtt from 'mqtt';
import { Worker } from 'node:worker_threads';
import type { Duplex } from 'node:stream';
import { startBrokerThread, ThreadLink } from '../../src/broker/broker-thread.js';
import { duplexPair } from '../../src/mqtt/duplex-pair.js';
import type { LinkPeer } from '../../src/mqtt/broker-link.js';
import { startEmbeddedBroker, type StartedBroker } from '../../src/broker/embedded-broker.js';
import { BatchWriter, DATA, DESTROY, END, OPEN, readBatch } from '../../src/broker/thread-protocol.js';
import { LeanMqttClient } from '../../src/mqtt/lean-client/index.js';
import { eventually } from '../helpers/eventually.js';

describe('thread-protocol batches', () => {
  it('replays every record in order, with its bytes, after a transfer', () => {
    const writer = new BatchWriter();
    expect(writer.empty).toBe(true);
    writer.mark(OPEN, 7);
    writer.data(7, Buffer.from([1, 2, 3]));
    writer.data(7, Buffer.from([4])); // joins the record before: one connection's bytes in a row
    writer.tap(2, 'stations/Ü-1/status', Buffer.from('{"status":"online"}'));
    writer.data(7, Buffer.alloc(0));
    writer.tap(2, 'empty', Buffer.alloc(0));
    writer.mark(END, 7);
    writer.mark(DESTROY, 8);
    const { batch, transfer } = writer.take();
    expect(writer.empty).toBe(true);
    // What the receiving thread gets: a structured clone with the buffers moved, not copied.
    const received = structuredClone(batch, { transfer });
    expect(batch.data.byteLength).toBe(0); // detached on this side
    const seen: unknown[] = [];
    readBatch(received, {
      open: (id) => seen.push(['open', id]),
      data: (id, bytes) => seen.push(['data', id, [...bytes]]),
      end: (id) => seen.push(['end', id]),
      destroy: (id) => seen.push(['destroy', id]),
      tap: (id, topic, payload) => seen.push(['tap', id, topic, payload.toString()]),
    });
    expect(seen).toEqual([
      ['open', 7],
      ['data', 7, [1, 2, 3, 4]],
      ['tap', 2, 'stations/Ü-1/status', '{"status":"online"}'],
      ['data', 7, []],
      ['tap', 2, 'empty', ''],
      ['end', 7],
      ['destroy', 8],
    ]);
  });

  it('never transfers a slice of the shared buffer pool', () => {
    const writer = new BatchWriter();
    const pooled = Buffer.from('small'); // Buffer.from of a short string comes from the pool
    writer.data(1, pooled);
    const { batch, transfer } = writer.take();
    structuredClone(batch, { transfer });
    expect(pooled.toString()).toBe('small');
  });
});

describe('startBrokerThread', () => {
  const stops: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
  });

  async function start(options: Parameters<typeof startBrokerThread>[0] = { port: 0 }): Promise<StartedBroker> {
    const broker = await startBrokerThread(options);
    stops.push(() => broker.stop());
    return broker;
  }

  function memoryClient(broker: StartedBroker, clientId: string): Promise<LeanMqttClient> {
    const client = new LeanMqttClient(broker, { clientId, reconnectPeriod: 0 });
    stops.push(() => client.endAsync(true));
    return new Promise((resolve, reject) => {
      client.once('connect', () => resolve(client));
      client.once('error', reject);
    });
  }

  it('refuses a port that is taken with PORT_IN_USE, or takes a free one when told to', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    stops.push(() => new Promise((resolve) => blocker.close(resolve)));
    const taken = (blocker.address() as net.AddressInfo).port;
    await expect(startBrokerThread({ port: taken })).rejects.toMatchObject({ code: 'PORT_IN_USE', message: expect.stringContaining(`${taken}`) });
    const broker = await start({ port: taken, fallbackToFreePort: true });
    expect(broker.fellBack).toBe(true);
    expect(broker.port).not.toBe(taken);
    expect(broker.url).toBe(`mqtt://127.0.0.1:${broker.port}`);
  });

  it('carries messages between in-memory and TCP clients, retained state included, and taps see them', async () => {
    const broker = await start();
    const station = await memoryClient(broker, 'station');
    await station.publishAsync('stations/S-1/status', '{"status":"online"}', { qos: 1, retain: true });
    const tapped: string[] = [];
    const untap = await broker.tap(['stations/#'], (topic, payload) => tapped.push(`${topic} ${payload}`));

    const tcp = await mqtt.connectAsync(broker.url, { clientId: 'tcp', reconnectPeriod: 0 });
    stops.push(() => tcp.endAsync());
    const overTcp: string[] = [];
    tcp.on('message', (topic, payload) => overTcp.push(`${topic} ${payload}`));
    await tcp.subscribeAsync('stations/#', { qos: 1 });
    const fromTcp = new Promise<string>((resolve) => station.on('message', (topic, payload) => resolve(`${topic} ${payload}`)));
    await station.subscribeAsync({ 'stations/S-1/locks/+/unlock': { qos: 1 } });
    await tcp.publishAsync('stations/S-1/locks/1/unlock', '{"commandId":"c1"}', { qos: 1 });
    expect(await fromTcp).toBe('stations/S-1/locks/1/unlock {"commandId":"c1"}');
    await eventually(() => expect(overTcp).toHaveLength(2));
    expect(overTcp).toEqual(['stations/S-1/status {"status":"online"}', 'stations/S-1/locks/1/unlock {"commandId":"c1"}']);
    // A tap does not replay retained messages; it sees what is routed after it was set.
    expect(tapped).toEqual(['stations/S-1/locks/1/unlock {"commandId":"c1"}']);
    expect(await broker.retainedCount()).toBe(1);

    await untap();
    await station.publishAsync('stations/S-1/status', '{"status":"offline"}', { qos: 1, retain: true });
    await broker.sync();
    expect(tapped).toHaveLength(1);
  });

  it("reports its own thread's heap, which holds the retained messages", async () => {
    const broker = await start();
    const before = await broker.threadHeapUsed!({ collect: true });
    expect(before).toBeGreaterThan(1024 * 1024);
    const station = await memoryClient(broker, 'station');
    for (let i = 0; i < 20_000; i += 1) station.publish(`stations/S-${i}/status`, `{"stationId":${i},"status":"online"}`, { qos: 0, retain: true });
    await eventually(async () => expect(await broker.retainedCount()).toBe(20_000), { timeout: 10_000 });
    const after = await broker.threadHeapUsed!({ collect: true });
    // 20,000 retained packets with their topics live on the broker's thread. (Without --expose-gc,
    // as under vitest, `collect` cannot run a GC and garbage counts too; the bench runs with it.)
    expect(after - before).toBeGreaterThan(2 * 1024 * 1024);
  });

  it('hands a message matching several filters of one tap over once, and a tap that throws costs no other connection anything', async () => {
    for (const broker of [await start(), await startEmbeddedBroker({ port: 0 })]) {
      const station = await memoryClient(broker, 'station');
      const watcher = await memoryClient(broker, 'watcher');
      const watched: string[] = [];
      watcher.on('message', (topic) => watched.push(topic));
      await watcher.subscribeAsync({ 't/#': { qos: 0 } });
      const tapped: string[] = [];
      const untap = await broker.tap(['t/#', 't/+'], (topic) => {
        tapped.push(topic);
        throw new Error(`listener bug on ${topic}`);
      });
      // The listener's errors surface on their own, after the batch: caught here to be counted.
      const thrown: string[] = [];
      const realQueueMicrotask = globalThis.queueMicrotask;
      const spy = vi.spyOn(globalThis, 'queueMicrotask').mockImplementation((callback) =>
        realQueueMicrotask(() => {
          try {
            callback();
          } catch (error) {
            thrown.push((error as Error).message);
          }
        }),
      );
      try {
        for (let i = 0; i < 5; i += 1) station.publish(`t/${i}`, 'x', { qos: 0 });
        await eventually(() => expect(watched).toHaveLength(5));
        await broker.sync();
        expect(tapped).toEqual(['t/0', 't/1', 't/2', 't/3', 't/4']);
        expect(thrown).toEqual(tapped.map((topic) => `listener bug on ${topic}`));
      } finally {
        spy.mockRestore();
        await untap();
        if ('aedes' in broker) await broker.stop();
      }
    }
  });

  it('stops once however often it is told to, and a tap removed after the stop is no error', async () => {
    const failures: Error[] = [];
    const broker = await startBrokerThread({ port: 0, onError: (error) => failures.push(error) });
    const untap = await broker.tap(['#'], () => undefined);
    await Promise.all([broker.stop(), broker.stop()]);
    await broker.stop();
    await expect(untap()).resolves.toBeUndefined();
    expect(failures).toEqual([]);
  });

  it('closes every in-memory client when it stops, and a client that connects later is closed at once', async () => {
    const broker = await startBrokerThread({ port: 0 });
    const client = await memoryClient(broker, 'c');
    const closed = new Promise<void>((resolve) => client.once('close', () => resolve()));
    await broker.stop();
    await closed;
    expect(client.connected).toBe(false);
    const late = new LeanMqttClient(broker, { clientId: 'late', reconnectPeriod: 0 });
    await new Promise<void>((resolve) => late.once('close', () => resolve()));
    expect(late.connected).toBe(false);
    await expect(broker.retainedCount()).rejects.toThrow(/stopped/);
  });
});

describe('the thread link when the broker thread dies', () => {
  /** A stand-in for broker-worker.ts: ready at once, and a CONNACK for every connection opened. */
  const FAKE_BROKER = `
    const { parentPort } = require('node:worker_threads');
    parentPort.postMessage({ type: 'ready', url: 'mqtt://127.0.0.1:1', port: 1, fellBack: false });
    parentPort.on('message', (message) => {
      if (message.type !== 'batch') return;
      const ops = [];
      for (let i = 0; i < message.batch.ops.length; i += 4) if (message.batch.ops[i] === ${OPEN}) ops.push(${DATA}, message.batch.ops[i + 1], 4, 0);
      if (ops.length === 0) return;
      const data = new Uint8Array((ops.length / 4) * 4);
      for (let i = 0; i < data.length; i += 4) data.set([0x20, 2, 0, 0], i);
      parentPort.postMessage({ type: 'batch', batch: { ops: Int32Array.from(ops), data } });
    });`;

  it('closes every client with the reason, reports it once, turns later connections away without throwing, and still stops', async () => {
    const worker = new Worker(FAKE_BROKER, { eval: true });
    const notices: string[] = [];
    const link = new ThreadLink(worker, (error) => notices.push(error.message));
    await link.ready;
    const broker = { handle: (stream: Duplex) => link.open(stream), attach: (peer: LinkPeer) => link.attach(peer) };
    const client = new LeanMqttClient(broker, { clientId: 'c', reconnectPeriod: 0 });
    await new Promise<void>((resolve) => client.once('connect', () => resolve()));
    const errors: string[] = [];
    client.on('error', (error) => errors.push(error.message));
    const closed = new Promise<void>((resolve) => client.once('close', () => resolve()));
    // The thread ends without a stop call, as a crash in it would end it.
    await worker.terminate();
    await closed;
    expect(errors).toEqual(['the broker thread exited with code 1']);
    expect(notices).toEqual(['the broker thread exited with code 1']);
    // A Duplex stream (mqtt.js's in-memory pair) handed over now is destroyed, not thrown at.
    const [, server] = duplexPair();
    broker.handle(server);
    await new Promise((resolve) => setImmediate(resolve));
    expect(server.destroyed).toBe(true);
    // A lean client connecting now hears why, and closes.
    const late = new LeanMqttClient(broker, { clientId: 'late', reconnectPeriod: 0 });
    const lateError = new Promise<Error>((resolve) => late.once('error', resolve));
    await new Promise<void>((resolve) => late.once('close', () => resolve()));
    expect((await lateError).message).toBe('the broker thread exited with code 1');
    await link.stop();
    expect(notices).toHaveLength(1);
  });
});
