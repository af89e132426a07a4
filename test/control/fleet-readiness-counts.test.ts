/**
 * Health's station counts are kept as statuses come, not walked per call: they must always equal
 * what `statusOf` says of each station, whatever the order of reports, losses of the broker
 * session and control actions.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { FleetReadiness } from '../../src/control/fleet-readiness.js';
import { parseFixture } from '../../src/fixture/load-fixture.js';

const fixture = parseFixture({
  stations: [
    { token: 'A', stationId: 1, locks: [{ lockId: '1' }] },
    { token: 'B', stationId: 2, locks: [{ lockId: '1' }] },
    { token: 'C', stationId: 3, initialStatus: 'offline', locks: [{ lockId: '1' }] },
    { token: 'D', stationId: 4, initialStatus: 'offline', locks: [{ lockId: '1' }] },
  ],
});
const tokens = ['A', 'B', 'C', 'D', 'NOT-IN-FIXTURE'];

function walked(readiness: FleetReadiness): { online: number; offline: number } {
  let online = 0;
  let offline = 0;
  for (const station of fixture.stations) {
    const status = readiness.statusOf(station.token);
    if (status === 'online') online += 1;
    else if (status === 'offline') offline += 1;
  }
  return { online, offline };
}

describe('FleetReadiness.counts', () => {
  it('equals a walk of statusOf over the fleet after any sequence of events', () => {
    const step = fc.oneof(
      fc.record({ kind: fc.constant('report' as const), token: fc.constantFrom(...tokens), status: fc.constantFrom('online' as const, 'offline' as const) }),
      fc.record({ kind: fc.constant('forget' as const) }),
      fc.record({ kind: fc.constant('control' as const), token: fc.constantFrom(...tokens), online: fc.boolean() }),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }), (steps) => {
        let now = 0;
        const readiness = new FleetReadiness({ fixture, wallClock: () => (now += 1000) });
        expect(readiness.counts()).toEqual(walked(readiness));
        for (const event of steps) {
          if (event.kind === 'report') readiness.report(event.token, event.status);
          else if (event.kind === 'forget') readiness.forgetStatuses();
          else readiness.controlled(event.token, { action: 'connection', online: event.online });
          expect(readiness.counts()).toEqual(walked(readiness));
        }
      }),
      { numRuns: 2000 },
    );
  });
});
