import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/shared/clock.js';
import { describeEntry, type UnlockChain } from '../../src/dashboard/activity-log.js';
import { FleetStore, applyFleetEvent } from '../../src/dashboard/fleet-store.js';
import type { SimEvent, SimStation } from '../../src/client/sim-types.js';
import { makeStation } from './fake-control-plane.js';

const T0 = Date.parse('2026-11-22T08:00:00.000Z');
const at = (ms: number): string => new Date(T0 + ms).toISOString();
let seq = 0;
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
const event = (body: DistributiveOmit<SimEvent, 'seq' | 'time'>, ms = 0): SimEvent => ({ seq: ++seq, time: at(ms), ...body }) as SimEvent;
const snapshot = (stations: SimStation[]): SimEvent => event({ type: 'snapshot', stations });

describe('applyFleetEvent (the reducer)', () => {
  it('replaces the fleet with a snapshot, then applies status and lock events to copies', () => {
    const fleet = new Map<string, SimStation>();
    expect(applyFleetEvent(fleet, snapshot([makeStation(1), makeStation(2)]))).toBe('membership');
    expect([...fleet.keys()]).toEqual(['ST-1001', 'ST-1002']);
    const before = fleet.get('ST-1001')!;

    const change = applyFleetEvent(
      fleet,
      event({ type: 'station.status', token: 'ST-1001', status: 'offline', batteryVoltage: 12.2, lastConnection: at(5) }),
    );
    expect(change).toBe('station');
    expect(fleet.get('ST-1001')).toMatchObject({ status: 'offline', batteryVoltage: 12.2, lastConnection: at(5) });
    // The station object the screen last drew is untouched.
    expect(before.status).toBe('online');

    applyFleetEvent(fleet, event({ type: 'command.acked', token: 'ST-1001', lockId: '1', commandId: 'c1', pending: 'opening', ms: 3 }));
    expect(fleet.get('ST-1001')!.locks[0]).toMatchObject({ status: 'locked', pending: 'opening' });
    applyFleetEvent(fleet, event({ type: 'lock.state', token: 'ST-1001', lockId: '1', status: 'unlocked', pending: 'open', lastUpdated: at(500) }));
    expect(fleet.get('ST-1001')!.locks[0]).toEqual({ lockId: '1', status: 'unlocked', lastUpdated: at(500), pending: 'open' });
    applyFleetEvent(fleet, event({ type: 'lock.state', token: 'ST-1001', lockId: '1', status: 'locked', pending: null, lastUpdated: at(5500) }));
    expect(fleet.get('ST-1001')!.locks[0]).toMatchObject({ status: 'locked', pending: null });

    // A second snapshot (after a reconnect) is the whole truth: stations it lacks are gone.
    applyFleetEvent(fleet, snapshot([makeStation(2)]));
    expect([...fleet.keys()]).toEqual(['ST-1002']);
  });

  it('takes each lock\'s phase from the events, not from its state', () => {
    const fleet = new Map<string, SimStation>();
    applyFleetEvent(fleet, snapshot([makeStation(1)]));
    // A state republished while the unlock delay runs (a reconnect): still opening.
    applyFleetEvent(fleet, event({ type: 'lock.state', token: 'ST-1001', lockId: '1', status: 'locked', pending: 'opening', lastUpdated: at(0) }));
    expect(fleet.get('ST-1001')!.locks[0]).toMatchObject({ status: 'locked', pending: 'opening' });
    // An ack the ackNoOpen fault kept from opening the lock leaves it idle.
    applyFleetEvent(fleet, event({ type: 'lock.state', token: 'ST-1001', lockId: '1', status: 'locked', pending: null, lastUpdated: at(0) }));
    expect(applyFleetEvent(fleet, event({ type: 'command.acked', token: 'ST-1001', lockId: '1', commandId: 'c2', pending: null }))).toBe('none');
    expect(fleet.get('ST-1001')!.locks[0]).toMatchObject({ status: 'locked', pending: null });
  });

  it('ignores events for stations it does not know and events that change no station', () => {
    const fleet = new Map<string, SimStation>();
    applyFleetEvent(fleet, snapshot([makeStation(1)]));
    expect(applyFleetEvent(fleet, event({ type: 'station.status', token: 'ST-9', status: 'online', batteryVoltage: 12, lastConnection: at(0) }))).toBe('none');
    expect(applyFleetEvent(fleet, event({ type: 'api.request', method: 'GET', route: '/v1/stations', status: 200, ms: 3 }))).toBe('none');
    expect(fleet.size).toBe(1);
  });
});

