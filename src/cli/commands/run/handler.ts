/** What `run` does: the simulator on free ports around a command, or in the background with --ready-file. */
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { startSimulator, type StartedSimulator } from '../../../simulator/start-simulator.js';
import { notice, UsageError, type CliIo, type CommandResult } from '../../output.js';
import { checkReportPath, judgeOutletsOf, noticeStrictFailure, stopJudged } from '../../judge-notice.js';
import { findingCount, type JudgeVerdict } from '../../../judge/verdict.js';
import { ReadyFile } from '../../ready-file.js';
import { STOP_SIGNALS, runUntilSignal, stopCause } from '../../run-until-signal.js';
import { httpOptions, seedOf, timeOptions } from '../../option-checks.js';
import { redactUrl } from '../../../shared/redact-url.js';
import { RUN_ENV, RUN_EXIT } from './interface.js';
import type { RunFlags } from './options.js';

export async function runWithSimulator(io: CliIo, result: CommandResult, argv: RunFlags): Promise<void> {
  const words = [...(argv.command ?? []), ...(argv['--'] ?? [])];
  const readyFile = argv['ready-file'] === undefined ? undefined : new ReadyFile(argv['ready-file']);
  if (words.length === 0 && !readyFile) throw new UsageError('name a command to run after --, or give --ready-file to run in the background');
  if (readyFile?.path === '') throw new UsageError('--ready-file needs a file name');
  const http = httpOptions({ ...argv, 'http-port': argv['http-port'] ?? 0 });
  const options = { ...http, ...timeOptions(argv), fixture: argv.fixture, seed: seedOf(argv), mqttPort: 0 };
  const judge = judgeOutletsOf(argv);
  // The command line is good: from here on a failure is the simulator's own.
  result.failureCode = RUN_EXIT.simulatorFailed;
  // A signal before the stop handlers are in place (while the simulator starts, or the ready
  // file is written) stops the simulator as soon as it is up; the command never runs. A second
  // one exits at once, as while stopping: a start that hangs must not make `kill` powerless.
  let early: NodeJS.Signals | undefined;
  const onEarly = (signal: NodeJS.Signals): void => {
    if (early) {
      notice(io, `${signal} again, exiting without a clean shutdown`);
      process.exit(128 + constants.signals[signal]);
    }
    early = signal;
    notice(io, `${stopCause(signal)} while starting: stopping once started (again to exit at once)`);
  };
  const stopEarlyWatch = (): void => {
    for (const signal of STOP_SIGNALS) process.off(signal, onEarly);
  };
  for (const signal of STOP_SIGNALS) process.on(signal, onEarly);
  let sim: StartedSimulator;
  try {
    await checkReportPath(judge);
    await readyFile?.clear();
    sim = await startSimulator({ ...options, onNotice: (message) => notice(io, message) });
  } catch (error) {
    stopEarlyWatch();
    throw error;
  }
  let stopped: Promise<void> | undefined;
  let verdict: JudgeVerdict | undefined;
  // The file goes first: once the simulator is going down it is no longer ready. The judge's
  // report is written however the stop goes.
  const stop = (): Promise<void> => (stopped ??= (async () => {
    await readyFile?.remove();
    verdict = await stopJudged(io, sim, judge);
  })());
  try {
    // pid: the simulator's own process, to `kill` when it was started through npx or npm, whose
    // shell does not pass a signal on (README, "run: environment, exit codes, background").
    const addresses = { apiUrl: sim.apiUrl, mqttUrl: sim.mqttUrl, controlUrl: sim.controlUrl, seed: sim.seed, pid: process.pid };
    if (!early) await readyFile?.write(addresses);
    stopEarlyWatch();
    if (early) {
      result.code = 128 + constants.signals[early];
      return;
    }
    io.stderr.write(`${readyLine(sim)}\n`);
    if (words.length === 0) {
      await runUntilSignal(io, stop);
      return;
    }
    result.code = await runWrapped(io, words, {
      [RUN_ENV.apiUrl]: sim.apiUrl!,
      [RUN_ENV.mqttUrl]: sim.mqttUrl,
      [RUN_ENV.controlUrl]: sim.controlUrl!,
      ...(http.controlToken === undefined ? {} : { [RUN_ENV.controlToken]: http.controlToken }),
    });
  } finally {
    stopEarlyWatch();
    await stop();
  }
  if (judge.mode === 'strict' && result.code === 0 && verdict && findingCount(verdict) > 0) {
    result.code = RUN_EXIT.judgeFindings;
    noticeStrictFailure(io, verdict, result.code);
  }
}

/** The line for the CI log once everything is ready: addresses and seed, never a token or password. */
export function readyLine(sim: Pick<StartedSimulator, 'apiUrl' | 'mqttUrl' | 'controlUrl' | 'seed'>): string {
  return `station-sim run: ready · API ${sim.apiUrl} · MQTT ${redactUrl(sim.mqttUrl)} · control ${sim.controlUrl} · seed ${sim.seed}`;
}

/** Runs the command with `env` added, forwarding stop signals; resolves with the code `run` exits with. */
async function runWrapped(io: CliIo, words: string[], env: Record<string, string>): Promise<number> {
  const [file, ...args] = words as [string, ...string[]];
  const child = spawn(file, args, { stdio: 'inherit', env: { ...process.env, ...env } });
  const forward = (signal: NodeJS.Signals): void => {
    child.kill(signal);
  };
  // SIGHUP too: a closed terminal ends the command, and then the simulator, cleanly.
  for (const signal of STOP_SIGNALS) process.on(signal, forward);
  const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>((resolve) => {
    child.once('error', (error) => resolve({ code: null, signal: null, error }));
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  for (const signal of STOP_SIGNALS) process.off(signal, forward);
  if (exit.error) {
    notice(io, `cannot run ${file}: ${exit.error.message}`);
    return RUN_EXIT.commandNotRunnable;
  }
  // A command killed by a signal exits as a shell would report it: 128 + the signal number.
  return exit.code ?? 128 + ((exit.signal && constants.signals[exit.signal]) || 15);
}
