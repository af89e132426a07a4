/**
 * The `judge-cost` part: what the judge costs, measured so that two processes of the same build
 * cannot pass for a difference (issue 26: "fresh process pairs per round, alternating which starts
 * first, with an A/A control, on ≥ 8 rounds: on ÷ off ≤ 1.05").
 *
 * Every round starts two fresh pairs of simulators, each one a child as `station-sim up` runs it
 * on the unlock fixture: an A/B pair (the judge on, and `judge.enabled: false`) and an A/A pair
 * (the judge on in both). A process that happens to land on a busier core, or a heap that grew
 * differently, lives for one round only. Within each pair the side started first alternates from
 * round to round, and so does the side loaded first (the same fixed-rate unlock load, so both do
 * the same work whatever the machine does). The pairs themselves alternate too (A/B then A/A, then
 * A/A then A/B …). The figure is server CPU per successful unlock; per round the ratio a ÷ b, and
 * over the rounds the median ratio and the ratio of the pooled CPU. The A/A ratio is what the
 * harness makes of two like processes: the A/B ratio means something only beside it.
 *
 *   npm run bench -- --only judge-cost [--judge-rounds 8] [--judge-rate 300] [--judge-seconds 10]
 */
import { toMeasurement, type JudgeMeasurement, type JudgeOptions } from './judge.js';
import { login, runLoad, startUnlockServers, type LoadRun, type UnlockServers } from './lib/servers.js';
import { median, round } from './lib/stats.js';

/** At most 5 % more server CPU per unlock with the judge on (issue 26). */
export const JUDGE_COST_TARGET = 1.05;

/**
 * How the two sides of a pair are loaded: `together`, both at once for the same seconds, so a
 * change in the machine's speed during a round (shared machines move 2× from hour to hour, and
 * by a tenth within a minute) touches both sides alike; or `apart`, one after the other, the side
 * loaded first alternating, as the results before 2026-11-28 evening were measured.
 */
export type PairLoading = 'together' | 'apart';

/** The `judge` part's options: every round has its own A/A control here, so there is no `aaControl`. */
export type JudgeCostOptions = Omit<JudgeOptions, 'aaControl'> & { loading?: PairLoading };

export type PairKind = 'A/B' | 'A/A';

/** One pair of one round: `a` has the judge on; `b` has it off (A/B) or on (A/A). */
export interface PairRound {
  round: number;
  kind: PairKind;
  startedFirst: 'a' | 'b';
  loadedFirst: 'a' | 'b';
  a: JudgeMeasurement;
  b: JudgeMeasurement;
  /** a.cpuUs ÷ b.cpuUs. */
  ratio: number;
  /** Findings of the judge-on side(s) at the end: station-sim's own gateway must break none. */
  findings: number;
}

export interface PairSummary {
  /** Median of the rounds' ratios. */
  ratio: number;
  /** Σ CPU of a ÷ Σ CPU of b per unlock, over every round. */
  pooledRatio: number;
  aCpuUs: number;
  bCpuUs: number;
}

export interface JudgeCostResult {
  connections: number;
  rate: number;
  durationSeconds: number;
  stations: number;
  locks: number;
  loading: PairLoading;
  rounds: PairRound[];
  ab?: PairSummary;
  aa?: PairSummary;
  failures: string[];
}

export async function runJudgeCost(options: JudgeCostOptions): Promise<JudgeCostResult> {
  const result: JudgeCostResult = {
    connections: options.connections,
    rate: options.rate,
    durationSeconds: options.durationSeconds,
    stations: options.stations,
    locks: options.locks,
    loading: options.loading ?? 'together',
    rounds: [],
    failures: [],
  };
  let offset = Math.floor(Math.random() * options.stations * options.locks);
  for (let round = 1; round <= options.rounds; round += 1) {
    const kinds: PairKind[] = round % 2 === 1 ? ['A/B', 'A/A'] : ['A/A', 'A/B'];
    for (const kind of kinds) {
      try {
        const measured = await measurePair(options, kind, round, () => (offset += 7919));
        result.rounds.push(measured);
        options.log(
          `judge-cost round ${round}/${options.rounds} ${kind} (started ${measured.startedFirst} first, loaded ${measured.loadedFirst} first): ` +
            `a ${measured.a.cpuUs} µs/unlock at ${measured.a.rps} req/s, b ${measured.b.cpuUs} µs/unlock at ${measured.b.rps} req/s, ratio ${measured.ratio}, ` +
            `errors ${measured.a.errors}/${measured.b.errors}, other load ${measured.a.otherCpu}/${measured.b.otherCpu}, findings ${measured.findings}`,
        );
      } catch (error) {
        const message = `judge-cost round ${round} ${kind}: ${error instanceof Error ? error.message : String(error)}`;
        result.failures.push(message);
        options.log(`${message} (FAILED)`);
      }
    }
  }
  summariseCost(result);
  return result;
}

