/**
 * What arrives from the broker is checked before it is believed (DESIGN.md, "Trust model"): real
 * publishes from an outside mqtt.js client against the embedded broker in its open loopback mode,
 * where anyone may publish on a station's topics. The gateway refuses, drops and counts them.
 */
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import mqtt, { type MqttClient } from 'mqtt';
import { startEmbeddedBroker, type InThreadBroker } from '../../../src/broker/embedded-broker.js';
import { startMqttGateway, type StartedMqttGateway } from '../../../src/service/station-gateway.js';
import { PLAUSIBILITY_LIMITS } from '../../../src/service/gateway/plausibility.js';
import { startFakeStation, type FakeStation } from '../../helpers/fake-station.js';
import { testFixture } from '../../helpers/test-fixture.js';
import { eventually } from '../../helpers/eventually.js';

let broker: InThreadBroker;
let gateway: StartedMqttGateway;
let station: FakeStation;
let outsider: MqttClient;
let warnings: string[];

beforeEach(async () => {
  broker = await startEmbeddedBroker({ port: 0 });
  station = await startFakeStation({ url: broker.url, token: 'S-1', stationId: 1, batteryVoltage: 12.4, locks: { '1': 'locked', '2': 'locked' } });
  warnings = [];
  const logger = { debug: () => {}, info: () => {}, warn: (line: string) => warnings.push(line), error: (line: string) => warnings.push(line) };
  gateway = await startMqttGateway({ mqttUrl: broker.url, fixture: testFixture(), commandTimeoutMs: 1000, logger });
  outsider = await mqtt.connectAsync(broker.url, { clientId: 'outsider', reconnectPeriod: 0 });
});

afterEach(async () => {
  await outsider.endAsync(true);
  await gateway.stop();
  await station.stop();
  await broker.stop();
});

const status = (fields: Record<string, unknown>): string =>
  JSON.stringify({ stationId: 1, status: 'online', batteryVoltage: 12.4, lastConnection: new Date().toISOString(), ...fields });

describe('statuses', () => {
  test.each([
    ['another stationId', { stationId: 6666 }, 'wrongStation'],
    ['a voltage over the limit', { batteryVoltage: 150 }, 'outOfRange'],
    ['a negative voltage', { batteryVoltage: -1 }, 'outOfRange'],
    ['a markup timestamp', { lastConnection: '<script>alert(1)</script>' }, 'badTimestamp'],
    ['a 100-character timestamp', { lastConnection: `2026-01-01T00:00:00.000Z${' '.repeat(76)}` }, 'malformed'],
    ['a timestamp that is not UTC ISO 8601', { lastConnection: '2026-01-01 10:00' }, 'badTimestamp'],
    ['a timestamp an hour ahead', { lastConnection: new Date(Date.now() + 3_600_000).toISOString() }, 'badTimestamp'],
    ['a fractional stationId', { stationId: 1.5 }, 'malformed'],
  ] as const)('a status with %s is refused and counted; the station keeps its real values', async (_what, fields, reason) => {
    await outsider.publishAsync('stations/S-1/status', status({ ...fields, status: 'offline' }), { qos: 1, retain: true });
    await eventually(() => expect(gateway.refusedMessages[reason]).toBe(1));
    expect(gateway.getStation('S-1')).toMatchObject({ stationId: 1, status: 'online', batteryVoltage: 12.4 });
  });

  test('an empty retained status from anyone does not take a live station offline; its own offline status does', async () => {
    await outsider.publishAsync('stations/S-1/status', '', { qos: 1, retain: true });
    await eventually(() => expect(gateway.refusedMessages.emptyPayload).toBe(1));
    expect(gateway.getStation('S-1')?.status).toBe('online');
    await station.publishStatus('offline');
    await eventually(() => expect(gateway.getStation('S-1')?.status).toBe('offline'));
  });

  test('an oversized status is dropped unread and counted; a 1 MB retained one is dropped too', async () => {
    const padded = status({ lastConnection: 'x'.repeat(PLAUSIBILITY_LIMITS.maxPayloadBytes) });
    await outsider.publishAsync('stations/S-1/status', padded, { qos: 1, retain: true });
    await eventually(() => expect(gateway.refusedMessages.oversized).toBe(1));
    // 1 MB: a broker with a packet size limit closes the publisher instead; either way it is not believed.
    let closed = false;
    outsider.once('close', () => (closed = true));
    outsider.publish('stations/S-1/status', status({ lastConnection: 'y'.repeat(1 << 20) }), { qos: 0, retain: true });
    await eventually(() => expect(closed || gateway.refusedMessages.oversized === 2).toBe(true), { timeout: 15_000 });
    expect(gateway.getStation('S-1')).toMatchObject({ stationId: 1, status: 'online', batteryVoltage: 12.4 });
    expect(warnings.join('\n')).not.toContain('yyyy');
  });

  test('a status for a station the fixture does not list is counted, and logged once a minute at most', async () => {
    for (let i = 0; i < 5; i += 1) await outsider.publishAsync(`stations/NOPE-${i}/status`, status({}), { qos: 1 });
    await eventually(() => expect(gateway.refusedMessages.unknownStation).toBe(5));
    expect(warnings.filter((line) => line.includes('unknownStation'))).toHaveLength(1);
    expect(warnings.join('\n')).not.toContain('NOPE');
  });
});

