/**
 * One station's resolved config for tests of the station model: token T-1, station id 1, one lock
 * "1", the built-in behaviour with 1 s unlock, 5 s relock and a 30 s heartbeat; `behaviour`
 * overrides any of it.
 */
import { BUILTIN_BEHAVIOUR } from '../../src/fixture/load-fixture.js';
import type { ResolvedBehaviour, StationConfig } from '../../src/fixture/fixture-schema.js';

export function oneLockStation(behaviour: Partial<ResolvedBehaviour> = {}): StationConfig {
  return {
    token: 'T-1',
    stationId: 1,
    batteryVoltage: 12.6,
    initialStatus: 'online',
    locks: [{ lockId: '1', status: 'locked' }],
    behaviour: { ...BUILTIN_BEHAVIOUR, unlockDelayMs: 1000, relockMs: 5000, heartbeatMs: 30_000, ...behaviour },
  };
}