/** One pair of fresh simulators, started, warmed up, loaded in turn and stopped. */
async function measurePair(options: JudgeCostOptions, kind: PairKind, roundNumber: number, nextOffset: () => number): Promise<PairRound> {
  const shape = { broker: 'embedded' as const, stations: options.stations, locks: options.locks, verbose: options.verbose ?? false };
  const startedFirst: 'a' | 'b' = roundNumber % 2 === 1 ? 'a' : 'b';
  // The other way round from the start order in odd rounds, the same in even ones: all four combinations over four rounds.
  const loadedFirst: 'a' | 'b' = Math.ceil(roundNumber / 2) % 2 === 1 ? (startedFirst === 'a' ? 'b' : 'a') : startedFirst;
  const started: Partial<Record<'a' | 'b', UnlockServers>> = {};
  try {
    for (const side of startedFirst === 'a' ? (['a', 'b'] as const) : (['b', 'a'] as const)) {
      started[side] = await startUnlockServers(side === 'b' && kind === 'A/B' ? { ...shape, judge: { enabled: false } } : shape);
    }
    const tokens = { a: await login(started.a!.apiUrl), b: await login(started.b!.apiUrl) };
    const load = (side: 'a' | 'b', durationSeconds: number, rampSeconds: number) =>
      runLoad(
        { url: started[side]!.apiUrl, kind: 'unlock', connections: options.connections, overallRate: options.rate, durationSeconds, rampSeconds, stations: options.stations, locks: options.locks, offset: nextOffset() },
        { token: tokens[side], processes: started[side]!.processes, verbose: options.verbose ?? false },
      );
    const order = loadedFirst === 'a' ? (['a', 'b'] as const) : (['b', 'a'] as const);
    const measured = await loadPair(options, order, load);
    const findings = (await judgeFindings(started.a!.apiUrl)) + (kind === 'A/A' ? await judgeFindings(started.b!.apiUrl) : 0);
    return { round: roundNumber, kind, startedFirst, loadedFirst, a: measured.a!, b: measured.b!, ratio: round(measured.a!.cpuUs / measured.b!.cpuUs, 3), findings };
  } finally {
    for (const side of startedFirst === 'a' ? (['b', 'a'] as const) : (['a', 'b'] as const)) await started[side]?.stop();
  }
}

/** Warms both sides up, then measures them: at once (`together`) or one after the other in `order`. */
async function loadPair(
  options: JudgeCostOptions,
  order: readonly ['a', 'b'] | readonly ['b', 'a'],
  load: (side: 'a' | 'b', durationSeconds: number, rampSeconds: number) => Promise<LoadRun>,
): Promise<Record<'a' | 'b', JudgeMeasurement>> {
  if ((options.loading ?? 'together') === 'together') {
    if (options.warmupSeconds > 0) await Promise.all(order.map((side) => load(side, options.warmupSeconds, 0)));
    const [first, second] = await Promise.all(order.map((side) => load(side, options.durationSeconds, options.rampSeconds)));
    const [firstSide, secondSide] = order;
    return { [firstSide]: toMeasurement(first!), [secondSide]: toMeasurement(second!) } as Record<'a' | 'b', JudgeMeasurement>;
  }
  if (options.warmupSeconds > 0) for (const side of order) await load(side, options.warmupSeconds, 0);
  const measured: Partial<Record<'a' | 'b', JudgeMeasurement>> = {};
  for (const side of order) measured[side] = toMeasurement(await load(side, options.durationSeconds, options.rampSeconds));
  return measured as Record<'a' | 'b', JudgeMeasurement>;
}

