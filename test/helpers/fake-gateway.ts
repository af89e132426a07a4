/** An in-memory `StationGateway` for HTTP tests that do not need MQTT. */
import { SimError } from '../../src/errors.js';
import type { Fixture } from '../../src/fixture/fixture-schema.js';
import type { Station } from '../../src/service/http/api-schemas.js';
import type { StationGateway, UnlockOutcome } from '../../src/service/station-gateway.js';

export class FakeGateway implements StationGateway {
  readonly stations = new Map<string, Station>();
  readonly unlocks: { token: string; lockId: string }[] = [];
  /** What the next unlocks answer. */
  outcome: UnlockOutcome = { success: true };
  /** Makes `getStation` throw, to exercise the 500 path. */
  failWith: Error | undefined;

  constructor(fixture: Fixture) {
    for (const config of fixture.stations) {
      this.stations.set(config.token, {
        stationId: config.stationId,
        batteryVoltage: config.batteryVoltage,
        lastConnection: '2026-01-01T00:00:00.000Z',
        status: config.initialStatus,
        locks: config.locks.map((lock) => ({ lockId: lock.lockId, status: lock.status, lastUpdated: '2026-01-01T00:00:00.000Z' })),
      });
    }
  }

  getStation(token: string): Station | undefined {
    if (this.failWith) throw this.failWith;
    return this.stations.get(token);
  }

  async unlock(token: string, lockId: string): Promise<UnlockOutcome> {
    const station = this.stations.get(token);
    if (!station) throw new SimError('STATION_NOT_FOUND');
    if (!station.locks.some((lock) => lock.lockId === lockId)) throw new SimError('LOCK_NOT_FOUND');
    this.unlocks.push({ token, lockId });
    return this.outcome;
  }
}
