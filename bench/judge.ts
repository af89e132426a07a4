/**
 * The `judge` part: what the judge costs (issue 19: "the judge adds no more than 10 % server CPU per
 * unlock, same run, judge on and off"). Two simulators run side by side, each in its own child as
 * `station-sim up` runs it, on the unlock fixture: one as it ships (the judge on), one with
 * `judge.enabled: false`. The same unlock load, at a fixed rate so that both do the same work
 * whatever else the machine does, goes to each in turn, round after round, in the order on-off,
 * off-on, on-off … so a machine that gets busier or quieter during the run weighs on both alike.
 * The figure is server CPU per successful unlock (every process but the driver), the median of the
 * rounds of each; the target is on ÷ off ≤ 1.10.
 *
 *   npm run bench -- --only judge [--judge-rounds 8] [--judge-rate 300] [--judge-seconds 10]
 */
import { ServiceJudge, type ReceivedCommand } from '../src/judge/service-judge.js';
import { login, runLoad, startUnlockServers, type LoadRun, type UnlockServers } from './lib/servers.js';
import { median, round } from './lib/stats.js';
import { cpuMicrosPerRequest } from './unlock.js';

export interface JudgeOptions {
  /** Rounds; each measures the judge on once and off once. */
  rounds: number;
  /** HTTP connections of the unlock load. */
  connections: number;
  /** Unlocks per second of the load, over all connections. */
  rate: number;
  /** Seconds of each measurement. */
  durationSeconds: number;
  /** Seconds of warm-up load on each simulator before the first round. */
  warmupSeconds: number;
  /** Unmeasured seconds at the start of each load (bench/README.md, "Ramp"). */
  rampSeconds: number;
  stations: number;
  locks: number;
  /**
   * A/A control: the "off" simulator keeps its judge on too, so on ÷ off shows what the harness
   * itself makes of two like processes (`--judge-aa`). @default false
   */
  aaControl?: boolean;
  log: (line: string) => void;
  verbose?: boolean;
}

/** One measurement of one simulator. */
export interface JudgeMeasurement {
  /** Successful unlocks per second. */
  rps: number;
  /** Server CPU per successful unlock, µs. */
  cpuUs: number;
  /** Non-2xx answers, connection errors, timeouts and bodies without `"success":true`. */
  errors: number;
  /** CPU the rest of the machine used meanwhile, in cores. */
  otherCpu: number;
}

export interface JudgeRound {
  on: JudgeMeasurement;
  off: JudgeMeasurement;
  /** Which one ran first in this round. */
  first: 'on' | 'off';
}

export interface JudgeResult {
  /** Both simulators had the judge on (`--judge-aa`): the ratio measures the harness, not the judge. */
  aaControl: boolean;
  connections: number;
  rate: number;
  durationSeconds: number;
  stations: number;
  locks: number;
  rounds: JudgeRound[];
  /** Medians over the rounds. */
  onCpuUs: number;
  offCpuUs: number;
  onRps: number;
  offRps: number;
  /** onCpuUs ÷ offCpuUs: the target is at most `JUDGE_CPU_TARGET`. */
  ratio: number;
  /** The same from the CPU and unlocks summed over every round: less sensitive to one odd round. */
  pooledRatio: number;
  /** Findings of the judge in the judge-on simulator at the end: station-sim's own gateway must break none. */
  findings: number;
  /**
   * The judge alone, in this process: CPU µs per command of `ServiceJudge.observe` over commands as
   * the unlock load sends them (median of 5 passes). Machine load hardly moves a CPU time this
   * short, where it moves the end-to-end figures by tens of per cent on a shared machine.
   */
  observeUs: number;
  /** observeUs ÷ the judge-off CPU per unlock: the judge's share, in the same run. */
  observeShare: number;
  failures: string[];
}

/** At most 10 % more server CPU per unlock with the judge on (issue 19). */
export const JUDGE_CPU_TARGET = 1.1;