/** The medians and pooled ratios of each kind of pair. */
export function summariseCost(result: JudgeCostResult): void {
  for (const kind of ['A/B', 'A/A'] as const) {
    const rounds = result.rounds.filter((r) => r.kind === kind);
    if (rounds.length === 0) continue;
    const pooled = (side: 'a' | 'b'): number => rounds.reduce((sum, r) => sum + r[side].cpuUs * r[side].rps, 0) / rounds.reduce((sum, r) => sum + r[side].rps, 0);
    const summary: PairSummary = {
      ratio: round(median(rounds.map((r) => r.ratio)), 3),
      pooledRatio: round(pooled('a') / pooled('b'), 3),
      aCpuUs: round(median(rounds.map((r) => r.a.cpuUs)), 1),
      bCpuUs: round(median(rounds.map((r) => r.b.cpuUs)), 1),
    };
    if (kind === 'A/B') result.ab = summary;
    else result.aa = summary;
  }
}

/** The part as markdown: every pair of every round, then the medians, the A/A control and the target. */
export function renderJudgeCost(result: JudgeCostResult): string {
  const lines = [
    `${result.stations} stations × ${result.locks} locks, ${result.rate} unlocks/s over ${result.connections} connections, ${result.durationSeconds} s per measurement; ` +
      'a fresh pair of processes for every measurement, the side started first and the side loaded first alternating; ' +
      (result.loading === 'apart' ? 'the two sides loaded one after the other.' : 'the two sides loaded at the same time (the "loaded first" side\'s load starts a moment earlier), so a change in the machine\'s speed touches both.'),
    '',
    '| round | pair | started first | loaded first | a µs / unlock | req/s | b µs / unlock | req/s | a ÷ b | errors a / b | other load a / b | findings |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...result.rounds.map(
      (r) =>
        `| ${r.round} | ${r.kind} | ${r.startedFirst} | ${r.loadedFirst} | ${r.a.cpuUs} | ${r.a.rps} | ${r.b.cpuUs} | ${r.b.rps} | ${r.ratio.toFixed(3)} | ${r.a.errors} / ${r.b.errors} | ${r.a.otherCpu} / ${r.b.otherCpu} | ${r.findings} |`,
    ),
    '',
  ];
  const line = (name: string, summary: PairSummary | undefined): string =>
    summary ? `${name}: median a ÷ b ${summary.ratio.toFixed(3)}× (pooled ${summary.pooledRatio.toFixed(3)}×; a ${summary.aCpuUs} µs, b ${summary.bCpuUs} µs per unlock)` : `${name}: not measured`;
  lines.push(`- ${line('A/B (a: judge on, b: judge off)', result.ab)}`);
  lines.push(`- ${line('A/A control (both judge on)', result.aa)}`);
  const met = result.ab ? (result.ab.ratio <= JUDGE_COST_TARGET ? 'met' : 'NOT met') : 'not measured';
  const findings = result.rounds.reduce((sum, r) => sum + r.findings, 0);
  lines.push(`- **Target:** judge on ÷ off ≤ ${JUDGE_COST_TARGET.toFixed(2)}: ${result.ab ? `${result.ab.ratio.toFixed(3)}×` : '–'} (${met}); findings on station-sim's own gateway: ${findings} (target 0).`);
  for (const failure of result.failures) lines.push(`- FAILED: ${failure}`);
  return lines.join('\n');
}

/** How many findings `GET /sim/v1/judge` counts (the bench fixtures set no control token). */
async function judgeFindings(apiUrl: string): Promise<number> {
  const response = await fetch(`${apiUrl}/sim/v1/judge`);
  if (!response.ok) throw new Error(`GET /sim/v1/judge: HTTP ${response.status}`);
  const { summary } = (await response.json()) as { summary: Record<string, number> };
  return Object.values(summary).reduce((sum, count) => sum + count, 0);
}
