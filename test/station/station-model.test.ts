import { describe, expect, it } from 'vitest';
import { StationModel } from '../../src/station/station-model.js';
import { ManualClock } from '../../src/shared/clock.js';
import { seededRandom } from '../../src/station/random.js';
import { BUILTIN_BEHAVIOUR } from '../../src/fixture/load-fixture.js';
import type { StationConfig, ResolvedBehaviour } from '../../src/fixture/fixture-schema.js';
import type { AckPayload, LockStatePayload, StatusPayload } from '../../src/contract/payloads.js';

function makeStation(overrides: Partial<StationConfig> = {}, behaviour: Partial<ResolvedBehaviour> = {}) {
  const clock = new ManualClock();
  const out = { status: [] as StatusPayload[], locks: [] as LockStatePayload[], acks: [] as AckPayload[] };
  const config: StationConfig = {
    token: 'T-1',
    stationId: 1,
    batteryVoltage: 12.6,
    initialStatus: 'online',
    locks: [
      { lockId: '1', status: 'locked' },
      { lockId: '2', status: 'jammed' },
    ],
    ...overrides,
    behaviour: { ...BUILTIN_BEHAVIOUR, unlockDelayMs: 1000, relockMs: 5000, heartbeatMs: 30_000, ...behaviour },
  };
  const model = new StationModel({
    config,
    clock,
    random: seededRandom(1, config.stationId),
    output: { status: (p) => out.status.push(p), lockState: (p) => out.locks.push(p), ack: (p) => out.acks.push(p) },
  });
  return { model, clock, out };
}