export async function runJudge(options: JudgeOptions): Promise<JudgeResult> {
  const shape = { broker: 'embedded' as const, stations: options.stations, locks: options.locks, verbose: options.verbose ?? false };
  const started: UnlockServers[] = [];
  const result: JudgeResult = {
    aaControl: options.aaControl ?? false,
    connections: options.connections,
    rate: options.rate,
    durationSeconds: options.durationSeconds,
    stations: options.stations,
    locks: options.locks,
    rounds: [],
    onCpuUs: Number.NaN,
    offCpuUs: Number.NaN,
    onRps: Number.NaN,
    offRps: Number.NaN,
    ratio: Number.NaN,
    pooledRatio: Number.NaN,
    findings: Number.NaN,
    observeUs: Number.NaN,
    observeShare: Number.NaN,
    failures: [],
  };
  result.observeUs = measureObserve(options.stations, options.locks, options.rate);
  options.log(`judge: ServiceJudge.observe alone ${result.observeUs} µs per command`);
  try {
    const on = await startUnlockServers(shape);
    started.push(on);
    const off = await startUnlockServers(options.aaControl ? shape : { ...shape, judge: { enabled: false } });
    started.push(off);
    const sides = { on: { servers: on, token: await login(on.apiUrl) }, off: { servers: off, token: await login(off.apiUrl) } };
    let offset = Math.floor(Math.random() * options.stations * options.locks);
    const load = (side: 'on' | 'off', durationSeconds: number, rampSeconds: number): Promise<LoadRun> => {
      const { servers, token } = sides[side];
      const config = { url: servers.apiUrl, kind: 'unlock' as const, connections: options.connections, overallRate: options.rate, durationSeconds, rampSeconds, stations: options.stations, locks: options.locks, offset };
      offset += 7919; // a prime step, as in the unlock part
      return runLoad(config, { token, processes: servers.processes, verbose: options.verbose ?? false });
    };
    if (options.warmupSeconds > 0) {
      await load('on', options.warmupSeconds, 0);
      await load('off', options.warmupSeconds, 0);
    }
    for (let round = 1; round <= options.rounds; round += 1) {
      const order: ('on' | 'off')[] = round % 2 === 1 ? ['on', 'off'] : ['off', 'on'];
      const measured: Partial<Record<'on' | 'off', JudgeMeasurement>> = {};
      for (const side of order) measured[side] = toMeasurement(await load(side, options.durationSeconds, options.rampSeconds));
      const figures: JudgeRound = { on: measured.on!, off: measured.off!, first: order[0]! };
      result.rounds.push(figures);
      options.log(
        `judge round ${round}/${options.rounds} (${figures.first} first): on ${figures.on.cpuUs} µs/unlock at ${figures.on.rps} req/s, ` +
          `off ${figures.off.cpuUs} µs/unlock at ${figures.off.rps} req/s, ratio ${round3(figures.on.cpuUs / figures.off.cpuUs)}, ` +
          `errors ${figures.on.errors}/${figures.off.errors}, other load ${figures.on.otherCpu}/${figures.off.otherCpu}`,
      );
    }
    result.findings = await judgeFindings(on.apiUrl);
  } catch (error) {
    const message = `judge: ${error instanceof Error ? error.message : String(error)}`;
    result.failures.push(message);
    options.log(`${message} (FAILED)`);
  } finally {
    for (const servers of started.reverse()) await servers.stop();
  }
  summarise(result);
  return result;
}

export function toMeasurement(load: LoadRun): JudgeMeasurement {
  return {
    rps: round(load.rps, 0),
    cpuUs: cpuMicrosPerRequest(load),
    errors: load.non2xx + load.errors + load.bodyFailures,
    otherCpu: load.cpu.others ?? Number.NaN,
  };
}

/** The medians and ratios of the rounds measured so far. */
export function summarise(result: JudgeResult): void {
  const rounds = result.rounds;
  if (rounds.length === 0) return;
  result.onCpuUs = median(rounds.map((r) => r.on.cpuUs));
  result.offCpuUs = median(rounds.map((r) => r.off.cpuUs));
  result.onRps = median(rounds.map((r) => r.on.rps));
  result.offRps = median(rounds.map((r) => r.off.rps));
  result.ratio = round3(result.onCpuUs / result.offCpuUs);
  // CPU-seconds per unlock over every round: Σ(cpuUs × rps) ÷ Σ rps, each load being equally long.
  const pooled = (side: 'on' | 'off'): number => {
    const unlocks = rounds.reduce((sum, r) => sum + r[side].rps, 0);
    return rounds.reduce((sum, r) => sum + r[side].cpuUs * r[side].rps, 0) / unlocks;
  };
  result.pooledRatio = round3(pooled('on') / pooled('off'));
  result.observeShare = round(result.observeUs / result.offCpuUs, 4);
}

/** Commands judged per pass of `measureObserve`. */
const OBSERVE_COMMANDS = 100_000;

/**
 * CPU µs per command of the judge alone: the commands the unlock load sends (every lock in turn,
 * `rate` a second, fresh ids and `sentAt`, the station online), built beforehand, judged by a fresh
 * judge per pass after a warm-up pass. Median of 5 passes.
 */
export function measureObserve(stations: number, locks: number, rate: number, count = OBSERVE_COMMANDS): number {
  const start = Date.now();
  const width = String(stations).length;
  const commands: ReceivedCommand[] = [];
  const stationLocks = Array.from({ length: locks }, (_, index) => ({ lockId: String(index + 1) }));
  for (let i = 0; i < count; i += 1) {
    const now = start + Math.floor((i * 1000) / rate);
    const command = { commandId: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, sentAt: new Date(now - 2).toISOString() };
    commands.push({
      token: `U-${String((i % stations) + 1).padStart(width, '0')}`,
      lockId: String((Math.floor(i / stations) % locks) + 1),
      qos: 1,
      retain: false,
      payload: Buffer.from(JSON.stringify(command)),
      command,
      now,
      online: true,
      onlineSince: start - 60_000,
      locks: stationLocks,
      commandTtlMs: 30_000,
    });
  }
  let findings = 0;
  const pass = (): number => {
    const judge = new ServiceJudge({ settings: {}, onFinding: () => void (findings += 1) });
    const before = process.cpuUsage();
    for (const command of commands) judge.observe(command);
    const used = process.cpuUsage(before);
    return (used.user + used.system) / commands.length;
  };
  pass();
  const passes = Array.from({ length: 5 }, pass);
  if (findings > 0) throw new Error(`the judge found ${findings} things wrong with the bench's own commands`);
  return round(median(passes), 2);
}

/** How many findings `GET /sim/v1/judge` counts (the bench fixtures set no control token). */
async function judgeFindings(apiUrl: string): Promise<number> {
  const response = await fetch(`${apiUrl}/sim/v1/judge`);
  if (!response.ok) throw new Error(`GET /sim/v1/judge: HTTP ${response.status}`);
  const { summary } = (await response.json()) as { summary: Record<string, number> };
  return Object.values(summary).reduce((sum, count) => sum + count, 0);
}

function round3(value: number): number {
  return round(value, 3);
}
