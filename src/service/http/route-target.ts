/**
 * The station and lock a `/v1` request's route names (`:station_token`, `:lock_id`), when they may
 * be told: on the event stream (src/control/control-plane.ts) and to the judge of the client
 * (client-judging.ts). A station's token is its id (`CI-1`), not a credential, but the path is
 * whatever the caller put there: a value longer than 32 characters is told only when it names a
 * station (or a lock of it) of the fixture, so a refresh token (43 characters) or a JWT pasted into
 * the path by mistake never reaches a finding, a transcript or the stream, while a short typo
 * (`CI-l`) is worth seeing.
 *
 * Runs for every request, twice with the judge on: no closure, and one small object at most.
 */
import { TOKEN_PATTERN } from '../../fixture/fixture-schema.js';

export interface RouteTarget {
  token?: string;
  lockId?: string;
}

/** What the route target needs of a fixture's station. */
export interface TargetStation {
  locks: readonly { lockId: string }[];
}

const MAX_UNKNOWN_VALUE_LENGTH = 32;

/** A request that names no station: shared, never changed. */
const NO_TARGET: RouteTarget = Object.freeze({});

export function routeTarget(params: unknown, stationOf: (token: string) => TargetStation | undefined): RouteTarget {
  if (typeof params !== 'object' || params === null) return NO_TARGET;
  const { station_token: token, lock_id: lockId } = params as { station_token?: unknown; lock_id?: unknown };
  if (typeof token !== 'string') return NO_TARGET;
  const station = stationOf(token);
  if (station === undefined && !mayTell(token)) return NO_TARGET;
  if (typeof lockId === 'string' && (hasLock(station, lockId) || mayTell(lockId))) return { token, lockId };
  return { token };
}

/** A value short enough and shaped like a token to be told even though the fixture does not have it. */
function mayTell(value: string): boolean {
  return value.length <= MAX_UNKNOWN_VALUE_LENGTH && TOKEN_PATTERN.test(value);
}

function hasLock(station: TargetStation | undefined, lockId: string): boolean {
  if (station === undefined) return false;
  for (const lock of station.locks) if (lock.lockId === lockId) return true;
  return false;
}
