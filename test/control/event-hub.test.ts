/**
 * The statuses the event hub keeps for `/sim/v1/health`: a station the fixture starts offline
 * counts as offline until it says otherwise (it may never publish again), and when the broker
 * connection is lost the hub forgets what it heard, so health is rebuilt from what comes after,
 * expecting back the stations that were steadily online before.
 */
import { describe, expect, it } from 'vitest';
import { EventHub } from '../../src/control/event-hub.js';
import { parseFixture } from '../../src/fixture/load-fixture.js';
import { ManualClock } from '../../src/shared/clock.js';

const fixture = parseFixture({
  stations: [
    { token: 'ON-1', stationId: 1, locks: [{ lockId: '1' }] },
    { token: 'ON-2', stationId: 2, locks: [{ lockId: '1' }] },
    { token: 'OFF-1', stationId: 3, initialStatus: 'offline', locks: [{ lockId: '1' }] },
  ],
});

/** Real time as the hub reads it, moved by hand. */
const wall = { now: 0 };

function hub(): EventHub {
  wall.now = 0;
  return new EventHub({ fixture, clock: new ManualClock(0), wallClock: () => wall.now });
}

function report(target: EventHub, token: string, status: 'online' | 'offline'): void {
  const stationId = fixture.stations.find((station) => station.token === token)!.stationId;
  const payload = { stationId, status, batteryVoltage: 12.4, lastConnection: '2026-01-01T00:00:00.000Z' };
  target.handleMessage(`stations/${token}/status`, Buffer.from(JSON.stringify(payload)));
}

function counts(target: EventHub): Record<string, string | undefined> {
  return Object.fromEntries(fixture.stations.map((station) => [station.token, target.readiness.statusOf(station.token)]));
}

describe('EventHub statuses for health', () => {
  it('comes up without a word from a station the fixture starts offline, which counts as offline', () => {
    // An api started after a broker restart that kept no retained messages: the offline station
    // published its record once, long ago, and never will again.
    const events = hub();
    expect(counts(events)).toEqual({ 'ON-1': undefined, 'ON-2': undefined, 'OFF-1': 'offline' });
    report(events, 'ON-1', 'online');
    expect(events.readiness.cameUp).toBe(false);
    report(events, 'ON-2', 'online');
    expect(events.readiness.cameUp).toBe(true);
    expect(counts(events)).toEqual({ 'ON-1': 'online', 'ON-2': 'online', 'OFF-1': 'offline' });
  });

  it('waits for a station the fixture starts online, whatever the others say', () => {
    const events = hub();
    report(events, 'ON-1', 'online');
    report(events, 'OFF-1', 'offline');
    report(events, 'ON-2', 'offline'); // a stale retained record, or its will
    expect(events.readiness.cameUp).toBe(false);
    report(events, 'ON-2', 'online');
    expect(events.readiness.cameUp).toBe(true);
    // Latched: a station taken offline on purpose afterwards does not undo it.
    report(events, 'ON-1', 'offline');
    expect(events.readiness.cameUp).toBe(true);
  });

  it('forgets every status when the connection is lost, and comes up again once the stations that were online are back', () => {
    const events = hub();
    report(events, 'ON-1', 'online');
    report(events, 'ON-2', 'online');
    report(events, 'OFF-1', 'online'); // taken online on purpose
    report(events, 'ON-2', 'offline'); // taken offline on purpose
    expect(events.readiness.cameUp).toBe(true);

    wall.now += 60_000;
    // A broker that shuts down sends every last will just before it closes the control plane's
    // session: those do not pass for stations taken offline.
    report(events, 'ON-1', 'offline');
    report(events, 'OFF-1', 'offline');
    wall.now += 10;
    events.readiness.forgetStatuses(); // lost
    events.readiness.forgetStatuses(); // back: nothing heard in between
    // No stale counts: only what the fleet says from now on (ON-2 was offline, so it is taken as such).
    expect(counts(events)).toEqual({ 'ON-1': undefined, 'ON-2': 'offline', 'OFF-1': undefined });
    expect(events.readiness.cameUp).toBe(false);
    report(events, 'ON-1', 'online');
    expect(events.readiness.cameUp).toBe(false);
    report(events, 'OFF-1', 'online');
    expect(events.readiness.cameUp).toBe(true);
    expect(counts(events)).toEqual({ 'ON-1': 'online', 'ON-2': 'offline', 'OFF-1': 'online' });
  });

  it('a connection lost before the fleet came up still waits for the fixture starting statuses', () => {
    const events = hub();
    report(events, 'ON-1', 'offline'); // a will left by an earlier run
    events.readiness.forgetStatuses();
    report(events, 'ON-1', 'online');
    report(events, 'ON-2', 'online');
    expect(events.readiness.cameUp).toBe(true);
  });
});

