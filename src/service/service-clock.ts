/**
 * The wall clock of the `/v1` service. Token lifetimes, refresh-token expiry and timestamps in
 * commands read time only through this, so tests can move time forward instead of sleeping
 * (STYLE.md, "Seams for testing"). `Clock` from `src/shared/clock.ts` fits it structurally.
 */
export interface ServiceClock {
  /** Milliseconds since the epoch. */
  now(): number;
}

/** Real time. A factory rather than a shared constant, so nothing is a module-level singleton. */
export function systemServiceClock(): ServiceClock {
  return { now: () => Date.now() };
}
