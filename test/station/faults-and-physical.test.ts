import { describe, expect, it } from 'vitest';
import { StationModel } from '../../src/station/station-model.js';
import { ManualClock } from '../../src/shared/clock.js';
import { seededRandom } from '../../src/station/random.js';
import { BUILTIN_BEHAVIOUR } from '../../src/fixture/load-fixture.js';
import type { AckPayload, LockStatePayload, StatusPayload } from '../../src/contract/payloads.js';

function station(seed = 1) {
  const clock = new ManualClock();
  const out = { status: [] as StatusPayload[], locks: [] as LockStatePayload[], acks: [] as AckPayload[], faults: [] as string[] };
  const model = new StationModel({
    config: {
      token: 'F', stationId: 1, batteryVoltage: 12.6, initialStatus: 'online',
      locks: [{ lockId: '1', status: 'locked' }, { lockId: '2', status: 'locked' }],
      behaviour: { ...BUILTIN_BEHAVIOUR, unlockDelayMs: 100, relockMs: 1000, heartbeatMs: 0 },
    },
    clock,
    random: seededRandom(seed, 1),
    output: {
      status: (p) => out.status.push(p),
      lockState: (p) => out.locks.push(p),
      ack: (p) => out.acks.push(p),
      faultApplied: (e) => out.faults.push(`${e.fault}:${e.lockId ?? ''}`),
    },
  });
  model.connected();
  out.locks.length = 0;
  out.status.length = 0;
  return { model, clock, out };
}

describe('faults', () => {
  it('dropCommands with a count drops the next N commands, then goes away', () => {
    const { model, clock, out } = station();
    model.addFault({ kind: 'dropCommands', count: 2 });
    model.handleUnlock('1', 'a');
    model.handleUnlock('1', 'b');
    model.handleUnlock('1', 'c');
    clock.advance(200);
    expect(out.acks.map((a) => a.commandId)).toEqual(['c']);
    expect(out.faults).toEqual(['dropCommands:1', 'dropCommands:1']);
    expect(model.snapshot().faults).toEqual([]);
  });

  it('delayAcks holds the ack back; reject answers with the reason; ackNoOpen never opens', () => {
    const { model, clock, out } = station();
    const delayed = model.addFault({ kind: 'delayAcks', delayMs: 500, lockId: '1' });
    model.handleUnlock('1', 'slow');
    expect(out.acks).toEqual([]);
    clock.advance(500);
    expect(out.acks).toEqual([{ commandId: 'slow', lockId: '1', accepted: true }]);
    model.removeFault(delayed.id);

    model.addFault({ kind: 'reject', reason: 'maintenance', count: 1 });
    model.handleUnlock('2', 'no');
    expect(out.acks.at(-1)).toEqual({ commandId: 'no', lockId: '2', accepted: false, reason: 'maintenance' });

    model.addFault({ kind: 'ackNoOpen', lockId: '2' });
    model.handleUnlock('2', 'ghost');
    expect(out.acks.at(-1)).toEqual({ commandId: 'ghost', lockId: '2', accepted: true });
    clock.advance(5000);
    expect(out.locks.filter((l) => l.lockId === '2')).toEqual([]);
  });

  it('applies a probability from the seeded source: same seed, same commands affected', () => {
    const run = (seed: number) => {
      const { model, out } = station(seed);
      model.addFault({ kind: 'dropCommands', probability: 0.5 });
      for (let i = 0; i < 40; i += 1) model.handleUnlock('1', `c${i}`);
      return out.acks.map((a) => a.commandId);
    };
    expect(run(3)).toEqual(run(3));
    expect(run(3).length).toBeGreaterThan(5);
    expect(run(3).length).toBeLessThan(35);
  });

  it('latency delays what the station sends; duplicateState sends each state twice', () => {
    const { model, clock, out } = station();
    model.addFault({ kind: 'latency', delayMs: 300 });
    model.handleUnlock('1', 'l');
    expect(out.acks).toEqual([]);
    clock.advance(300);
    expect(out.acks).toHaveLength(1);
    // The lock itself is not slowed down: unlocked at 100 ms, seen at 400 ms.
    expect(out.locks.map((l) => [l.status, Date.parse(l.lastUpdated)])).toEqual([]);
    clock.advance(100);
    expect(out.locks.map((l) => l.status)).toEqual(['unlocked']);
    clock.advance(2000);
    model.clearFaults();
    out.locks.length = 0;
    model.addFault({ kind: 'duplicateState' });
    model.handleUnlock('1', 'd');
    clock.advance(2000);
    expect(out.locks.map((l) => l.status)).toEqual(['unlocked', 'unlocked', 'locked', 'locked']);
  });
});