describe('lock states', () => {
  test('20,000 phantom locks from one client: the gateway keeps none, counts them all, and still serves', async () => {
    const phantoms = 20_000;
    const lastUpdated = new Date().toISOString();
    for (let i = 0; i < phantoms; i += 1) {
      outsider.publish(`stations/S-1/locks/p${i}/state`, JSON.stringify({ lockId: `p${i}`, status: 'unlocked', lastUpdated }), { qos: 0, retain: true });
    }
    await eventually(() => expect(gateway.refusedMessages.unknownLock).toBe(phantoms), { timeout: 30_000, what: 'every phantom lock to be seen' });
    const view = gateway.getStation('S-1')!;
    // S-1 has two fixture locks: those, and only those.
    expect(view.locks.map((lock) => lock.lockId)).toEqual(['1', '2']);
    await expect(gateway.unlock('S-1', 'p7')).rejects.toMatchObject({ code: 'LOCK_NOT_FOUND' });
    // Not blocked: an unlock still goes through at once.
    expect(await gateway.unlock('S-1', '1')).toMatchObject({ success: true });
    // One warning for the whole flood.
    expect(warnings.filter((line) => line.includes('unknownLock'))).toHaveLength(1);
  }, 60_000);

  test('a lock state naming another lock than its topic, or with a future timestamp, is refused', async () => {
    await outsider.publishAsync('stations/S-1/locks/1/state', JSON.stringify({ lockId: '2', status: 'unlocked', lastUpdated: new Date().toISOString() }), { qos: 1 });
    await outsider.publishAsync('stations/S-1/locks/1/state', JSON.stringify({ lockId: '1', status: 'unlocked', lastUpdated: '2999-01-01T00:00:00Z' }), { qos: 1 });
    await eventually(() => expect([gateway.refusedMessages.unknownLock, gateway.refusedMessages.badTimestamp]).toEqual([1, 1]));
    expect(gateway.getStation('S-1')?.locks[0]?.status).toBe('locked');
  });
});

describe('acks', () => {
  test('an ack nobody asked for, and a contradicting second ack, are refused and counted; the first ack stands', async () => {
    await outsider.subscribeAsync('stations/S-1/acks', { qos: 1 });
    const seen = new Promise<string>((resolve) => outsider.once('message', (_topic, payload) => resolve(payload.toString())));
    await outsider.publishAsync('stations/S-1/acks', JSON.stringify({ commandId: 'made-up', lockId: '1', accepted: true }), { qos: 1 });
    await eventually(() => expect(gateway.refusedMessages.unexpectedAck).toBe(1));
    await seen;

    const result = await gateway.unlock('S-1', '1');
    expect(result).toMatchObject({ success: true });
    // The outsider read the real ack (an open broker lets it) and contradicts it.
    await outsider.publishAsync('stations/S-1/acks', JSON.stringify({ commandId: result.commandId, lockId: '1', accepted: false, reason: 'jammed' }), { qos: 1 });
    await eventually(() => expect(gateway.refusedMessages.duplicateAck).toBe(1));
  });

  test('an ack for a command sent to another station, published on that other station\'s ack topic, settles nothing', async () => {
    station.options.mode = 'silent';
    const answer = gateway.unlock('S-1', '1');
    await eventually(() => expect(station.commands).toHaveLength(1));
    const { commandId } = station.commands[0]!;
    await outsider.publishAsync('stations/S-JAM/acks', JSON.stringify({ commandId, lockId: '1', accepted: true }), { qos: 1 });
    await eventually(() => expect(gateway.refusedMessages.unexpectedAck).toBe(1));
    // Nobody answered on S-1's own ack topic: the outcome is unknown, not the spoofed success.
    expect(await answer).toMatchObject({ success: false, failure: 'ACK_TIMEOUT' });
  });
});
