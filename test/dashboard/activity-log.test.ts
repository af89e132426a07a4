/** The log's unlock chains: which events belong to which unlock, and on which clock they are timed. */
import { describe, expect, it } from 'vitest';
import { ActivityLog, describeEntry, type UnlockChain } from '../../src/dashboard/activity-log.js';
import type { SimEvent } from '../../src/client/sim-types.js';
import { applyFleetEvent } from '../../src/dashboard/fleet-store.js';
import { makeStation } from './fake-control-plane.js';

const T0 = Date.parse('2026-11-22T08:00:00.000Z');
const iso = (ms: number): string => new Date(T0 + ms).toISOString();
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** A log fed as the dashboard feeds it, with the station as it was before each event. */
function logOf() {
  // The dashboard's own clock: far from the simulator's, so a step timed on it shows.
  const log = new ActivityLog({ now: () => T0 + 3_600_000 });
  let seq = 0;
  let station = makeStation(1);
  const feed = (body: DistributiveOmit<SimEvent, 'seq' | 'time'>, ms: number): void => {
    const event = { seq: ++seq, time: iso(ms), ...body } as SimEvent;
    log.observe(event, station);
    if (event.type === 'fault.applied' && event.fault === 'ackNoOpen' && event.commandId !== undefined) keptShut.add(event.commandId);
    const fleet = new Map([[station.token, station]]);
    applyFleetEvent(fleet, event);
    station = fleet.get(station.token)!;
  };
  // The phase the event hub reports with an ack: an idle lock starts opening, one opening or open
  // stays so, and the ackNoOpen fault changes nothing.
  const keptShut = new Set<string>();
  const pendingNow = () => station.locks.find((lock) => lock.lockId === '1')!.pending;
  const ackPending = (commandId: string) => (keptShut.has(commandId) ? pendingNow() : (pendingNow() ?? 'opening'));
  const sent = (commandId: string, ms: number) => feed({ type: 'command.sent', token: 'ST-1001', lockId: '1', commandId }, ms);
  const acked = (commandId: string, ms: number, after: number) => feed({ type: 'command.acked', token: 'ST-1001', lockId: '1', commandId, pending: ackPending(commandId), ms: after }, ms + after);
  const state = (status: 'locked' | 'unlocked', lastUpdated: number, arrives = lastUpdated) =>
    feed({ type: 'lock.state', token: 'ST-1001', lockId: '1', status, pending: status === 'unlocked' ? 'open' : null, lastUpdated: iso(lastUpdated) }, arrives);
  const texts = (): string[] => log.entries.map((entry) => describeEntry(entry).text);
  const chains = (): UnlockChain[] => log.entries.filter((entry): entry is UnlockChain => entry.kind === 'unlock');
  return { log, feed, sent, acked, state, texts, chains };
}

describe('a second unlock of the same lock', () => {
  it('while the lock is open restarts its relock time: the open chain ends there, the relock is the last one\'s', () => {
    const { log, sent, acked, state, texts } = logOf();
    const first = log.beginUnlock('ST-1001', '1');
    sent('c1', 0);
    acked('c1', 0, 2);
    log.finishUnlock(first, { success: true });
    state('unlocked', 2288);
    const second = log.beginUnlock('ST-1001', '1');
    sent('c2', 3500);
    acked('c2', 3500, 2);
    log.finishUnlock(second, { success: true });
    const third = log.beginUnlock('ST-1001', '1');
    sent('c3', 4500);
    acked('c3', 4500, 0);
    log.finishUnlock(third, { success: true });
    state('locked', 9500);
    expect(texts()).toEqual([
      'ST-1001/1 unlock → acked +2ms → unlocked +2286ms → held open by the next unlock · ok',
      'ST-1001/1 unlock → acked +2ms → already open → held open by the next unlock · ok',
      // Relocked 5 s after the last unlock, as the station does; no relock line of its own.
      'ST-1001/1 unlock → acked +0ms → already open → locked +5000ms · ok',
    ]);
  });

  it('while the lock is opening joins that opening: the unlocked and locked are the first chain\'s, and no chain is left hanging', () => {
    const { log, sent, acked, state, texts, chains } = logOf();
    const first = log.beginUnlock('ST-1001', '1');
    sent('c1', 0);
    acked('c1', 0, 1);
    log.finishUnlock(first, { success: true });
    const second = log.beginUnlock('ST-1001', '1');
    sent('c2', 400);
    acked('c2', 400, 1);
    log.finishUnlock(second, { success: true });
    state('unlocked', 2259);
    state('locked', 7259);
    expect(texts()).toEqual([
      'ST-1001/1 unlock → acked +1ms → unlocked +2258ms → locked +5000ms · ok',
      'ST-1001/1 unlock → acked +1ms → joins the opening under way · ok',
    ]);
    expect(chains().map((chain) => chain.stage)).toEqual(['locked', 'joined']);
  });

  it('after one the ackNoOpen fault kept shut is a fresh opening, not a join', () => {
    const { sent, acked, state, feed, texts } = logOf();
    sent('c1', 0);
    feed({ type: 'fault.applied', token: 'ST-1001', lockId: '1', fault: 'ackNoOpen', commandId: 'c1' }, 1);
    acked('c1', 0, 1);
    sent('c2', 1000);
    acked('c2', 1000, 1);
    state('unlocked', 2001);
    expect(texts()).toEqual([
      'ST-1001/1 unlock → acked +1ms → stays shut (ackNoOpen)',
      'ST-1001/1 fault ackNoOpen',
      'ST-1001/1 unlock → acked +1ms → unlocked +1000ms',
    ]);
  });
});