describe('FleetStore', () => {
  it('keeps tokens in natural order and counts stations online', () => {
    const store = new FleetStore({ clock: new ManualClock(T0) });
    store.apply(snapshot([makeStation(10), makeStation(2, { status: 'offline' }), makeStation(1)]));
    expect(store.tokens).toEqual(['ST-1001', 'ST-1002', 'ST-1010']);
    expect(store.online).toBe(2);
    store.apply(event({ type: 'station.status', token: 'ST-1002', status: 'online', batteryVoltage: 12.3, lastConnection: at(1) }));
    expect(store.online).toBe(3);
    store.upsert(makeStation(5, { status: 'offline' }));
    expect(store.tokens).toEqual(['ST-1001', 'ST-1002', 'ST-1005', 'ST-1010']);
    expect(store.online).toBe(3);
  });

  it('logs changes, not heartbeats that repeat the same status', () => {
    const store = new FleetStore({ clock: new ManualClock(T0) });
    store.apply(snapshot([makeStation(1)]));
    store.apply(event({ type: 'station.status', token: 'ST-1001', status: 'online', batteryVoltage: 12.4, lastConnection: at(1) }));
    store.apply(event({ type: 'station.status', token: 'ST-1001', status: 'offline', batteryVoltage: 12.4, lastConnection: at(1) }));
    store.apply(event({ type: 'control', token: 'ST-1001', action: 'offline' }));
    store.apply(event({ type: 'fault.applied', token: 'ST-1001', lockId: '2', fault: 'dropCommands', commandId: 'c9' }));
    store.apply(event({ type: 'api.request', method: 'POST', route: '/v1/stations/:station_token/locks/:lock_id/unlock', status: 200, ms: 12 }));
    expect(store.log.entries.map((entry) => describeEntry(entry).text)).toEqual([
      'snapshot: 1 stations',
      'ST-1001 offline',
      'control ST-1001: offline',
      'ST-1001/2 fault dropCommands',
      'POST /v1/stations/:station_token/locks/:lock_id/unlock → 200 (12ms)',
    ]);
  });

  it('hands out stations seen in events but missing from the snapshot, once', () => {
    const store = new FleetStore({ clock: new ManualClock(T0) });
    store.apply(snapshot([makeStation(1)]));
    store.apply(event({ type: 'station.status', token: 'ST-7', status: 'online', batteryVoltage: 12, lastConnection: at(0) }));
    expect(store.takeUnknownTokens()).toEqual(['ST-7']);
    expect(store.takeUnknownTokens()).toEqual([]);
  });

  it('notifies listeners on every change', () => {
    const store = new FleetStore({ clock: new ManualClock(T0) });
    let calls = 0;
    const unsubscribe = store.subscribe(() => (calls += 1));
    store.apply(snapshot([makeStation(1)]));
    store.note('hello');
    unsubscribe();
    store.note('unheard');
    expect(calls).toBe(2);
    expect(store.version).toBe(3);
  });
});

