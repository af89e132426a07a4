import { describe, expect, it } from 'vitest';
import { startSimulator } from '../../src/simulator/start-simulator.js';
import { parseFixture, FixtureError } from '../../src/fixture/load-fixture.js';
import { EventSocket } from '../helpers/event-socket.js';

const base = {
  defaults: { unlockDelayMs: 10, relockMs: 50, heartbeatMs: 0 },
  stations: [{ token: 'SC-1', stationId: 1, locks: [{ lockId: '1' }] }],
};

describe('scenario timelines', () => {
  it('with the manual clock, every step an advance makes due is in effect when the advance returns', async () => {
    const tokens = Array.from({ length: 8 }, (_, index) => `MC-${index + 1}`);
    const sim = await startSimulator({
      clock: 'manual',
      fixture: {
        ...base,
        stations: tokens.map((token, index) => ({ token, stationId: index + 1, locks: [{ lockId: '1' }] })),
        scenario: tokens.map((token, index) => ({ at: `${(index + 1) * 2}s`, station: token, do: 'jam', lockId: '1' })),
      },
    });
    try {
      await sim.clock.advance(20_000);
      const { stations } = (await (await fetch(`${sim.controlUrl}/stations`)).json()) as { stations: { token: string; locks: { status: string }[] }[] };
      expect(stations.map((station) => `${station.token}:${station.locks[0]!.status}`)).toEqual(tokens.map((token) => `${token}:jammed`));
      // An advance that could never end is refused.
      await expect(sim.clock.advance(Infinity)).rejects.toThrow('ms must be a finite number of at least 0');
    } finally {
      await sim.stop();
    }
  });

  it('replays the steps in order: at from the start, after the previous step', async () => {
    const sim = await startSimulator({
      fixture: {
        ...base,
        scenario: [
          { at: '300ms', station: 'SC-1', do: 'jam', lockId: '1' },
          { after: 100, station: 'SC-1', do: 'fault', fault: { kind: 'reject', reason: 'storm' } },
          { after: '100ms', station: 'SC-1', do: 'unjam', lockId: '1' },
          { after: '50ms', station: 'SC-1', do: 'offline' },
        ],
      },
    });
    try {
      const stream = await EventSocket.open(`${sim.controlUrl}/events`);
      const offline = await stream.waitFor((e) => e.type === 'station.status' && e.status === 'offline', 'the offline step', 5000);
      // The step's own event follows the control reply, which may come after the status it caused.
      await stream.waitFor((e) => e.type === 'control' && e.action === 'scenario step 4: offline', 'the last step', 5000);
      const steps = stream.events.filter((e) => e.type === 'control').map((e) => e.action);
      expect(steps).toEqual(['scenario step 1: jam lock 1', 'scenario step 2: fault', 'scenario step 3: unjam lock 1', 'scenario step 4: offline']);
      const locks = stream.events.filter((e) => e.type === 'lock.state').map((e) => e.status);
      expect(locks).toEqual(['jammed', 'locked']);
      expect(offline.token).toBe('SC-1');
      const station = await (await fetch(`${sim.controlUrl}/stations/SC-1`)).json();
      expect(station.faults).toMatchObject([{ kind: 'reject', reason: 'storm' }]);
      stream.close();
    } finally {
      await sim.stop();
    }
  });

  it('answers an online step before it sends the offline step right after it', async () => {
    // Sent together, the offline step ended the connection the online step was opening, and the
    // online step failed 5 s later with "Station did not respond".
    const notices: string[] = [];
    const sim = await startSimulator({
      onNotice: (notice) => notices.push(notice),
      fixture: {
        ...base,
        stations: [{ token: 'SC-1', stationId: 1, initialStatus: 'offline', locks: [{ lockId: '1' }] }],
        scenario: [
          { at: '200ms', station: 'SC-1', do: 'online' },
          { after: 0, station: 'SC-1', do: 'offline' },
        ],
      },
    });
    try {
      const stream = await EventSocket.open(`${sim.controlUrl}/events`);
      await stream.waitFor((e) => e.type === 'control' && e.action === 'scenario step 2: offline', 'the offline step', 4000);
      expect(stream.events.filter((e) => e.type === 'control').map((e) => e.action)).toEqual(['scenario step 1: online', 'scenario step 2: offline']);
      expect(notices).toEqual([]);
      const station = await (await fetch(`${sim.controlUrl}/stations/SC-1`)).json();
      expect(station.status).toBe('offline');
      stream.close();
    } finally {
      await sim.stop();
    }
  });

  const problems = (scenario: object[]): string[] => {
    try {
      parseFixture({ ...base, scenario }, 'x.json');
    } catch (error) {
      expect(error).toBeInstanceOf(FixtureError);
      return (error as FixtureError).message.split('\n');
    }
    throw new Error('expected a FixtureError');
  };

  it('rejects steps that cannot run, with their JSON path', () => {
    const rules = [
      { at: '1s', after: '1s', station: 'SC-1', do: 'offline' },
      { at: '1s', station: 'NOPE', do: 'online' },
      { at: '1s', station: 'SC-1', do: 'jam' },
      { at: '1s', station: 'SC-1', do: 'jam', lockId: '7' },
    ];
    // Schema errors come first and alone: the rules are checked on data that fits the schema.
    expect(problems([...rules, { at: 'soon', do: 'reset' }])).toEqual([
      'x.json: /scenario/4/at: must be a duration: milliseconds, or a string such as "500ms", "30s", "2m", "1h".',
    ]);
    expect(problems(rules)).toEqual([
      'x.json: /scenario/0: give "at" or "after", not both',
      'x.json: /scenario/1/station: unknown station token "NOPE"',
      'x.json: /scenario/2: "jam" needs "lockId"',
      'x.json: /scenario/3/lockId: station "SC-1" has no lock "7"',
    ]);
  });

  it('rejects fields that do not belong to the step\'s action, and locks the station does not have', () => {
    const twoLocks = { token: 'SC-2', stationId: 2, locks: [{ lockId: '1' }, { lockId: '2' }] };
    const check = (scenario: object[]): string[] => {
      try {
        parseFixture({ ...base, stations: [...base.stations, twoLocks], scenario }, 'x.json');
      } catch (error) {
        return (error as FixtureError).message.split('\n');
      }
      throw new Error('expected a FixtureError');
    };
    expect(
      check([
        { at: '1s', station: 'SC-2', do: 'fault', fault: { kind: 'reject', lockId: '9' } },
        { at: '1s', station: 'SC-2', do: 'fault', lockId: '2', fault: { kind: 'reject' } },
        { at: '1s', station: 'SC-1', do: 'reset' },
        { at: '1s', station: 'SC-1', do: 'offline', voltage: 11, downMs: 10 },
        { at: '1s', station: 'SC-1', do: 'battery', voltage: 11, lockId: '1' },
        { at: '1s', station: 'SC-1', do: 'jam', lockId: '1', fault: { kind: 'reject' } },
      ]),
    ).toEqual([
      'x.json: /scenario/0/fault/lockId: station "SC-2" has no lock "9"',
      'x.json: /scenario/1/lockId: "fault" takes no "lockId" (a fault for one lock names it inside "fault")',
      'x.json: /scenario/2/station: "reset" takes no "station" (a reset puts every station back)',
      'x.json: /scenario/3/voltage: "offline" takes no "voltage"',
      'x.json: /scenario/3/downMs: "offline" takes no "downMs"',
      'x.json: /scenario/4/lockId: "battery" takes no "lockId"',
      'x.json: /scenario/5/fault: "jam" takes no "fault"',
    ]);
    // What each action does take is accepted.
    const fixture = parseFixture({
      ...base,
      stations: [...base.stations, twoLocks],
      scenario: [
        { at: '1s', station: 'SC-2', do: 'fault', fault: { kind: 'reject', lockId: '2' } },
        { at: '1s', station: 'SC-2', do: 'reboot', downMs: 10 },
        { at: '1s', station: 'SC-2', do: 'battery', voltage: 11 },
        { at: '1s', do: 'reset' },
      ],
    });
    expect(fixture.scenario).toHaveLength(4);
  });

  it('refuses a step whose time, afters added up, is past the longest timer', () => {
    expect(
      problems([
        { at: '576h', station: 'SC-1', do: 'jam', lockId: '1' },
        { after: '24h', station: 'SC-1', do: 'unjam', lockId: '1' },
        // Past the limit only because the step before is: told once, where the sum goes over.
        { after: 0, station: 'SC-1', do: 'offline' },
        { at: '1s', station: 'SC-1', do: 'online' },
        { after: '596h', station: 'SC-1', do: 'offline' },
        { after: '1h', station: 'SC-1', do: 'online' },
      ]),
    ).toEqual([
      'x.json: /scenario/1/after: puts the step 2160000000 ms from the start (2073600000 ms + 86400000 ms), past the longest a scenario runs: 2147483647 ms (about 24.8 days)',
      'x.json: /scenario/5/after: puts the step 2149201000 ms from the start (2145601000 ms + 3600000 ms), past the longest a scenario runs: 2147483647 ms (about 24.8 days)',
    ]);
  });
});
