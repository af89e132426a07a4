/**
 * Small, pure statistics for benchmark figures: medians across runs and percentiles of latency
 * samples. Kept free of I/O so `test/bench/stats.test.ts` can check them.
 */

/** The median of `values` (the mean of the two middle values for an even count); NaN when empty. */
export function median(values: readonly number[]): number {
  const sorted = values.filter((value) => Number.isFinite(value)).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/**
 * The `p`th percentile (0–100) of `sorted`, which must be sorted ascending, by the nearest-rank
 * method: the smallest sample such that at least p % of the samples are less than or equal to it.
 * NaN when empty.
 */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((Math.min(100, Math.max(0, p)) / 100) * sorted.length);
  return sorted[Math.max(0, rank - 1)]!;
}

/** What a latency distribution is summarised to. Milliseconds. */
export interface LatencySummary {
  count: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/** Summarises latency samples (milliseconds, any order). The input is not modified. */
export function summarizeLatencies(samples: ArrayLike<number>): LatencySummary {
  const sorted = Float64Array.from(samples).sort();
  let total = 0;
  for (const value of sorted) total += value;
  return {
    count: sorted.length,
    mean: sorted.length === 0 ? Number.NaN : total / sorted.length,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.length === 0 ? Number.NaN : sorted[sorted.length - 1]!,
  };
}

/** A numeric record: the shape of one run's figures. */
export type Figures = Record<string, number>;

/**
 * The per-key median of several runs' figures. A key missing from a run (a run that failed before
 * measuring it) is left out of that key's median rather than counted as zero.
 */
export function medianFigures<T extends Figures>(runs: readonly Partial<T>[]): Partial<T> {
  const keys = new Set(runs.flatMap((run) => Object.keys(run)));
  const result: Figures = {};
  for (const key of keys) {
    const values = runs.map((run) => run[key] as number | undefined).filter((value): value is number => typeof value === 'number');
    if (values.length > 0) result[key] = median(values);
  }
  return result as Partial<T>;
}

/** Rounds to `digits` decimal places (for JSON that people read). */
export function round(value: number, digits = 1): number {
  if (!Number.isFinite(value)) return value;
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

/** Bytes to MiB, one decimal. */
export function mib(bytes: number): number {
  return round(bytes / 1_048_576, 1);
}
