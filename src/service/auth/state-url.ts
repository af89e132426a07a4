/**
 * What a session store URL looks like (`--state`, `api.state`, `STATION_SIM_STATE_URL`), apart
 * from the Redis store itself: the CLI and the option checks need only this, and loading the
 * Redis client to check a string would slow every start-up, the many without Redis included.
 */
/** True for the URLs the store takes. */
export function isStateUrl(value: unknown): value is string {
  return typeof value === 'string' && /^rediss?:\/\/[^/]/i.test(value);
}

export const STATE_URL_WANTS = 'a Redis URL, redis://[:password@]host[:port][/db] or rediss://… for TLS';
