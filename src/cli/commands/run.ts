/**
 * `station-sim run -- <command...>`: the simulator around a test suite. Starts everything on free
 * ports, waits until every station is up, runs the command with the addresses in its environment,
 * forwards signals, stops everything when the command ends and exits with the command's code.
 * Without a command (`--ready-file F`), it runs in the background until a signal stops it.
 */
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import type { CommandModule } from 'yargs';
import { startSimulator, type StartedSimulator } from '../../simulator/start-simulator.js';
import { notice, UsageError, type CliIo } from '../output.js';
import { checkReportPath, judgeOutletsOf, noticeStrictFailure, stopJudged } from '../judge-notice.js';
import { findingCount, type JudgeVerdict } from '../../judge/verdict.js';
import { ReadyFile } from '../ready-file.js';
import { STOP_SIGNALS, runUntilSignal, stopCause } from '../run-until-signal.js';
import { httpOptions, seedOf, timeOptions, withFixture, withHttp, withJudgeMode, withJudgeReport, withSeed, withTime } from '../options.js';
import { redactUrl } from '../../shared/redact-url.js';
import { SIMULATOR_ENV } from '../../simulator/simulator-env.js';

/** The environment variables a wrapped command gets. */
export const RUN_ENV = SIMULATOR_ENV;

/**
 * `run`'s exit codes. 125 for the simulator's own failure follows `docker run` and `git bisect
 * run`: a test suite rarely exits with it, so CI can tell "no simulator" from "tests failed".
 */
export const RUN_EXIT = {
  /** `--judge strict`: the command passed (0), but the judge found a rule broken. */
  judgeFindings: 3,
  simulatorFailed: 125,
  commandNotRunnable: 127,
} as const;

export interface CommandResult {
  /** The exit code `station-sim` should end with. */
  code: number;
  /** The exit code when the command fails with an error other than a usage error. @default 1 */
  failureCode?: number;
}

const ENV_HELP: [string, string][] = [
  [RUN_ENV.apiUrl, 'the /v1 API, e.g. http://127.0.0.1:41234'],
  [RUN_ENV.mqttUrl, 'the embedded MQTT broker, e.g. mqtt://127.0.0.1:41235'],
  [RUN_ENV.controlUrl, 'the /sim/v1 control plane, e.g. http://127.0.0.1:41234/sim/v1'],
  [RUN_ENV.controlToken, "the control plane's token, only when it requires one"],
];

const EPILOG = `The command gets these environment variables:
${ENV_HELP.map(([name, text]) => `  ${name.padEnd(27)}${text}`).join('\n')}

Exit codes:
  the command's own   it ran and exited
  128 + N             it was killed by signal N (143 for SIGTERM)
  127                 it could not be run (not found, not executable)
  125                 the simulator could not start or failed (bad fixture, port in use,
                      the --judge-report file not writable...)
  3                   --judge strict: the command exited 0 but a rule of the judge was broken
                      (the findings are listed on stderr); any other code of the command is kept
  2                   usage error (unknown option, bad value, no command)
  0                   with --ready-file and no command: stopped by SIGTERM, SIGINT or SIGHUP
                      (3 with --judge strict and findings)

In the background: station-sim run --ready-file sim.json & then read sim.json (it exists only
while the simulator is ready), and stop it with kill (SIGTERM) of its "pid" (the simulator's own
process: started through npx, kill of npx's pid stops it too, but npx exits with 143).`;

export function runCommand(io: CliIo, result: CommandResult): CommandModule {
  return {
    command: 'run [command..]',
    describe: 'Run a command (a test suite) against a fresh simulator on free ports: station-sim run --fixture F -- npm test',
    builder: (yargs) =>
      withJudgeReport(withJudgeMode(withTime(withHttp(withSeed(withFixture(yargs)), 'free-port'))))
        .option('ready-file', {
          type: 'string',
          describe: 'Write the addresses as JSON to this file once ready (removed at start and at stop)',
        })
        .positional('command', { type: 'string', array: true, describe: 'The command and its arguments, after --' })
        .epilog(EPILOG),
    handler: async (argv) => {
      const words = [...((argv.command as string[] | undefined) ?? []), ...((argv['--'] as string[] | undefined) ?? [])].map(String);
      const readyFile = typeof argv['ready-file'] === 'string' ? new ReadyFile(argv['ready-file']) : undefined;
      if (words.length === 0 && !readyFile) throw new UsageError('name a command to run after --, or give --ready-file to run in the background');
      if (readyFile?.path === '') throw new UsageError('--ready-file needs a file name');
      const http = httpOptions({ ...argv, 'http-port': argv['http-port'] ?? 0 });
      const options = { ...http, ...timeOptions(argv), fixture: argv.fixture as string | undefined, seed: seedOf(argv), mqttPort: 0 };
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
    },
  };
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
