/**
 * The event stream as an async iterator (src/client/event-iterator.ts), driven by a stand-in
 * subscription: the filter, `ready`, the bound on unread events, a dropped stream, and that
 * `break` closes the subscription; and the waits on the watched stream (src/client/live-fleet.ts). The same over a real socket: test/testing/*.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { iterateEvents } from '../../src/client/event-iterator.js';
import { LiveFleet } from '../../src/client/live-fleet.js';
import type { EventStreamHandlers } from '../../src/client/event-stream-types.js';
import type { SimEvent, SimStation } from '../../src/client/sim-types.js';
import { ManualClock } from '../../src/shared/clock.js';

/** A subscription that the test feeds by hand. */
function fakeStream() {
  let handlers: EventStreamHandlers | undefined;
  let seq = 0;
  const stream = {
    closed: 0,
    subscribe: (given: EventStreamHandlers) => {
      handlers = given;
      return { close: () => void (stream.closed += 1) };
    },
    push: (event: Record<string, unknown>) => handlers!.onEvent({ seq: ++seq, time: '2026-01-01T00:00:00.000Z', ...event } as unknown as SimEvent),
    snapshot: (stations: Partial<SimStation>[] = []) => stream.push({ type: 'snapshot', stations }),
    drop: (reason: string) => handlers!.onState?.({ phase: 'waiting', attempt: 1, retryInMs: 250, retryAt: 0, reason }),
  };
  return stream;
}

const lockState = (token: string, lockId: string, status: string) => ({ type: 'lock.state', token, lockId, status, lastUpdated: 'x', pending: null });

describe('events() as an async iterator', () => {
  it('resolves ready with the snapshot and yields the events the filter lets through, in order', async () => {
    const stream = fakeStream();
    const events = iterateEvents(stream.subscribe, { type: 'lock.state', token: 'CI-1' });
    stream.snapshot([{ token: 'CI-1' }]);
    expect((await events.ready).map((s) => s.token)).toEqual(['CI-1']);
    stream.push(lockState('CI-2', '1', 'unlocked'));
    stream.push({ type: 'control', action: 'reset' });
    stream.push(lockState('CI-1', '1', 'unlocked'));
    stream.push(lockState('CI-1', '2', 'locked'));
    const seen: string[] = [];
    for await (const event of events) {
      seen.push(`${event.lockId} ${event.status}`);
      if (seen.length === 2) break;
    }
    expect(seen).toEqual(['1 unlocked', '2 locked']);
    // `break` closed the subscription, and the iterator is done.
    expect(stream.closed).toBe(1);
    expect(await events.next()).toEqual({ done: true, value: undefined });
  });

  it('leaves the snapshot out unless asked for, and hands a waiting next() the next event', async () => {
    const stream = fakeStream();
    const events = iterateEvents(stream.subscribe);
    const pending = events.next();
    stream.snapshot();
    stream.push({ type: 'control', action: 'reset' });
    expect((await pending).value).toMatchObject({ type: 'control', action: 'reset' });
    events.close();
    const other = fakeStream();
    const withSnapshot = iterateEvents(other.subscribe, { type: ['snapshot', 'control'] });
    other.snapshot();
    expect((await withSnapshot.next()).value).toMatchObject({ type: 'snapshot', stations: [] });
    withSnapshot.close();
  });

  it('fails, saying so, when more than maxBuffered events wait unread, and closes the stream', async () => {
    const stream = fakeStream();
    const events = iterateEvents(stream.subscribe, { maxBuffered: 2 });
    stream.snapshot();
    for (let i = 0; i < 3; i += 1) stream.push({ type: 'control', action: `step ${i}` });
    expect(stream.closed).toBe(1);
    await expect(events.next()).rejects.toThrow('events(): more than 2 events waited unread, so the stream was closed; read faster, filter by type, token or lock, or raise maxBuffered');
    expect(await events.next()).toEqual({ done: true, value: undefined });
  });

  it('ends with an error when the stream drops, after the events that came before it', async () => {
    const stream = fakeStream();
    const events = iterateEvents(stream.subscribe);
    stream.snapshot();
    stream.push({ type: 'control', action: 'before' });
    stream.drop('closed (1001 the simulator is stopping)');
    expect((await events.next()).value).toMatchObject({ action: 'before' });
    await expect(events.next()).rejects.toThrow('the event stream ended: closed (1001 the simulator is stopping); events after that may be missed, so the iteration ends');
  });

  it('refuses a maxBuffered that is not a whole number of at least 1', () => {
    expect(() => iterateEvents(fakeStream().subscribe, { maxBuffered: 0 })).toThrow('maxBuffered must be a whole number of at least 1, not 0');
  });
});

describe('waits on the watched stream (LiveFleet)', () => {
  const station = { token: 'CI-1', status: 'online' as const, locks: [{ lockId: '1', status: 'locked' }] } as SimStation;

  it('resolves from the state the stream last saw, or at a later event, however short the state lasted', async () => {
    const clock = new ManualClock(0);
    const stream = fakeStream();
    const live = new LiveFleet(stream.subscribe, clock);
    const now = live.waitForLock('CI-1', '1', 'locked');
    stream.snapshot([station]);
    await now;
    // A lock that opens and closes again between two turns of the event loop is still caught.
    const opened = live.waitForLock('CI-1', '1', 'unlocked');
    await Promise.resolve();
    stream.push(lockState('CI-1', '1', 'unlocked'));
    stream.push(lockState('CI-1', '1', 'locked'));
    await opened;
    const offline = live.waitForStation('CI-1', 'offline');
    await Promise.resolve();
    stream.push({ type: 'station.status', token: 'CI-1', status: 'offline', batteryVoltage: 12, lastConnection: 'x' });
    await offline;
    // What the stream saw before the wait began counts: the station is offline now.
    await live.waitForStation('CI-1', 'offline');
    live.close();
    expect(stream.closed).toBe(1);
  });

  it('times out on its clock saying what it saw last; names a station or lock that is not there', async () => {
    const clock = new ManualClock(0);
    const stream = fakeStream();
    const live = new LiveFleet(stream.subscribe, clock);
    stream.snapshot([station]);
    const waiting = live.waitForLock('CI-1', '1', 'unlocked', { timeoutMs: 2000 });
    await Promise.resolve();
    clock.advance(2000);
    await expect(waiting).rejects.toThrow('lock CI-1/1 did not become "unlocked" within 2000 ms; last seen "locked" (station online)');
    await expect(live.waitForLock('CI-1', '9', 'unlocked')).rejects.toThrow('station CI-1 has no lock 9');
    await expect(live.waitForStation('CI-404', 'online')).rejects.toThrow('the simulator has no station CI-404');
    const pending = live.waitForStation('CI-1', 'offline');
    await Promise.resolve();
    live.close();
    await expect(pending).rejects.toThrow('the control client was closed while waiting');
  });
});