describe('the unlock chain in the log', () => {
  const chainText = (store: FleetStore): string[] =>
    store.log.entries.filter((entry): entry is UnlockChain => entry.kind === 'unlock').map((entry) => describeEntry(entry).text);

  it('reads requested → acked → unlocked → locked with the time of each step, and the unlock result', () => {
    const clock = new ManualClock(T0);
    const store = new FleetStore({ clock });
    store.apply(snapshot([makeStation(1)]));
    const id = store.beginUnlock('ST-1001', '1');
    expect(chainText(store)).toEqual(['ST-1001/1 unlock requested']);

    store.apply(event({ type: 'command.sent', token: 'ST-1001', lockId: '1', commandId: 'c1' }, 10));
    store.apply(event({ type: 'command.acked', token: 'ST-1001', lockId: '1', commandId: 'c1', pending: 'opening', ms: 12 }, 22));
    store.finishUnlock(id, { success: true });
    store.apply(event({ type: 'lock.state', token: 'ST-1001', lockId: '1', status: 'unlocked', pending: 'open', lastUpdated: at(525) }, 525));
    // The duplicateState fault reports the same state twice: still one step.
    store.apply(event({ type: 'lock.state', token: 'ST-1001', lockId: '1', status: 'unlocked', pending: 'open', lastUpdated: at(525) }, 526));
    store.apply(event({ type: 'lock.state', token: 'ST-1001', lockId: '1', status: 'locked', pending: null, lastUpdated: at(5529) }, 5529));

    expect(chainText(store)).toEqual(['ST-1001/1 unlock → acked +12ms → unlocked +503ms → locked +5004ms · ok']);
    // The chain is one entry; the lock states it took in are not logged again on their own.
    expect(store.log.entries.map((entry) => entry.kind)).toEqual(['line', 'unlock']);
    expect(describeEntry(store.log.entries[1]!).tone).toBe('ok');
  });

  it('ends the chain of a lock left open when the stream is lost, so the next unlock after the reconnect reads whole', () => {
    const store = new FleetStore({ clock: new ManualClock(T0) });
    store.setStream({ phase: 'open' });
    store.apply(snapshot([makeStation(1)]));
    const first = store.beginUnlock('ST-1001', '1');
    store.apply(event({ type: 'command.sent', token: 'ST-1001', lockId: '1', commandId: 'c1' }, 10));
    store.apply(event({ type: 'command.acked', token: 'ST-1001', lockId: '1', commandId: 'c1', pending: 'opening', ms: 2 }, 12));
    store.finishUnlock(first, { success: true });
    store.apply(event({ type: 'lock.state', token: 'ST-1001', lockId: '1', status: 'unlocked', pending: 'open', lastUpdated: at(500) }, 500));
    store.setStream({ phase: 'waiting', attempt: 1, retryInMs: 250, retryAt: T0 + 250, reason: 'closed' });
    expect(chainText(store)).toEqual(['ST-1001/1 unlock → acked +2ms → unlocked +488ms · events lost · ok']);
    // A restarted simulator on the same ports: its first commandId may be the old one.
    store.setStream({ phase: 'open' });
    store.apply(snapshot([makeStation(1)]));
    const second = store.beginUnlock('ST-1001', '1');
    store.apply(event({ type: 'command.sent', token: 'ST-1001', lockId: '1', commandId: 'c1' }, 60_000));
    store.apply(event({ type: 'command.acked', token: 'ST-1001', lockId: '1', commandId: 'c1', pending: 'opening', ms: 2 }, 60_002));
    store.finishUnlock(second, { success: true });
    store.apply(event({ type: 'lock.state', token: 'ST-1001', lockId: '1', status: 'unlocked', pending: 'open', lastUpdated: at(60_500) }, 60_500));
    store.apply(event({ type: 'lock.state', token: 'ST-1001', lockId: '1', status: 'locked', pending: null, lastUpdated: at(65_500) }, 65_500));
    expect(chainText(store)).toEqual([
      'ST-1001/1 unlock → acked +2ms → unlocked +488ms · events lost · ok',
      'ST-1001/1 unlock → acked +2ms → unlocked +498ms → locked +5000ms · ok',
    ]);
  });

  it('logs an ack of a command sent before the stream started without a made-up time', () => {
    const store = new FleetStore({ clock: new ManualClock(T0) });
    store.apply(snapshot([makeStation(1)]));
    // The server leaves `ms` out when it did not see the command being sent.
    store.apply(event({ type: 'command.acked', token: 'ST-1001', lockId: '1', commandId: 'early', pending: 'opening' }, 5));
    store.apply(event({ type: 'command.rejected', token: 'ST-1001', lockId: '2', commandId: 'early-2', reason: 'jammed' }, 6));
    const lines = store.log.entries.map((entry) => describeEntry(entry).text);
    expect(lines).toContain('ST-1001/1 acked');
    expect(lines).toContain('ST-1001/2 rejected: jammed');
  });

  it('follows unlocks asked for by other clients, correlated by commandId', () => {
    const store = new FleetStore({ clock: new ManualClock(T0) });
    store.apply(snapshot([makeStation(1)]));
    store.apply(event({ type: 'command.sent', token: 'ST-1001', lockId: '2', commandId: 'a' }, 0));
    store.apply(event({ type: 'command.sent', token: 'ST-1001', lockId: '1', commandId: 'b' }, 1));
    // QoS 1 redelivery of the same command is not a new unlock.
    store.apply(event({ type: 'command.sent', token: 'ST-1001', lockId: '1', commandId: 'b' }, 2));
    store.apply(event({ type: 'command.rejected', token: 'ST-1001', lockId: '1', commandId: 'b', reason: 'jammed', ms: 4 }, 5));
    store.apply(event({ type: 'command.timeout', token: 'ST-1001', lockId: '2', commandId: 'a', ms: 3000 }, 3000));
    expect(chainText(store)).toEqual(['ST-1001/2 unlock → timed out +3000ms', 'ST-1001/1 unlock → rejected: jammed +4ms']);
    expect(store.log.entries.slice(1).map((entry) => describeEntry(entry).tone)).toEqual(['error', 'error']);
  });

  it('ends a chain whose unlock call failed before the station saw the command', () => {
    const store = new FleetStore({ clock: new ManualClock(T0) });
    store.apply(snapshot([makeStation(1, { status: 'offline' })]));
    const id = store.beginUnlock('ST-1001', '1');
    store.finishUnlock(id, { success: false, message: 'Station is offline' });
    // A later unlock of the same lock by someone else starts its own chain.
    store.apply(event({ type: 'command.sent', token: 'ST-1001', lockId: '1', commandId: 'c2' }, 50));
    expect(chainText(store)).toEqual(['ST-1001/1 unlock requested · failed: Station is offline', 'ST-1001/1 unlock requested']);
  });

  it('keeps a timed-out unlock one chain when the call fails after the station saw the command', () => {
    const store = new FleetStore({ clock: new ManualClock(T0) });
    store.apply(snapshot([makeStation(1)]));
    const id = store.beginUnlock('ST-1001', '1');
    store.apply(event({ type: 'command.sent', token: 'ST-1001', lockId: '1', commandId: 'c1' }, 0));
    // The /v1 answer comes over HTTP a moment before the stream's command.timeout.
    store.finishUnlock(id, { success: false, message: 'Station did not acknowledge the command in time' });
    store.apply(event({ type: 'command.timeout', token: 'ST-1001', lockId: '1', commandId: 'c1', ms: 5001 }, 5001));
    expect(chainText(store)).toEqual(['ST-1001/1 unlock → timed out +5001ms · failed: Station did not acknowledge the command in time']);
    expect(store.log.entries.map((entry) => entry.kind)).toEqual(['line', 'unlock']);
  });

  it('keeps the log bounded', () => {
    const store = new FleetStore({ clock: new ManualClock(T0), logLimit: 10 });
    for (let index = 0; index < 100; index += 1) store.note(`line ${index}`);
    expect(store.log.entries.length).toBeLessThan(20);
    expect(describeEntry(store.log.entries.at(-1)!).text).toBe('line 99');
  });
});

