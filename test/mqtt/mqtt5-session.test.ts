/**
 * The MQTT 5 session (src/mqtt/mqtt5-session.ts) against a real Mosquitto 2: a clean session's
 * unacknowledged publication fails when the connection is lost and is not sent again after the
 * reconnect (MQTT 5.0, 3.1.2.4), as with the lean client, although mqtt.js alone would replay it.
 */
import { randomUUID } from 'node:crypto';
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSession } from '../../src/mqtt/transport.js';
import type { MqttSession } from '../../src/mqtt/lean-client/index.js';
import { eventually } from '../helpers/eventually.js';
import { mosquittoAvailable, startMosquitto, type RunningMosquitto } from '../helpers/mosquitto.js';

const available = mosquittoAvailable();

function connected(session: MqttSession): Promise<void> {
  return new Promise((resolve) => session.once('connect', () => resolve()));
}

describe.runIf(available)('the MQTT 5 session, clean', () => {
  let mosquitto: RunningMosquitto;

  beforeAll(async () => {
    mosquitto = await startMosquitto();
  });

  afterAll(async () => {
    await mosquitto?.stop();
  });

  it('fails a publication the broker never acknowledged when the connection drops, and does not replay it', async () => {
    const session = createSession({ kind: 'tcp', url: mosquitto.url, protocolVersion: 5 }, { clientId: `clean-${randomUUID()}`, clean: true, reconnectPeriod: 3000 });
    session.on('error', () => undefined); // the reconnects while the broker is down fail; the test watches the outcome
    try {
      await connected(session);
      // Stopped, the broker keeps the socket open and acknowledges nothing.
      mosquitto.signal('SIGSTOP');
      const outcome = new Promise<Error | undefined>((resolve) => session.publish('mqtt5/lost', 'unacknowledged', { qos: 1 }, resolve));
      // Killed while stopped (SIGKILL needs no SIGCONT): the PUBLISH is never acknowledged.
      await mosquitto.restart();
      expect((await outcome)?.message).toBe('Message removed');
      // An observer on the new broker before the session is back (it waits 3 s to reconnect): a
      // replay would reach the observer before the marker.
      expect(session.connected).toBe(false);
      const observer = await mqtt.connectAsync(mosquitto.url, { protocolVersion: 5, reconnectPeriod: 0 });
      const seen: string[] = [];
      observer.on('message', (topic) => seen.push(topic));
      await observer.subscribeAsync('mqtt5/#', { qos: 1 });
      await eventually(() => session.connected, { what: 'the session back on the restarted broker', timeout: 10_000 });
      await session.publishAsync('mqtt5/marker', 'after the reconnect', { qos: 1 });
      await eventually(() => expect(seen).toContain('mqtt5/marker'), { what: 'the marker' });
      expect(seen).toEqual(['mqtt5/marker']);
      await observer.endAsync();
    } finally {
      await session.endAsync(true);
    }
  });
});
