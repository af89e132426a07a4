/**
 * The service's picture of the stations, built only from what they publish (DESIGN.md rule 1):
 * the retained status and lock-state messages. The fixture supplies what a station has not said
 * yet, so every station it lists can be shown from the first request on.
 */
import type { StationConfig } from '../../fixture/fixture-schema.js';
import type { StationStatus } from '../../contract/statuses.js';
import type { LockStatePayload, StatusPayload } from '../../contract/payloads.js';
import type { Lock, Station } from '../http/api-schemas.js';

/**
 * `lastConnection`/`lastUpdated` of a station or lock that has never reported. The interface
 * (section 2) types both as ISO 8601 strings, so "never" is the epoch rather than null: clients
 * that parse the field keep working, and the value cannot be mistaken for a recent time.
 */
export const NEVER_REPORTED = new Date(0).toISOString();

interface CachedStation {
  status: StatusPayload | undefined;
  /** Only locks the fixture gives the station (the gateway refuses others). */
  locks: Map<string, LockStatePayload>;
}

export class StationStateCache {
  readonly #stations = new Map<string, CachedStation>();

  /** Forgets everything, before the retained messages are received again (after a reconnect). */
  clear(): void {
    this.#stations.clear();
  }

  /** Records a retained status message; `undefined` means the retained message was cleared. */
  applyStatus(token: string, payload: StatusPayload | undefined): void {
    const entry = this.#entry(token);
    entry.status = payload;
    this.#dropIfEmpty(token, entry);
  }

  /**
   * Records a retained lock state of a lock the fixture lists (`hasLock`); `undefined` means the
   * retained message was cleared.
   */
  applyLockState(token: string, lockId: string, payload: LockStatePayload | undefined): void {
    const entry = this.#entry(token);
    if (payload) entry.locks.set(lockId, payload);
    else entry.locks.delete(lockId);
    this.#dropIfEmpty(token, entry);
  }

  /** The station's own status; a station that never reported counts as offline. */
  statusOf(token: string): StationStatus {
    return this.#stations.get(token)?.status?.status ?? 'offline';
  }

  /** A lock the fixture gives the station: the only locks the gateway shows and commands. */
  hasLock(config: StationConfig, lockId: string): boolean {
    return config.locks.some((lock) => lock.lockId === lockId);
  }

  /**
   * The Station object of interface section 2.
   * - Fields come from the last retained status; until there is one, the station is `offline`
   *   with the fixture's stationId and battery voltage.
   * - Locks are the fixture's, in fixture order, each with its last published state (until then,
   *   the fixture's starting status).
   * - `reachable: false` (the service has lost the broker) shows the station `offline`, because
   *   `online` promises that commands may be sent (interface section 2), which is then untrue.
   */
  view(config: StationConfig, reachable: boolean): Station {
    const cached = this.#stations.get(config.token);
    const status = cached?.status;
    const locks: Lock[] = config.locks.map((lock) => {
      const state = cached?.locks.get(lock.lockId);
      return state
        ? { lockId: lock.lockId, status: state.status, lastUpdated: state.lastUpdated }
        : { lockId: lock.lockId, status: lock.status, lastUpdated: NEVER_REPORTED };
    });
    return {
      stationId: status?.stationId ?? config.stationId,
      batteryVoltage: status?.batteryVoltage ?? config.batteryVoltage,
      lastConnection: status?.lastConnection ?? NEVER_REPORTED,
      status: reachable ? (status?.status ?? 'offline') : 'offline',
      locks,
    };
  }

  #entry(token: string): CachedStation {
    let entry = this.#stations.get(token);
    if (!entry) {
      entry = { status: undefined, locks: new Map() };
      this.#stations.set(token, entry);
    }
    return entry;
  }

  #dropIfEmpty(token: string, entry: CachedStation): void {
    if (entry.status === undefined && entry.locks.size === 0) this.#stations.delete(token);
  }
}
