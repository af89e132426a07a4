import { describe, expect, it } from 'vitest';
import { StationModel, type LockPhase } from '../../src/station/station-model.js';
import { ManualClock } from '../../src/shared/clock.js';
import { seededRandom } from '../../src/station/random.js';
import type { StationConfig } from '../../src/fixture/fixture-schema.js';
import { oneLockStation } from '../helpers/station-config.js';

function makeStation() {
  const clock = new ManualClock();
  const phases: LockPhase[] = [];
  const config: StationConfig = oneLockStation();
  const model = new StationModel({
    config,
    clock,
    random: seededRandom(1, config.stationId),
    output: { status: () => undefined, lockState: () => undefined, ack: () => undefined, lockPhase: (p) => phases.push(p) },
  });
  model.connected();
  return { model, clock, phases };
}

describe('StationModel lock phases', () => {
  it('reports opening with the accepted command, open with the unlocked state, none with the relock', () => {
    const { model, clock, phases } = makeStation();
    const start = clock.now();
    model.handleUnlock('1', 'cmd-1');
    clock.advance(1000);
    clock.advance(5000);
    expect(phases).toEqual([
      { lockId: '1', pending: 'opening', status: 'locked', lastUpdated: new Date(start).toISOString(), commandId: 'cmd-1' },
      { lockId: '1', pending: 'open', status: 'unlocked', lastUpdated: new Date(start + 1000).toISOString() },
      { lockId: '1', pending: null, status: 'locked', lastUpdated: new Date(start + 6000).toISOString() },
    ]);
  });

  it('reports every accepted unlock, also one that changes nothing (ackNoOpen, or already opening)', () => {
    const { model, phases } = makeStation();
    model.addFault({ kind: 'ackNoOpen', count: 1 });
    model.handleUnlock('1', 'cmd-1');
    model.handleUnlock('1', 'cmd-2');
    model.handleUnlock('1', 'cmd-3');
    expect(phases.map((p) => [p.commandId, p.pending])).toEqual([
      ['cmd-1', null],
      ['cmd-2', 'opening'],
      ['cmd-3', 'opening'],
    ]);
  });

  it('reports the end of a phase that a jam or a forced close cuts short', () => {
    const { model, clock, phases } = makeStation();
    model.handleUnlock('1', 'cmd-1');
    model.physical('1', 'jam');
    model.physical('1', 'forceOpen');
    model.physical('1', 'forceClose');
    clock.advance(60_000);
    expect(phases.map((p) => [p.status, p.pending])).toEqual([
      ['locked', 'opening'],
      ['jammed', null],
      ['unlocked', 'open'],
      ['locked', null],
    ]);
  });
});