describe('command ids', () => {
  it('a redelivered command is acked again and run once; the same id for another lock is another command', () => {
    const { model, clock, out } = station();
    model.handleUnlock('1', 'same');
    model.handleUnlock('1', 'same'); // QoS 1 redelivery
    model.handleUnlock('2', 'same'); // a client reusing its id for lock 2
    clock.advance(200);
    expect(out.acks).toEqual([
      { commandId: 'same', lockId: '1', accepted: true },
      { commandId: 'same', lockId: '1', accepted: true },
      { commandId: 'same', lockId: '2', accepted: true },
    ]);
    expect(out.locks.map((lock) => `${lock.lockId}:${lock.status}`)).toEqual(['1:unlocked', '2:unlocked']);
  });
  it('a redelivery after the same id was used for another lock is still acked again, not run again', () => {
    const { model, clock, out } = station();
    model.handleUnlock('1', 'x');
    model.handleUnlock('2', 'x'); // another command that reuses the id
    clock.advance(200);
    const battery = model.batteryVoltage;
    model.handleUnlock('1', 'x'); // the first one redelivered
    expect(out.acks.map((ack) => `${ack.lockId}:${ack.commandId}:${ack.accepted}`)).toEqual(['1:x:true', '2:x:true', '1:x:true']);
    clock.advance(950); // 1,150 ms: both locks relock 1,000 ms after they opened at 100 ms
    // Not run again: no battery drawn, and lock 1's relock was not pushed back.
    expect(model.batteryVoltage).toBeCloseTo(battery, 4); // an unlock draws 0.01 V
    expect(out.locks.map((lock) => `${lock.lockId}:${lock.status}`)).toEqual(['1:unlocked', '2:unlocked', '1:locked', '2:locked']);
  });
});

describe('output faults keep the order of what the station sends', () => {
  it('a single held-back ack holds back the status and the unlocked behind it; a lock fault leaves the status alone', () => {
    const clock = new ManualClock();
    // The order of every output, across kinds.
    const order: string[] = [];
    const record = (kind: string) => (payload: object) => {
      const { status } = payload as { status?: string };
      order.push(status ? `${kind}:${status}` : kind);
    };
    const ordered = new StationModel({
      config: {
        token: 'O', stationId: 2, batteryVoltage: 12.6, initialStatus: 'online',
        locks: [{ lockId: '1', status: 'locked' }],
        behaviour: { ...BUILTIN_BEHAVIOUR, unlockDelayMs: 20, relockMs: 200, heartbeatMs: 0 },
      },
      clock,
      random: seededRandom(1, 2),
      output: { status: record('status'), lockState: record('lock'), ack: record('ack') },
    });
    ordered.connected();
    order.length = 0;
    ordered.addFault({ kind: 'latency', delayMs: 100, count: 1 });
    ordered.handleUnlock('1', 'c1');
    clock.advance(1000);
    // The battery status (drain per unlock) and `unlocked` were ready before the ack went out: they follow it.
    expect(order).toEqual(['ack', 'status:online', 'lock:unlocked', 'lock:locked']);
    expect(ordered.snapshot().faults).toEqual([]);

    order.length = 0;
    const duplicate = ordered.addFault({ kind: 'duplicateState', lockId: '1', count: 2 });
    ordered.setBattery(12.0); // a status: not the lock's, and not a lock state
    ordered.handleUnlock('1', 'c2');
    clock.advance(1000);
    expect(order).toEqual(['status:online', 'ack', 'status:online', 'lock:unlocked', 'lock:unlocked', 'lock:locked', 'lock:locked']);
    expect(ordered.snapshot().faults.find((fault) => fault.id === duplicate.id)).toBeUndefined();
  });
});

describe('physical actions, battery and reset', () => {
  it('jam, unjam, force open and force close publish the new state', () => {
    const { model, clock, out } = station();
    expect(model.physical('1', 'jam')).toBe(true);
    model.handleUnlock('1', 'j');
    expect(out.acks.at(-1)).toMatchObject({ accepted: false, reason: 'jammed' });
    model.physical('1', 'unjam');
    model.physical('2', 'forceOpen');
    expect(model.snapshot().timers).toEqual([{ kind: 'relock', lockId: '2', dueAt: new Date(clock.now() + 1000).toISOString() }]);
    model.physical('2', 'forceClose');
    expect(model.snapshot().timers).toEqual([]);
    expect(out.locks.map((l) => `${l.lockId}:${l.status}`)).toEqual(['1:jammed', '1:locked', '2:unlocked', '2:locked']);
    expect(model.physical('9', 'jam')).toBe(false);
  });

  it('setBattery publishes the new voltage; below the cutoff unlocks are rejected', () => {
    const { model, out } = station();
    model.setBattery(11.0);
    expect(out.status.at(-1)?.batteryVoltage).toBe(11);
    model.handleUnlock('1', 'x');
    expect(out.acks.at(-1)).toMatchObject({ accepted: false, reason: 'low_battery' });
  });

  it('reset returns to the fixture state and clears faults and timers', () => {
    const { model, clock } = station();
    model.setBattery(10);
    model.physical('1', 'jam');
    model.addFault({ kind: 'latency', delayMs: 5 });
    model.handleUnlock('2', 'r');
    clock.advance(5);
    model.reset();
    const snapshot = model.snapshot();
    expect(snapshot).toMatchObject({ batteryVoltage: 12.6, faults: [], timers: [] });
    expect(snapshot.locks.map((l) => l.status)).toEqual(['locked', 'locked']);
  });
});