describe('EventHub health when no station starts online', () => {
  const allOffline = parseFixture({
    stations: [
      { token: 'OFF-1', stationId: 1, initialStatus: 'offline', locks: [{ lockId: '1' }] },
      { token: 'OFF-2', stationId: 2, initialStatus: 'offline', locks: [{ lockId: '1' }] },
    ],
  });

  function offlineReport(target: EventHub, token: string, stationId: number): void {
    const payload = { stationId, status: 'offline', batteryVoltage: 12.4, lastConnection: '2026-01-01T00:00:00.000Z' };
    target.handleMessage(`stations/${token}/status`, Buffer.from(JSON.stringify(payload)));
  }

  it('is not ready before any fixture station has reported: no fleet process may run at all', () => {
    wall.now = 0;
    const events = new EventHub({ fixture: allOffline, clock: new ManualClock(0), wallClock: () => wall.now });
    expect(events.readiness.cameUp).toBe(false);
    // A station outside the fixture does not count.
    events.handleMessage('stations/STRANGER/status', Buffer.from(JSON.stringify({ stationId: 9, status: 'offline', batteryVoltage: 12.4, lastConnection: '2026-01-01T00:00:00.000Z' })));
    expect(events.readiness.cameUp).toBe(false);
    offlineReport(events, 'OFF-1', 1);
    expect(events.readiness.cameUp).toBe(true);
    // Once it has come up, a lost connection re-arms it as before: nothing to wait for.
    events.readiness.forgetStatuses();
    events.readiness.forgetStatuses();
    expect(events.readiness.cameUp).toBe(true);
  });
});

describe('EventHub targets the control plane sets', () => {
  it('a station taken offline through the control plane just before the broker died is not expected back', () => {
    // The steady rule rolled an offline less than STEADY_STATUS_MS old back to online, and health
    // was never ready again.
    const events = hub();
    report(events, 'ON-1', 'online');
    report(events, 'ON-2', 'online');
    expect(events.readiness.cameUp).toBe(true);
    wall.now += 60_000;
    report(events, 'ON-2', 'offline');
    events.readiness.controlled('ON-2', { action: 'connection', online: false });
    wall.now += 1000; // the broker dies a second later: its wills, then the session is gone
    report(events, 'ON-1', 'offline');
    events.readiness.forgetStatuses();
    events.readiness.forgetStatuses();
    expect(events.readiness.cameUp).toBe(false);
    report(events, 'ON-1', 'online');
    expect(events.readiness.cameUp).toBe(true);
    expect(counts(events)).toEqual({ 'ON-1': 'online', 'ON-2': 'offline', 'OFF-1': 'offline' });
  });

  it('a station the control plane brought online (or rebooted) just before the broker died is expected back', () => {
    const events = hub();
    report(events, 'ON-1', 'online');
    report(events, 'ON-2', 'online');
    wall.now += 60_000;
    report(events, 'OFF-1', 'online');
    events.readiness.controlled('OFF-1', { action: 'connection', online: true });
    report(events, 'ON-2', 'offline');
    events.readiness.controlled('ON-2', { action: 'reboot' });
    wall.now += 1000;
    report(events, 'ON-1', 'offline');
    report(events, 'OFF-1', 'offline');
    events.readiness.forgetStatuses();
    events.readiness.forgetStatuses();
    report(events, 'ON-1', 'online');
    report(events, 'OFF-1', 'online');
    expect(events.readiness.cameUp).toBe(false); // the rebooted ON-2 is awaited
    report(events, 'ON-2', 'online');
    expect(events.readiness.cameUp).toBe(true);
  });
});
