/**
 * `stop()` closes in-memory connections that have not sent CONNECT yet, which `aedes.close()`
 * leaves open (it closes clients past CONNECT only), on the broker thread and on this thread.
 */
import { describe, expect, it } from 'vitest';
import { startBrokerThread } from '../../src/broker/broker-thread.js';
import { startEmbeddedBroker } from '../../src/broker/embedded-broker.js';
import { duplexPair } from '../../src/mqtt/duplex-pair.js';
import { eventually } from '../helpers/eventually.js';

describe.each(['the broker thread', 'this thread'] as const)('stop() on %s', (kind) => {
  const start = () => (kind === 'this thread' ? startEmbeddedBroker({ port: 0 }) : startBrokerThread({ port: 0 }));

  it('closes a stream that never sent CONNECT, promptly', async () => {
    const broker = await start();
    const [client, server] = duplexPair();
    client.on('data', () => undefined);
    client.on('error', () => undefined);
    broker.handle(server);
    await broker.sync();
    const before = Date.now();
    await broker.stop();
    expect(Date.now() - before).toBeLessThan(2000); // the broker thread's stop timeout is 10 s
    await eventually(() => expect(client.destroyed).toBe(true));
  });
});

// Only the broker thread has `attach` (a connection without a stream on this side).
it('stop() on the broker thread closes an attached connection that never sent CONNECT, promptly', async () => {
  const broker = await startBrokerThread({ port: 0 });
  let closed = false;
  broker.attach!({ receive: () => undefined, closed: () => (closed = true) });
  await broker.sync();
  const before = Date.now();
  await broker.stop();
  expect(Date.now() - before).toBeLessThan(2000);
  expect(closed).toBe(true);
});
