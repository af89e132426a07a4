/**
 * Commands carry `sentAt`; a station never acts on one older than `behaviour.commandTtlMs`
 * (DESIGN.md, "Trust model"), measured on its own (simulated) clock. The model alone, then a
 * station over a real broker with commands from an outside client.
 */
import { describe, expect, it } from 'vitest';
import { COMMAND_CLOCK_SKEW_MS, StationModel } from '../../src/station/station-model.js';
import { ManualClock } from '../../src/shared/clock.js';
import { seededRandom } from '../../src/station/random.js';
import mqtt from 'mqtt';
import { parseFixture } from '../../src/fixture/load-fixture.js';
import { startEmbeddedBroker } from '../../src/broker/embedded-broker.js';
import { StationClient } from '../../src/mqtt/station-client.js';
import { eventually } from '../helpers/eventually.js';
import { oneLockStation } from '../helpers/station-config.js';
import type { StationConfig } from '../../src/fixture/fixture-schema.js';
import type { AckPayload, LockStatePayload } from '../../src/contract/payloads.js';

function makeStation(commandTtlMs = 30_000) {
  const clock = new ManualClock(Date.parse('2026-01-01T00:00:00.000Z'));
  const out = { locks: [] as LockStatePayload[], acks: [] as AckPayload[] };
  const config: StationConfig = oneLockStation({ commandTtlMs });
  const model = new StationModel({
    config,
    clock,
    random: seededRandom(1, 1),
    output: { status: () => {}, lockState: (p) => out.locks.push(p), ack: (p) => out.acks.push(p) },
  });
  model.connected();
  out.locks.length = 0;
  return { model, clock, out };
}

const iso = (ms: number): string => new Date(ms).toISOString();

describe('command TTL', () => {
  it('carries out a command within its TTL, the TTL itself included', () => {
    const { model, clock, out } = makeStation(30_000);
    model.handleUnlock('1', 'fresh', iso(clock.now() - 30_000));
    expect(out.acks).toEqual([{ commandId: 'fresh', lockId: '1', accepted: true }]);
    clock.advance(1000);
    expect(out.locks.map((lock) => lock.status)).toEqual(['unlocked']);
  });

  it('refuses a command older than its TTL with reason "expired" and never acts on it', () => {
    const { model, clock, out } = makeStation(30_000);
    const sentAt = iso(clock.now());
    clock.advance(30_001); // the command waited (a persistent session, a paused process)
    out.locks.length = 0;
    model.handleUnlock('1', 'late', sentAt);
    expect(out.acks).toEqual([{ commandId: 'late', lockId: '1', accepted: false, reason: 'expired' }]);
    clock.advance(60_000);
    expect(out.locks.filter((lock) => lock.status === 'unlocked')).toEqual([]);
    // A QoS 1 redelivery of it gets the same answer, and still nothing opens.
    model.handleUnlock('1', 'late', sentAt);
    expect(out.acks[1]).toEqual({ commandId: 'late', lockId: '1', accepted: false, reason: 'expired' });
    clock.advance(5000);
    expect(out.locks.filter((lock) => lock.status === 'unlocked')).toEqual([]);
  });

  it('follows the fixture TTL and the simulated clock (clock advance)', () => {
    const { model, clock, out } = makeStation(500);
    const sentAt = iso(clock.now());
    clock.advance(501);
    model.handleUnlock('1', 'c', sentAt);
    expect(out.acks[0]).toMatchObject({ accepted: false, reason: 'expired' });
  });

  it('takes a command without sentAt as sent now (external publishers that predate the field)', () => {
    const { model, out } = makeStation();
    model.handleUnlock('1', 'legacy');
    expect(out.acks).toEqual([{ commandId: 'legacy', lockId: '1', accepted: true }]);
  });

  it.each(['yesterday', '2026-01-01 00:00:00', '2026-01-01T00:00:00+01:00', '2026-13-45T99:00:00Z', ''])('refuses a malformed sentAt %j as "invalid"', (sentAt) => {
    const { model, clock, out } = makeStation();
    model.handleUnlock('1', 'odd', sentAt);
    expect(out.acks).toEqual([{ commandId: 'odd', lockId: '1', accepted: false, reason: 'invalid' }]);
    clock.advance(5000);
    expect(out.locks).toEqual([]);
  });

  it('refuses a command from the future beyond the clock skew as "invalid", and takes one within it', () => {
    const { model, clock, out } = makeStation();
    model.handleUnlock('1', 'ahead', iso(clock.now() + COMMAND_CLOCK_SKEW_MS + 1));
    model.handleUnlock('1', 'skewed', iso(clock.now() + COMMAND_CLOCK_SKEW_MS));
    expect(out.acks).toEqual([
      { commandId: 'ahead', lockId: '1', accepted: false, reason: 'invalid' },
      { commandId: 'skewed', lockId: '1', accepted: true },
    ]);
  });
});

describe('commands over MQTT', () => {
  it('an outside client: an expired command and an oversized one are not acted on; a fresh one is', async () => {
    const broker = await startEmbeddedBroker({ port: 0 });
    const [config] = parseFixture({ defaults: { heartbeatMs: 0, commandTtlMs: 30_000 }, stations: [{ token: 'TTL-1', stationId: 1, locks: [{ lockId: '1' }] }] }).stations;
    const clock = new ManualClock(Date.now());
    const station = new StationClient({ config: config!, transport: { kind: 'tcp', url: broker.url }, clock, random: seededRandom(1, 1) });
    const outsider = await mqtt.connectAsync(broker.url, { clientId: 'outsider', reconnectPeriod: 0 });
    try {
      await station.start();
      const acks: AckPayload[] = [];
      outsider.on('message', (_topic, payload) => acks.push(JSON.parse(payload.toString()) as AckPayload));
      await outsider.subscribeAsync('stations/TTL-1/acks', { qos: 1 });
      const topic = 'stations/TTL-1/locks/1/unlock';
      await outsider.publishAsync(topic, JSON.stringify({ commandId: 'old', sentAt: iso(clock.now() - 60_000) }), { qos: 1 });
      await outsider.publishAsync(topic, JSON.stringify({ commandId: 'big', sentAt: iso(clock.now()), pad: 'x'.repeat(5000) }), { qos: 1 });
      await outsider.publishAsync(topic, JSON.stringify({ commandId: 'fresh', sentAt: iso(clock.now()) }), { qos: 1 });
      await eventually(() => expect(acks.map((ack) => ack.commandId)).toContain('fresh'));
      expect(acks).toEqual([
        { commandId: 'old', lockId: '1', accepted: false, reason: 'expired' },
        { commandId: 'fresh', lockId: '1', accepted: true },
      ]);
    } finally {
      await outsider.endAsync(true);
      await station.stop();
      await broker.stop();
    }
  });
});
