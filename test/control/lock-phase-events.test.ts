/**
 * The event hub puts each lock's phase (`pending`) on `lock.state` and `command.acked`. The phase
 * comes on the simulator's event topic, the state and the ack on the contract's, through other
 * clients: the result must be the same whichever arrives first.
 */
import { describe, expect, it } from 'vitest';
import { EventHub, type SimStreamEvent } from '../../src/control/event-hub.js';
import { parseFixture } from '../../src/fixture/load-fixture.js';
import { ManualClock } from '../../src/shared/clock.js';

const fixture = parseFixture({ stations: [{ token: 'ST-1', stationId: 1, locks: [{ lockId: '1' }] }] });
const T0 = '2026-01-01T00:00:00.000Z';
const T1 = '2026-01-01T00:00:01.000Z';
const T6 = '2026-01-01T00:00:06.000Z';

function setup() {
  const clock = new ManualClock(0);
  const hub = new EventHub({ fixture, clock, phaseWaitMs: 1000 });
  const events: SimStreamEvent[] = [];
  hub.subscribe((event) => events.push(event));
  const send = (topic: string, body: unknown) => hub.handleMessage(topic, Buffer.from(JSON.stringify(body)));
  return {
    clock,
    events,
    hub,
    command: (commandId: string) => send('stations/ST-1/locks/1/unlock', { commandId }),
    ack: (commandId: string) => send('stations/ST-1/acks', { commandId, lockId: '1', accepted: true }),
    state: (status: string, lastUpdated: string) => send('stations/ST-1/locks/1/state', { lockId: '1', status, lastUpdated }),
    phase: (pending: string | null, status: string, lastUpdated: string, commandId?: string) =>
      send('station-sim/events/ST-1', { type: 'lock.phase', lockId: '1', pending, status, lastUpdated, ...(commandId ? { commandId } : {}) }),
    seen: () => events.filter((e) => e.type !== 'command.sent').map((e) => [e.type, 'pending' in e ? e.pending : undefined]),
  };
}

const unlockCycle = [
  ['command.acked', 'opening'],
  ['lock.state', 'open'],
  ['lock.state', null],
];

describe('EventHub lock phases', () => {
  it('puts the phases on ack and states when each phase comes first', () => {
    const s = setup();
    s.command('c1');
    s.phase('opening', 'locked', T0, 'c1');
    s.ack('c1');
    s.phase('open', 'unlocked', T1);
    s.state('unlocked', T1);
    s.phase(null, 'locked', T6);
    s.state('locked', T6);
    expect(s.seen()).toEqual(unlockCycle);
  });

  it('gives the same when each contract message comes first', () => {
    const s = setup();
    s.phase(null, 'locked', T0); // the fleet has reported before: it sends phases
    s.command('c1');
    s.ack('c1'); // held until its phase comes
    expect(s.seen()).toEqual([]);
    s.state('unlocked', T1); // the ack goes out first, as the station sent it
    s.phase('opening', 'locked', T0, 'c1');
    s.phase('open', 'unlocked', T1);
    s.state('locked', T6);
    s.phase(null, 'locked', T6);
    expect(s.seen()).toEqual(unlockCycle);
  });

  it('reports an ack the lock does not open for (ackNoOpen) with no phase', () => {
    const s = setup();
    s.phase(null, 'locked', T0);
    s.ack('c1');
    s.phase(null, 'locked', T0, 'c1');
    expect(s.seen()).toEqual([['command.acked', null]]);
  });

  it('keeps opening on a state republished while the lock opens', () => {
    const s = setup();
    s.phase('opening', 'locked', T0, 'c1');
    s.ack('c1');
    s.state('locked', T0);
    expect(s.seen()).toEqual([
      ['command.acked', 'opening'],
      ['lock.state', 'opening'],
    ]);
  });

  it('does not hold an ack longer than phaseWaitMs, nor at all for a fleet that never reported a phase', () => {
    const s = setup();
    s.ack('c0');
    expect(s.seen()).toEqual([['command.acked', 'opening']]);
    s.phase('open', 'unlocked', T1);
    s.ack('c1');
    expect(s.seen()).toHaveLength(1);
    s.clock.advance(1000);
    expect(s.seen()).toEqual([
      ['command.acked', 'opening'],
      ['command.acked', 'open'],
    ]);
  });
});