describe('chain times', () => {
  it('are the simulator\'s: a state by its lastUpdated, not when a manual clock\'s advance delivered it', () => {
    const { log, sent, acked, state, texts, chains } = logOf();
    log.beginUnlock('ST-1001', '1');
    sent('c1', 0);
    acked('c1', 0, 0);
    // `POST /sim/v1/clock/advance {"ms":60000}`: both states arrive at its end.
    state('unlocked', 2284, 60_000);
    state('locked', 7284, 60_000);
    expect(texts()).toEqual(['ST-1001/1 unlock → acked +0ms → unlocked +2284ms → locked +5000ms']);
    // Stamped when the command went out on the simulator's clock, not on the dashboard's.
    expect(chains()[0]!.at).toBe(T0);
  });

  it('time the ack from the command\'s send by the server\'s own ms, and the unlock from the ack', () => {
    const { sent, acked, state, texts } = logOf();
    // --time-scale 10: 5 ms of real delivery is 50 simulated ones, in the event's time but not in ms.
    sent('c1', 0);
    acked('c1', 0, 50);
    state('unlocked', 2050, 2100);
    state('locked', 7260, 7300);
    expect(texts()).toEqual(['ST-1001/1 unlock → acked +50ms → unlocked +2000ms → locked +5210ms']);
  });
});

describe('chains under way when the event stream starts over', () => {
  const snapshot = { type: 'snapshot', stations: [makeStation(1)] } as unknown as DistributiveOmit<SimEvent, 'seq' | 'time'>;

  it('a lock left open across a restart of the simulator does not take over the next unlock', () => {
    const { log, feed, sent, acked, state, texts, chains } = logOf();
    const first = log.beginUnlock('ST-1001', '1');
    sent('c1', 0);
    acked('c1', 0, 2);
    log.finishUnlock(first, { success: true });
    state('unlocked', 500);
    // The simulator stops while the lock is open; a new one comes up on the same ports.
    log.eventsLost();
    feed(snapshot, 60_000);
    const second = log.beginUnlock('ST-1001', '1');
    sent('c1', 61_000);
    acked('c1', 61_000, 2);
    log.finishUnlock(second, { success: true });
    state('unlocked', 61_500);
    state('locked', 66_500);
    const unlocks = texts().filter((text) => text.includes('unlock'));
    expect(unlocks).toEqual([
      'ST-1001/1 unlock → acked +2ms → unlocked +498ms · events lost · ok',
      'ST-1001/1 unlock → acked +2ms → unlocked +498ms → locked +5000ms · ok',
    ]);
    expect(chains().map((chain) => chain.stage)).toEqual(['lost', 'locked']);
  });

  it('an unlock asked for while the stream is down does not catch the events of the next one', () => {
    const { log, feed, sent, acked, state, chains } = logOf();
    const first = log.beginUnlock('ST-1001', '1');
    sent('c1', 0);
    acked('c1', 0, 2);
    state('unlocked', 500);
    log.eventsLost();
    // Pressed during the outage: its events never come.
    const during = log.beginUnlock('ST-1001', '1');
    log.finishUnlock(during, { success: true });
    feed(snapshot, 60_000);
    const after = log.beginUnlock('ST-1001', '1');
    sent('c9', 61_000);
    acked('c9', 61_000, 2);
    state('unlocked', 61_500);
    state('locked', 66_500);
    log.finishUnlock(after, { success: true });
    expect(chains().map((chain) => [chain.id, chain.stage])).toEqual([
      [first, 'lost'],
      [during, 'lost'],
      [after, 'locked'],
    ]);
  });
});

