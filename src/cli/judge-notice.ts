/**
 * The judge's outlets at stop (docs/judge.md, "Where findings show"): the line on stderr
 * (`station-sim: judge: no findings`, or the count per rule), the JUnit report of `--judge-report`,
 * and the findings `run --judge strict` fails on. All read one verdict: the control plane's log,
 * which every fleet process on the broker reports to, or, with no control plane (`stations`), the
 * log of this process's fleet.
 */
import { access, stat } from 'node:fs/promises';
import { constants } from 'node:fs';
import { dirname } from 'node:path';
import type { StartedSimulator } from '../simulator/start-simulator.js';
import { judgeLine } from '../judge/judge-log.js';
import { enabledRules, findingCount, formatFinding, ruleGuidance, type JudgeVerdict } from '../judge/verdict.js';
import type { JudgeSettings } from '../fixture/judge-schema.js';
import { printable } from '../transcript/transcript-format.js';
import { SimError } from '../errors.js';
import { openProblem } from '../shared/open-problem.js';
import { notice, UsageError, type CliIo } from './output.js';
import type { JudgeMode, JudgeOutletFlags } from './options.js';

export interface JudgeOutlets {
  mode: JudgeMode;
  /** `--judge-report FILE`. */
  reportPath?: string;
}

/** The judge options of a parsed command line, checked at the edge. */
export function judgeOutletsOf(argv: JudgeOutletFlags): JudgeOutlets {
  const mode = argv.judge ?? 'report';
  const reportPath = argv['judge-report'];
  if (reportPath === '') throw new UsageError('--judge-report needs a file name, e.g. --judge-report judge.xml');
  if (reportPath !== undefined && mode === 'off') throw new UsageError('--judge-report and --judge off do not go together: off reports nothing');
  return { mode, ...(reportPath === undefined ? {} : { reportPath }) };
}

/**
 * Fails before anything starts when the report could not be written at stop: its directory is
 * missing or not writable, or the path is a directory. (At stop it is checked again, by writing.)
 */
export async function checkReportPath(outlets: JudgeOutlets): Promise<void> {
  const path = outlets.reportPath;
  if (path === undefined) return;
  try {
    await access(dirname(path), constants.W_OK);
    const existing = await stat(path).catch(() => undefined);
    if (existing?.isDirectory()) throw Object.assign(new Error('EISDIR'), { code: 'EISDIR' });
  } catch (error) {
    throw new SimError('BAD_REQUEST', `cannot write the judge report ${path}: ${openProblem(error)}`);
  }
}

/** How long the stop waits for this process's findings to reach the control plane. */
const SETTLE_MS = 2000;
const SETTLE_STEP_MS = 10;

/**
 * Waits until the control plane has heard every finding of this process's fleet (they travel over
 * MQTT, at QoS 1), at most about two seconds: a backend's last command, judged just before the
 * stop, must be in the verdict. Call it while the simulator still runs.
 */
export async function settleJudge(sim: Pick<StartedSimulator, 'fleet' | 'http' | 'broker'>): Promise<void> {
  // A command a backend published retained while its station was connected reached the station
  // live, with the flag cleared: a fresh subscription shows what the broker still holds.
  // At most SETTLE_MS: a broker that went silent during the stop answers no SUBSCRIBE.
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([sim.fleet.judgeRetainedCommands().catch(() => undefined), new Promise((resolve) => (timer = setTimeout(resolve, SETTLE_MS)))]);
  clearTimeout(timer);
  // What the embedded broker has taken in (a backend's last publication before it exited) reaches
  // the stations, and is judged, before they stop: a few round trips through its thread.
  for (let round = 0; round < 3; round += 1) {
    await sim.broker?.sync();
    await new Promise((resolve) => setImmediate(resolve));
  }
  const control = sim.http?.control.judge;
  if (!control) return;
  const own = (): number => findingCount({ summary: sim.fleet.judge.summary() });
  for (let waited = 0; waited < SETTLE_MS && findingCount({ summary: control.summary() }) < own(); waited += SETTLE_STEP_MS) {
    await new Promise((resolve) => setTimeout(resolve, SETTLE_STEP_MS));
  }
}

/** What the judge found: the control plane's log, or with none this process's fleet's. */
export function runVerdict(sim: Pick<StartedSimulator, 'fleet' | 'http'>): JudgeVerdict {
  const log = sim.http?.control.judge ?? sim.fleet.judge;
  return { summary: log.summary(), findings: log.findings() };
}

/**
 * The outlets at stop: the report (when asked for), then the line (unless `off`). Returns the
 * verdict. A report that cannot be written is a SimError naming the file, after the line.
 */
export async function finishJudge(
  io: CliIo,
  verdict: JudgeVerdict,
  outlets: JudgeOutlets,
  { settings, ...judged }: { settings: JudgeSettings; clientJudged?: boolean; brokerJudged?: boolean },
): Promise<JudgeVerdict> {
  let failure: SimError | undefined;
  if (outlets.reportPath !== undefined) {
    try {
      // The XML writer is loaded for --judge-report only: most runs ask for none.
      const { writeJunitReport } = await import('../judge/junit-report.js');
      await writeJunitReport(outlets.reportPath, { verdict, rules: enabledRules(settings, verdict, judged), timestamp: new Date().toISOString() });
    } catch (error) {
      failure = new SimError('BAD_REQUEST', `cannot write the judge report ${outlets.reportPath}: ${openProblem(error)}`);
    }
  }
  if (outlets.mode !== 'off') notice(io, judgeLine(verdict.summary));
  if (failure) throw failure;
  return verdict;
}

/** Findings listed under the strict failure line, at most. */
const MAX_LISTED = 20;

/** The findings, one per line under a heading, for `run --judge strict` when it fails the run. */
export function noticeStrictFailure(io: CliIo, verdict: JudgeVerdict, code: number): void {
  const total = findingCount(verdict);
  const rules = Object.keys(verdict.summary).length;
  notice(io, `judge: strict: the command passed but ${rules} rule${rules === 1 ? ' was' : 's were'} broken (${total} finding${total === 1 ? '' : 's'}); exiting with ${code}`);
  const listed = verdict.findings.slice(-MAX_LISTED);
  for (const finding of listed) io.stderr.write(`  ${formatFinding(finding)}\n`);
  // What each broken rule means and what to change, once per rule.
  for (const id of Object.keys(verdict.summary)) {
    io.stderr.write(`  ${id}:\n`);
    for (const line of ruleGuidance(id)) io.stderr.write(`    ${printable(line)}\n`);
  }
  if (total > listed.length) io.stderr.write(`  … ${total - listed.length} more (GET /sim/v1/judge, --judge-report, or the transcript's judge entries)\n`);
}

/** Stops the simulator, then the judge's outlets (`up`, `stations`): the report is written however the stop goes. */
export async function stopJudged(io: CliIo, sim: Pick<StartedSimulator, 'fleet' | 'http' | 'broker' | 'fixture' | 'stop'>, outlets: JudgeOutlets): Promise<JudgeVerdict> {
  let stopFailure: { error: unknown } | undefined;
  try {
    await settleJudge(sim);
    await sim.stop();
  } catch (error) {
    stopFailure = { error };
  }
  // Without the `/v1` API (`stations` alone) no request was judged: the client rules are skipped, not
  // passed; so are the embedded broker's rules with an external broker.
  const judged = { settings: sim.fixture.judge, clientJudged: sim.http !== undefined, brokerJudged: sim.broker !== undefined };
  const verdict = await finishJudge(io, runVerdict(sim), outlets, judged);
  if (stopFailure) throw stopFailure.error;
  return verdict;
}
