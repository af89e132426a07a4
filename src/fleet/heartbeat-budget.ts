/**
 * A fleet's heartbeats within a rate its process can carry. Every heartbeat republishes a status
 * that the broker stores and the `/v1` gateway and the control plane read: 100,000 stations beating
 * every second would be 100,000 publications a second, more than one process can carry, and the
 * fleet would never finish starting. Past `maxPerSecond`, every station's heartbeat slows by the
 * same factor, so the fleet publishes `maxPerSecond` at most; the start-up notice says so.
 */
import type { StationConfig } from '../fixture/fixture-schema.js';

/** Statuses a second a fleet process publishes for heartbeats at most, unless told otherwise. */
export const DEFAULT_MAX_HEARTBEATS_PER_SECOND = 1000;

export interface HeartbeatBudget {
  /** Heartbeats a second the fixture asks for, over the stations given. */
  requestedPerSecond: number;
  /** The factor every heartbeat interval is multiplied by: 1 within the budget. */
  scale: number;
}

/** `maxPerSecond` 0 (or Infinity) is no cap. */
export function heartbeatBudget(stations: readonly Pick<StationConfig, 'behaviour'>[], maxPerSecond = DEFAULT_MAX_HEARTBEATS_PER_SECOND): HeartbeatBudget {
  let requestedPerSecond = 0;
  for (const station of stations) {
    const interval = station.behaviour.heartbeatMs;
    if (interval > 0) requestedPerSecond += 1000 / interval;
  }
  const capped = maxPerSecond > 0 && Number.isFinite(maxPerSecond) && requestedPerSecond > maxPerSecond;
  return { requestedPerSecond, scale: capped ? requestedPerSecond / maxPerSecond : 1 };
}

/** The start-up notice of a slowed fleet, or undefined when nothing was slowed. */
export function heartbeatNotice(stations: number, budget: HeartbeatBudget, maxPerSecond: number): string | undefined {
  if (budget.scale === 1) return undefined;
  const rate = (value: number): string => Math.round(value).toLocaleString('en-US');
  return (
    `${rate(stations)} stations' heartbeats would publish ${rate(budget.requestedPerSecond)} statuses a second; ` +
    `each beats ${budget.scale.toFixed(1)}× less often, ${rate(maxPerSecond)} a second in all (--max-heartbeat-rate, 0 for no cap)`
  );
}
