/**
 * The mqtt.js clients of the control plane and the fleet agent (`createMqttClient`): after a
 * refused CONNACK on a reconnect they keep trying, as the lean clients do, while a refusal of the
 * first connection still fails the start with one clear error; and a port that takes TCP but never
 * answers fails after the lean clients' 10 s, not mqtt.js's 30 s.
 */
import net from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { MqttClient } from 'mqtt';
import { CONNECT_TIMEOUT_MS, createMqttClient, firstConnect } from '../../src/mqtt/transport.js';
import { SimError } from '../../src/errors.js';
import { startTestBroker, type TestBroker } from '../helpers/test-broker.js';

type Authenticate = TestBroker['aedes']['authenticate'];
const allow: Authenticate = (_client, _user, _password, callback) => callback(null, true);
/** CONNACK return code 5, "not authorized" (MQTT 3.1.1, section 3.2.2.3), as Mosquitto answers a wrong password. */
const refuse: Authenticate = (_client, _user, _password, callback) => callback(Object.assign(new Error('not authorized'), { returnCode: 5 as const }), false);

/** Resolves with the next `event` of the client, or rejects after `ms` of real time. */
function next(client: MqttClient, event: 'connect' | 'error', ms = 3000): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no '${event}' within ${ms} ms`)), ms);
    const done = (value: unknown): void => {
      clearTimeout(timer);
      resolve(value);
    };
    if (event === 'connect') client.once('connect', done);
    else client.once('error', done);
  });
}

describe('createMqttClient', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    vi.useRealTimers();
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function broker(): Promise<TestBroker> {
    const started = await startTestBroker();
    cleanups.push(() => started.stop());
    return started;
  }

  it('keeps reconnecting after a refused CONNACK once it has been connected', async () => {
    const running = await broker();
    running.aedes.authenticate = allow;
    const transport = { kind: 'tcp', url: running.url } as const;
    const client = createMqttClient(transport, { clientId: 'transport-refused', reconnectPeriod: 20 });
    cleanups.push(() => client.endAsync(true));
    await firstConnect(client, transport);
    client.on('error', () => undefined);

    // The broker's password changes, and the connection drops: the next CONNACK refuses.
    running.aedes.authenticate = refuse;
    const refused = next(client, 'error') as Promise<Error & { code?: number }>;
    running.dropClients();
    expect((await refused).code).toBe(5);

    // The password is right again: the client comes back without anyone restarting it.
    running.aedes.authenticate = allow;
    await next(client, 'connect');
    expect(client.connected).toBe(true);
  });

  it('a refused first CONNACK still fails the start with BROKER_REFUSED, and no reconnecting follows', async () => {
    const running = await broker();
    running.aedes.authenticate = refuse;
    let attempts = 0;
    running.aedes.preConnect = (_client, _packet, callback) => {
      attempts += 1;
      callback(null, true);
    };
    const transport = { kind: 'tcp', url: running.url.replace('mqtt://', 'mqtt://user:secret@') } as const;
    const client = createMqttClient(transport, { clientId: 'transport-first-refused', reconnectPeriod: 20 });
    cleanups.push(() => client.endAsync(true));
    const error = await firstConnect(client, transport).then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(error).toBeInstanceOf(SimError);
    expect((error as SimError).code).toBe('BROKER_REFUSED');
    expect((error as SimError).message).not.toContain('secret');
    // No reconnecting follows, without waiting to see: firstConnect ended the client, and end()
    // clears mqtt.js's reconnect timer and leaves `disconnecting` set, which stops any new one.
    if (!client.disconnected) await new Promise<void>((resolve) => client.once('end', () => resolve()));
    expect(attempts).toBe(1);
    expect({ disconnecting: client.disconnecting, disconnected: client.disconnected }).toEqual({ disconnecting: true, disconnected: true });
  });

  it('gives up on a port that takes TCP but never answers after 10 s, as the lean clients do', async () => {
    const sockets = new Set<net.Socket>();
    const silent = net.createServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    cleanups.push(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    });
    const accepted = new Promise((resolve) => silent.once('connection', resolve));
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
    const transport = { kind: 'tcp', url: `mqtt://127.0.0.1:${(silent.address() as net.AddressInfo).port}` } as const;
    const client = createMqttClient(transport, { clientId: 'transport-silent', reconnectPeriod: 1000 });
    cleanups.push(() => client.endAsync(true));
    let outcome: unknown = 'pending';
    void firstConnect(client, transport).then(
      () => (outcome = 'connected'),
      (error: unknown) => (outcome = error),
    );
    await accepted;
    expect(CONNECT_TIMEOUT_MS).toBe(10_000);
    await vi.advanceTimersByTimeAsync(CONNECT_TIMEOUT_MS - 1);
    expect(outcome).toBe('pending');
    await vi.advanceTimersByTimeAsync(1);
    expect(outcome).toBeInstanceOf(SimError);
    expect((outcome as SimError).code).toBe('BROKER_UNREACHABLE');
    expect((outcome as SimError).message).toMatch(/connack timeout/);
  });
});
