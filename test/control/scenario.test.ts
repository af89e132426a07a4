import { describe, expect, it } from 'vitest';
import { startSimulator } from '../../src/simulator/start-simulator.js';
import { parseFixture, FixtureError } from '../../src/fixture/load-fixture.js';
import { EventSocket } from '../helpers/event-socket.js';

const base = {
  defaults: { unlockDelayMs: 10, relockMs: 50, heartbeatMs: 0 },
  stations: [{ token: 'SC-1', stationId: 1, locks: [{ lockId: '1' }] }],
};

describe('scenario timelines', () => {
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

  it('rejects steps that cannot run, with their JSON path', () => {
    const problems = (scenario: object[]): string[] => {
      try {
        parseFixture({ ...base, scenario }, 'x.json');
      } catch (error) {
        expect(error).toBeInstanceOf(FixtureError);
        return (error as FixtureError).message.split('\n');
      }
      throw new Error('expected a FixtureError');
    };
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
});
