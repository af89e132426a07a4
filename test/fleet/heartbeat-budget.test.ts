/**
 * The fleet's heartbeat budget: a fixture whose heartbeats one process cannot carry is slowed
 * evenly, said at start, and left alone when it fits.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_HEARTBEATS_PER_SECOND, heartbeatBudget, heartbeatNotice } from '../../src/fleet/heartbeat-budget.js';
import { StationModel } from '../../src/station/station-model.js';
import { ManualClock } from '../../src/shared/clock.js';
import { seededRandom } from '../../src/station/random.js';
import { BUILTIN_BEHAVIOUR } from '../../src/fixture/load-fixture.js';
import type { StationConfig } from '../../src/fixture/fixture-schema.js';
import type { StatusPayload } from '../../src/contract/payloads.js';
import { startSimulator } from '../../src/simulator/start-simulator.js';

const beating = (heartbeatMs: number) => ({ behaviour: { ...BUILTIN_BEHAVIOUR, heartbeatMs } });

describe('heartbeatBudget', () => {
  it('leaves a fleet within the budget alone, and slows one past it by the factor that fits it', () => {
    expect(heartbeatBudget(Array.from({ length: 25 }, () => beating(1000)))).toEqual({ requestedPerSecond: 25, scale: 1 });
    const big = Array.from({ length: 100_000 }, () => beating(1000));
    expect(heartbeatBudget(big)).toEqual({ requestedPerSecond: 100_000, scale: 100_000 / DEFAULT_MAX_HEARTBEATS_PER_SECOND });
    expect(heartbeatBudget(big, 0).scale).toBe(1);
    // Stations without a heartbeat ask for none.
    expect(heartbeatBudget([beating(0), beating(500)], 1)).toEqual({ requestedPerSecond: 2, scale: 2 });
  });

  it('says what it did, with the flag that changes it', () => {
    const budget = heartbeatBudget(Array.from({ length: 100_000 }, () => beating(1000)));
    expect(heartbeatNotice(100_000, budget, 1000)).toBe(
      "100,000 stations' heartbeats would publish 100,000 statuses a second; each beats 100.0× less often, 1,000 a second in all (--max-heartbeat-rate, 0 for no cap)",
    );
    expect(heartbeatNotice(25, heartbeatBudget([beating(1000)]), 1000)).toBeUndefined();
  });

  it('a station beats at its interval times the scale', () => {
    const clock = new ManualClock();
    const statuses: StatusPayload[] = [];
    const config: StationConfig = { token: 'T-1', stationId: 1, batteryVoltage: 12.6, initialStatus: 'online', locks: [{ lockId: '1', status: 'locked' }], behaviour: { ...BUILTIN_BEHAVIOUR, heartbeatMs: 1000 } };
    const model = new StationModel({ config, clock, random: seededRandom(1, 1), heartbeatScale: 3, output: { status: (p) => statuses.push(p), lockState: () => undefined, ack: () => undefined } });
    model.connected();
    statuses.length = 0;
    clock.advance(2999);
    expect(statuses).toHaveLength(0);
    clock.advance(1);
    expect(statuses).toHaveLength(1);
  });

  it('startSimulator says so at start when the fixture asks for more than the budget', async () => {
    const notices: string[] = [];
    const sim = await startSimulator({
      fixture: { description: 'many beats', defaults: { heartbeatMs: 100 }, fleets: [{ count: 20, tokenPattern: 'H-{n}', firstStationId: 1, locksPerStation: 1 }] },
      http: false,
      clock: 'manual',
      maxHeartbeatRate: 50,
      onNotice: (line) => notices.push(line),
    });
    try {
      expect(notices).toContain("20 stations' heartbeats would publish 200 statuses a second; each beats 4.0× less often, 50 a second in all (--max-heartbeat-rate, 0 for no cap)");
    } finally {
      await sim.stop();
    }
  });
});
