/**
 * What docs/mqtt-security.md ("Protocol versions") and README say the embedded broker speaks:
 * MQTT 3.1 and 3.1.1; an MQTT 5 client is refused with "Unacceptable protocol version", so a
 * backend that speaks MQTT 5 learns at once that it needs an external broker.
 */
import mqtt from 'mqtt';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startEmbeddedBroker } from '../../src/broker/embedded-broker.js';

let broker: Awaited<ReturnType<typeof startEmbeddedBroker>>;

beforeAll(async () => {
  broker = await startEmbeddedBroker({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await broker?.stop();
});

it.each([
  { version: 'MQTT 3.1', protocolVersion: 3 as const, protocolId: 'MQIsdp' as const },
  { version: 'MQTT 3.1.1', protocolVersion: 4 as const, protocolId: 'MQTT' as const },
])('accepts an $version client', async ({ protocolVersion, protocolId }) => {
  const client = await mqtt.connectAsync(broker.url, { protocolVersion, protocolId, reconnectPeriod: 0, connectTimeout: 5000 }, false);
  expect(client.connected).toBe(true);
  await client.endAsync();
});

it('refuses an MQTT 5 client with "Unacceptable protocol version"', async () => {
  const connecting = mqtt.connectAsync(broker.url, { protocolVersion: 5, reconnectPeriod: 0, connectTimeout: 5000 }, false);
  await expect(connecting).rejects.toThrow(/Unacceptable protocol version/);
});