describe('what the presenter panels read', () => {
  it('keeps a station\'s battery readings as they change, and the voltage b charges back to', () => {
    let now = T0;
    const manual = new ManualClock(T0);
    const clock = { now: () => now, setTimeout: manual.setTimeout.bind(manual), clearTimeout: manual.clearTimeout.bind(manual) };
    const store = new FleetStore({ clock, fixtureVoltages: new Map([['ST-1001', 12.3]]) });
    store.apply(snapshot([makeStation(1, { batteryVoltage: 12.2 }), makeStation(2, { batteryVoltage: 12.5 })]));
    expect(store.batteryHistory('ST-1002')).toEqual([{ at: T0, volts: 12.5 }]);
    now = T0 + 1000;
    store.apply(event({ type: 'station.status', token: 'ST-1002', status: 'online', batteryVoltage: 12.49, lastConnection: at(1000) }, 1000));
    // A heartbeat with the same voltage adds nothing.
    now = T0 + 2000;
    store.apply(event({ type: 'station.status', token: 'ST-1002', status: 'online', batteryVoltage: 12.49, lastConnection: at(2000) }, 2000));
    expect(store.batteryHistory('ST-1002')).toEqual([
      { at: T0 + 1000, volts: 12.5 },
      { at: T0 + 1000, volts: 12.49 },
    ]);
    // The fixture's value where it is given, else the voltage first seen (not what it has drained to).
    expect(store.fixtureVoltage('ST-1001')).toBe(12.3);
    expect(store.fixtureVoltage('ST-1002')).toBe(12.5);
  });

  it('counts the fleet by status, lock state and battery, and lists the stations with faults', () => {
    const store = new FleetStore();
    const locks = (statuses: ('locked' | 'unlocked' | 'jammed')[]) => statuses.map((status, index) => ({ lockId: String(index + 1), status, lastUpdated: at(0), pending: null }));
    store.apply(
      snapshot([
        makeStation(1, { locks: locks(['locked', 'jammed']), faults: [{ id: 'f1', kind: 'dropCommands' }] }),
        makeStation(2, { status: 'offline', batteryVoltage: 11.2, locks: locks(['unlocked']) }),
        makeStation(3),
      ]),
    );
    expect(store.overview()).toEqual({ total: 3, online: 2, offline: 1, lowBattery: 1, locks: { locked: 3, unlocked: 1, jammed: 1, opening: 0 }, faulted: ['ST-1001'] });
    // A control event on a station asks for it to be fetched again: its faults may have changed.
    store.apply(event({ type: 'control', token: 'ST-1003', action: 'fault latency' }));
    expect(store.takeUnknownTokens()).toEqual(['ST-1003']);
  });
});