describe('one line per action', () => {
  it("folds an unlock's login and route requests into its chain, and keeps a failed login and other clients' requests", () => {
    const { log, feed, sent, acked, state, texts } = logOf();
    const id = log.beginUnlock('ST-1001', '1');
    feed({ type: 'api.request', method: 'POST', route: '/v1/auth/login', status: 200, ms: 40 }, 0);
    sent('c1', 50);
    acked('c1', 50, 3);
    state('unlocked', 900);
    feed({ type: 'api.request', method: 'POST', route: '/v1/stations/:station_token/locks/:lock_id/unlock', status: 200, ms: 12, token: 'ST-1001', lockId: '1', commandId: 'c1' }, 60);
    log.finishUnlock(id, { success: true });
    feed({ type: 'api.request', method: 'GET', route: '/v1/stations/:station_token', status: 200, ms: 2, token: 'ST-1002' }, 100);
    feed({ type: 'api.request', method: 'POST', route: '/v1/auth/login', status: 401, ms: 30 }, 120);
    expect(texts()).toEqual([
      'ST-1001/1 unlock → acked +3ms → unlocked +847ms · ok',
      'GET /v1/stations/:station_token → 200 (2ms)',
      'POST /v1/auth/login → 401 (30ms)',
    ]);
    // Request → unlocked, on the simulator's clock.
    expect(log.latencies).toEqual([{ at: T0 + 900, token: 'ST-1001', lockId: '1', ms: 850 }]);
  });

  it('folds the request of an own unlock that failed before any command was sent', () => {
    const { log, feed, texts } = logOf();
    const id = log.beginUnlock('ST-1001', '1');
    log.finishUnlock(id, { success: false, message: 'Station is offline' });
    feed({ type: 'api.request', method: 'POST', route: '/v1/stations/:station_token/locks/:lock_id/unlock', status: 200, ms: 1, token: 'ST-1001', lockId: '1', outcome: 'offline' }, 10);
    expect(texts()).toEqual(['ST-1001/1 unlock requested · failed: Station is offline']);
  });

  it("a reboot's line takes in its control event and says the station went offline and came back", () => {
    const { log, feed, texts } = logOf();
    const id = log.beginAction('ST-1001', 'ST-1001 reboot', [
      { type: 'status', status: 'offline', step: true },
      { type: 'status', status: 'online', step: true },
    ]);
    feed({ type: 'control', token: 'ST-1001', action: 'reboot (2000 ms down)' }, 0);
    log.finishAction(id, { ok: true });
    feed({ type: 'station.status', token: 'ST-1001', status: 'offline', batteryVoltage: 12.41, lastConnection: iso(0) }, 5);
    feed({ type: 'station.status', token: 'ST-1001', status: 'online', batteryVoltage: 12.41, lastConnection: iso(2000) }, 2000);
    // Once its echoes are in, the station's next change is news again.
    feed({ type: 'station.status', token: 'ST-1001', status: 'offline', batteryVoltage: 12.41, lastConnection: iso(3000) }, 3000);
    expect(texts()).toEqual(['ST-1001 reboot: ok → offline → online', 'ST-1001 offline']);
  });

  it('an action on the whole simulator takes in the control event that names no station; a failed one waits for none', () => {
    const log = new ActivityLog({ now: () => T0 });
    const added = log.beginAction(undefined, 'ST-1001 /v1 unlock fault 503 added');
    log.observe({ seq: 1, time: iso(0), type: 'control', action: 'api fault api-1: status 503' }, undefined);
    log.finishAction(added, { ok: true });
    const refused = log.beginAction('ST-1001', 'ST-1001 → offline', [{ type: 'status', status: 'offline' }]);
    log.finishAction(refused, { ok: false, message: 'Station did not respond' });
    log.observe({ seq: 2, time: iso(10), type: 'station.status', token: 'ST-1001', status: 'offline', batteryVoltage: 12, lastConnection: iso(10) }, makeStation(1));
    expect(log.entries.map((entry) => describeEntry(entry))).toEqual([
      { text: 'ST-1001 /v1 unlock fault 503 added: ok', tone: 'ok' },
      { text: 'ST-1001 → offline: Station did not respond', tone: 'error' },
      { text: 'ST-1001 offline', tone: 'error' },
    ]);
  });

  it('says an unreachable station as a fact (warn), and names the account an unlock went as', () => {
    const log = new ActivityLog({ now: () => T0 });
    const id = log.beginUnlock('ST-1005', 'A', 'bob@example.com');
    log.finishUnlock(id, { success: false, message: 'alice@example.com cannot reach ST-1005 (a: switch account)', unreachable: true });
    expect(describeEntry(log.entries[0]!)).toEqual({
      text: 'ST-1005/A unlock as bob@example.com requested · alice@example.com cannot reach ST-1005 (a: switch account)',
      tone: 'warn',
    });
  });
});

describe('actions pressed in quick succession', () => {
  it('each takes in its own control event and report, whatever came first', () => {
    const log = new ActivityLog({ now: () => T0 });
    const online = log.beginAction('ST-1001', 'ST-1001 → online', [{ type: 'status', status: 'online' }]);
    const fault = log.beginAction('ST-1001', 'ST-1001/1 fault ackNoOpen added');
    log.observe({ seq: 1, time: iso(0), type: 'control', token: 'ST-1001', action: 'online' }, undefined);
    log.observe({ seq: 2, time: iso(1), type: 'control', token: 'ST-1001', action: 'fault ackNoOpen' }, undefined);
    log.observe({ seq: 3, time: iso(2), type: 'station.status', token: 'ST-1001', status: 'online', batteryVoltage: 12, lastConnection: iso(2) }, makeStation(1, { status: 'offline' }));
    log.finishAction(online, { ok: true });
    log.finishAction(fault, { ok: true });
    expect(log.entries.map((entry) => describeEntry(entry).text)).toEqual(['ST-1001 → online: ok', 'ST-1001/1 fault ackNoOpen added: ok']);
  });
});
