/**
 * Every stored unlock run at one connection count, beside the speed the machine had at the time.
 * Pure (parsed results in, rows and text out) so `test/bench/history.test.ts` can check it;
 * `bench/history.ts` reads the files.
 *
 * Why it exists: the p99 target is an absolute number of milliseconds, while this machine's speed
 * moves by about 2× from hour to hour. The hello-world measured in the same run gives that speed
 * (µs of CPU per request); these rows show how the unlock's figures follow it.
 */
import type { BenchResult } from './report.js';
import { median } from './stats.js';

export interface HistoryRow {
  /** The result file's name. */
  file: string;
  commit: string;
  broker: string;
  /** Seconds left unmeasured at the start of each load; 0 (or absent) before the fifth session. */
  rampSeconds: number;
  unlockRps: number;
  unlockP99: number;
  /** The mean latency Little's law gives: connections ÷ throughput, ms. */
  littleMeanMs: number;
  /** The machine's speed: CPU of the hello-world server per request, µs. */
  helloCpuUs: number;
  /** CPU of every server process per unlock, µs. */
  unlockCpuUs: number;
  /** unlockCpuUs ÷ helloCpuUs: the unlock's cost measured in hello-worlds. */
  costInHellos: number;
}

/** The rows of one result file at `connections`: one per run, embedded broker first. */
export function historyRows(file: string, result: Partial<BenchResult>, connections: number): HistoryRow[] {
  const rampSeconds = result.header?.options?.rampSeconds ?? 0;
  const commit = (result.header?.commit ?? '').slice(0, 7);
  const rows: HistoryRow[] = [];
  for (const unlock of [result.unlock, result.mosquitto?.unlock]) {
    for (const row of unlock?.rows ?? []) {
      if (row.connections !== connections) continue;
      for (const run of row.runs) {
        if (!(run.unlockRps > 0) || !(run.helloCpuUs > 0) || !(run.unlockCpuUs > 0)) continue;
        rows.push({
          file,
          commit,
          broker: row.broker,
          rampSeconds,
          unlockRps: run.unlockRps,
          unlockP99: run.unlockP99,
          littleMeanMs: (connections * 1000) / run.unlockRps,
          helloCpuUs: run.helloCpuUs,
          unlockCpuUs: run.unlockCpuUs,
          costInHellos: run.unlockCpuUs / run.helloCpuUs,
        });
      }
    }
  }
  return rows;
}

export interface SpeedBand {
  broker: string;
  /** Hello-world CPU per request, µs: this band holds runs with helloCpuUs in [from, to). */
  from: number;
  to: number;
  runs: number;
  /** Runs whose p99 was within the target. */
  met: number;
  medianUnlockRps: number;
  medianP99: number;
}

/** Runs grouped by broker and by the machine's speed, with how many met `p99TargetMs`. */
export function speedBands(rows: readonly HistoryRow[], edges: readonly number[], p99TargetMs: number): SpeedBand[] {
  const bands: SpeedBand[] = [];
  const bounds = [0, ...edges, Number.POSITIVE_INFINITY];
  for (const broker of [...new Set(rows.map((row) => row.broker))]) {
    for (let index = 0; index + 1 < bounds.length; index += 1) {
      const from = bounds[index]!;
      const to = bounds[index + 1]!;
      const inBand = rows.filter((row) => row.broker === broker && row.helloCpuUs >= from && row.helloCpuUs < to);
      if (inBand.length === 0) continue;
      bands.push({
        broker,
        from,
        to,
        runs: inBand.length,
        met: inBand.filter((row) => row.unlockP99 <= p99TargetMs).length,
        medianUnlockRps: median(inBand.map((row) => row.unlockRps)),
        medianP99: median(inBand.map((row) => row.unlockP99)),
      });
    }
  }
  return bands;
}

const fixed = (value: number, digits: number): string => (Number.isFinite(value) ? value.toFixed(digits) : '–');
const whole = (value: number): string => (Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : '–');

function table(head: string[], rows: string[][]): string {
  const line = (cells: string[]): string => `| ${cells.join(' | ')} |`;
  return [line(head), line(head.map(() => '---')), ...rows.map(line)].join('\n');
}

/** The runs as a table, fastest machine first, then the bands. */
export function renderHistory(rows: readonly HistoryRow[], options: { connections: number; edges: readonly number[]; p99TargetMs: number }): string {
  const sorted = [...rows].sort((a, b) => a.broker.localeCompare(b.broker) || a.helloCpuUs - b.helloCpuUs);
  const runs = table(
    ['file', 'commit', 'broker', 'ramp', 'unlock req/s', 'p99', `${options.connections} ÷ req/s`, 'hello CPU / request', 'unlock CPU / request', 'unlock ÷ hello CPU'],
    sorted.map((row) => [
      row.file,
      row.commit,
      row.broker,
      row.rampSeconds > 0 ? `${row.rampSeconds} s` : 'none',
      whole(row.unlockRps),
      `${fixed(row.unlockP99, 1)} ms`,
      `${fixed(row.littleMeanMs, 1)} ms`,
      `${whole(row.helloCpuUs)} µs`,
      `${whole(row.unlockCpuUs)} µs`,
      fixed(row.costInHellos, 1),
    ]),
  );
  const bands = table(
    ['broker', 'hello CPU / request', 'runs', `p99 ≤ ${options.p99TargetMs} ms`, 'median unlock req/s', 'median p99'],
    speedBands(rows, options.edges, options.p99TargetMs).map((band) => [
      band.broker,
      Number.isFinite(band.to) ? `${band.from}–${band.to} µs` : `${band.from} µs and more`,
      String(band.runs),
      `${band.met} of ${band.runs}`,
      whole(band.medianUnlockRps),
      `${fixed(band.medianP99, 1)} ms`,
    ]),
  );
  const costs = rows.map((row) => row.costInHellos);
  const summary =
    rows.length === 0
      ? `No stored run has figures at ${options.connections} connections.`
      : `${rows.length} runs at ${options.connections} connections. An unlock costs ${fixed(median(costs), 1)} hello-worlds of CPU at the median ` +
        `(${fixed(Math.min(...costs), 1)}–${fixed(Math.max(...costs), 1)}).`;
  return `${summary}\n\n${runs}\n\n${bands}\n`;
}
