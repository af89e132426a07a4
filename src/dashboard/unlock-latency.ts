/**
 * Unlock latency (request → unlocked) over the last minutes, from what the activity log measured:
 * per time slot for the sparkline, and the figures and slowest unlocks of the fleet overview. Pure,
 * so it can be tested without a screen.
 */
import type { UnlockLatency } from './activity-log.js';

/** The window the sparkline and the overview look back over. */
export const LATENCY_WINDOW_MS = 5 * 60_000;

/**
 * The slowest unlock of each of `slots` equal slots of the window ending at `now`, oldest first;
 * `undefined` for a slot with none. The slowest rather than the mean: one stuck unlock is the news.
 */
export function latencySlots(latencies: readonly UnlockLatency[], now: number, slots: number, windowMs = LATENCY_WINDOW_MS): (number | undefined)[] {
  const out: (number | undefined)[] = Array.from({ length: Math.max(0, slots) }, () => undefined);
  if (slots <= 0) return out;
  const start = now - windowMs;
  for (const each of latencies) {
    if (each.at < start || each.at > now) continue;
    const slot = Math.min(slots - 1, Math.floor(((each.at - start) / windowMs) * slots));
    out[slot] = Math.max(out[slot] ?? 0, each.ms);
  }
  return out;
}

export interface LatencySummary {
  count: number;
  /** Undefined without unlocks in the window. */
  median?: number;
  p95?: number;
  /** Slowest first, at most `top`. */
  slowest: UnlockLatency[];
}

export function summariseLatencies(latencies: readonly UnlockLatency[], now: number, top = 5, windowMs = LATENCY_WINDOW_MS): LatencySummary {
  const recent = latencies.filter((each) => each.at >= now - windowMs && each.at <= now);
  if (recent.length === 0) return { count: 0, slowest: [] };
  const sorted = recent.map((each) => each.ms).sort((a, b) => a - b);
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
  const slowest = [...recent].sort((a, b) => b.ms - a.ms).slice(0, top);
  return { count: recent.length, median: at(0.5), p95: at(0.95), slowest };
}