describe('StationModel', () => {
  it('publishes status and every lock when it connects', () => {
    const { model, out } = makeStation();
    model.connected();
    expect(out.status).toHaveLength(1);
    expect(out.status[0]).toMatchObject({ stationId: 1, status: 'online', batteryVoltage: 12.6 });
    expect(out.locks.map((l) => [l.lockId, l.status])).toEqual([
      ['1', 'locked'],
      ['2', 'jammed'],
    ]);
  });

  it('acks at once, unlocks after the delay and relocks after the relock time', () => {
    const { model, clock, out } = makeStation();
    model.connected();
    out.locks.length = 0;
    const start = clock.now();
    model.handleUnlock('1', 'cmd-1');
    expect(out.acks).toEqual([{ commandId: 'cmd-1', lockId: '1', accepted: true }]);
    expect(out.locks).toEqual([]);
    clock.advance(999);
    expect(out.locks).toEqual([]);
    clock.advance(1);
    expect(out.locks).toEqual([{ lockId: '1', status: 'unlocked', lastUpdated: new Date(start + 1000).toISOString() }]);
    clock.advance(4999);
    expect(out.locks).toHaveLength(1);
    clock.advance(1);
    expect(out.locks[1]).toEqual({ lockId: '1', status: 'locked', lastUpdated: new Date(start + 6000).toISOString() });
    expect(clock.pending).toBe(1); // only the heartbeat is left
  });

  it('rejects a jammed lock, an unknown lock and a low battery with a reason', () => {
    const { model, out } = makeStation();
    model.connected();
    model.handleUnlock('2', 'a');
    model.handleUnlock('9', 'b');
    expect(out.acks).toEqual([
      { commandId: 'a', lockId: '2', accepted: false, reason: 'jammed' },
      { commandId: 'b', lockId: '9', accepted: false, reason: 'unknown_lock' },
    ]);
    const low = makeStation({ batteryVoltage: 11.0 });
    low.model.connected();
    low.model.handleUnlock('1', 'c');
    expect(low.out.acks).toEqual([{ commandId: 'c', lockId: '1', accepted: false, reason: 'low_battery' }]);
    low.clock.advance(10_000);
    expect(low.out.locks.filter((l) => l.status === 'unlocked')).toEqual([]);
  });

  it('acknowledges a redelivered command id again but executes it once', () => {
    const { model, clock, out } = makeStation();
    model.connected();
    out.locks.length = 0;
    model.handleUnlock('1', 'dup');
    model.handleUnlock('1', 'dup');
    expect(out.acks).toEqual([
      { commandId: 'dup', lockId: '1', accepted: true },
      { commandId: 'dup', lockId: '1', accepted: true },
    ]);
    clock.advance(10_000);
    expect(out.locks.map((l) => l.status)).toEqual(['unlocked', 'locked']);
    expect(model.batteryVoltage).toBeCloseTo(12.6 - 0.01 - (10 / 3600) * 0.005, 6);
  });

  it('remembers the last 32 command ids: an id older than that counts as a new command', () => {
    const { model, out } = makeStation();
    model.connected();
    model.handleUnlock('2', 'old'); // jammed lock: rejected, so nothing else changes
    for (let i = 0; i < 31; i += 1) model.handleUnlock('2', `c${i}`);
    const before = model.batteryVoltage;
    model.handleUnlock('2', 'old'); // still remembered: the same answer again
    expect(out.acks.at(-1)).toEqual({ commandId: 'old', lockId: '2', accepted: false, reason: 'jammed' });
    model.handleUnlock('2', 'c31');
    model.handleUnlock('2', 'c32'); // pushes 'old' out
    model.physical('2', 'unjam');
    model.handleUnlock('2', 'old');
    expect(out.acks.at(-1)).toEqual({ commandId: 'old', lockId: '2', accepted: true });
    expect(model.batteryVoltage).toBeLessThan(before);
  });

  it('drains the battery per unlock and per hour, and rejects below the cutoff', () => {
    const { model, clock, out } = makeStation({ batteryVoltage: 11.52 }, {
      battery: { drainPerUnlockV: 0.01, drainPerHourV: 0.1, cutoffV: 11.5 },
      heartbeatMs: 0,
    });
    model.connected();
    model.handleUnlock('1', 'one');
    expect(model.batteryVoltage).toBeCloseTo(11.51, 6);
    clock.advance(3_600_000);
    expect(model.batteryVoltage).toBeCloseTo(11.41, 6);
    model.handleUnlock('1', 'two');
    expect(out.acks.at(-1)).toEqual({ commandId: 'two', lockId: '1', accepted: false, reason: 'low_battery' });
    expect(out.status.at(-1)?.batteryVoltage).toBe(11.51);
  });

  it('reports its battery after an unlock only when the reading changed', () => {
    const drained = makeStation({}, { battery: { drainPerUnlockV: 0.01, drainPerHourV: 0, cutoffV: 11.5 }, heartbeatMs: 0 });
    drained.model.connected();
    drained.model.handleUnlock('1', 'a');
    expect(drained.out.status.map((s) => s.batteryVoltage)).toEqual([12.6, 12.59]);

    const steady = makeStation({}, { battery: { drainPerUnlockV: 0, drainPerHourV: 0, cutoffV: 11.5 }, heartbeatMs: 0 });
    steady.model.connected();
    steady.model.handleUnlock('1', 'a');
    steady.clock.advance(10_000);
    expect(steady.out.status.map((s) => s.batteryVoltage)).toEqual([12.6]);
    expect(steady.out.locks.filter((l) => l.lockId === '1').map((l) => l.status)).toEqual(['locked', 'unlocked', 'locked']);
  });

  it('republishes its status on every heartbeat with a fresh lastConnection', () => {
    const { model, clock, out } = makeStation({}, { heartbeatMs: 30_000 });
    model.connected();
    const first = out.status.length;
    clock.advance(90_000);
    const beats = out.status.slice(first);
    expect(beats).toHaveLength(3);
    expect(beats.map((s) => Date.parse(s.lastConnection) - clock.now())).toEqual([-60_000, -30_000, 0]);
    model.disconnected();
    clock.advance(90_000);
    expect(out.status.length).toBe(first + 3);
  });

  it('draws a ranged delay from the seeded source: same seed, same delays', () => {
    const timeline = (seed: number) => {
      const clock = new ManualClock();
      const times: number[] = [];
      const model = new StationModel({
        config: {
          token: 'R', stationId: 7, batteryVoltage: 12.6, initialStatus: 'online',
          locks: [{ lockId: '1', status: 'locked' }],
          behaviour: { ...BUILTIN_BEHAVIOUR, unlockDelayMs: { min: 100, max: 5000 }, relockMs: { min: 10, max: 20 }, heartbeatMs: 0 },
        },
        clock,
        random: seededRandom(seed, 7),
        output: { status: () => {}, ack: () => {}, lockState: (p) => p.status === 'unlocked' && times.push(clock.now()) },
      });
      model.connected();
      const start = clock.now();
      for (let i = 0; i < 5; i += 1) {
        model.handleUnlock('1', `c${i}`);
        clock.advance(6000);
      }
      return times.map((t) => t - start);
    };
    expect(timeline(1)).toEqual(timeline(1));
    expect(timeline(1)).not.toEqual(timeline(2));
    for (const [i, t] of timeline(3).entries()) expect(t - i * 6000).toBeGreaterThanOrEqual(100);
  });

  it('stop() clears every timer', () => {
    const { model, clock } = makeStation();
    model.connected();
    model.handleUnlock('1', 'x');
    expect(clock.pending).toBe(2);
    model.stop();
    expect(clock.pending).toBe(0);
  });
});
