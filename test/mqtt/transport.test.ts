/**
 * The mqtt.js clients of the control plane and the fleet agent (`createMqttClient`): after a
 * refused CONNACK on a reconnect they keep trying, as the lean clients do, while a refusal of the
 * first connection still fails the start with one clear error.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { MqttClient } from 'mqtt';
import { createMqttClient, firstConnect } from '../../src/mqtt/transport.js';
import { SimError } from '../../src/errors.js';
import { startTestBroker, type TestBroker } from '../service/support/test-broker.js';

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
    // Ten reconnect periods later, still the one attempt.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(attempts).toBe(1);
    expect(client.disconnecting || client.disconnected).toBe(true);
  });
});
