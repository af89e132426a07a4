/**
 * `station-sim run -- <command...>`: the simulator around a test suite. Starts everything on free
 * ports, waits until every station is up, runs the command with the addresses in its environment,
 * forwards signals, stops everything when the command ends and exits with the command's code.
 */
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { writeFile } from 'node:fs/promises';
import type { CommandModule } from 'yargs';
import { startSimulator } from '../../simulator/start-simulator.js';
import { notice, printReady, UsageError, type CliIo } from '../output.js';
import { STOP_SIGNALS, runUntilSignal } from '../run-until-signal.js';
import { httpOptions, seedOf, timeOptions, withFixture, withHttp, withSeed, withTime } from '../options.js';

/** The environment variables a wrapped command gets. */
export const RUN_ENV = {
  apiUrl: 'STATION_SIM_API_URL',
  mqttUrl: 'STATION_SIM_MQTT_URL',
  controlUrl: 'STATION_SIM_CONTROL_URL',
} as const;

export interface CommandResult {
  /** The exit code `station-sim` should end with. */
  code: number;
}

export function runCommand(io: CliIo, result: CommandResult): CommandModule {
  return {
    command: 'run [command..]',
    describe: 'Run a command (a test suite) against a fresh simulator on free ports: station-sim run --fixture F -- npm test',
    builder: (yargs) =>
      withTime(withHttp(withSeed(withFixture(yargs)), 'free-port'))
        .option('ready-file', { type: 'string', describe: 'Write the addresses as JSON to this file once ready' })
        .positional('command', { type: 'string', array: true, describe: 'The command and its arguments, after --' }),
    handler: async (argv) => {
      const words = [...((argv.command as string[] | undefined) ?? []), ...((argv['--'] as string[] | undefined) ?? [])].map(String);
      const readyFile = argv['ready-file'] as string | undefined;
      if (words.length === 0 && !readyFile) throw new UsageError('name a command to run after --, or give --ready-file to run in the background');
      const sim = await startSimulator({
        ...httpOptions({ ...argv, 'http-port': argv['http-port'] ?? 0 }),
        ...timeOptions(argv),
        fixture: argv.fixture as string | undefined,
        seed: seedOf(argv),
        mqttPort: 0,
        onNotice: (message) => notice(io, message),
      });
      const addresses = { apiUrl: sim.apiUrl, mqttUrl: sim.mqttUrl, controlUrl: sim.controlUrl, seed: sim.seed };
      if (readyFile) await writeFile(readyFile, `${JSON.stringify(addresses)}\n`);
      if (words.length === 0) {
        printReady(io, false, `station-sim run: ready (${readyFile}) · API ${sim.apiUrl} · Ctrl-C to stop`, addresses);
        await runUntilSignal(io, () => sim.stop());
        return;
      }
      const [file, ...args] = words as [string, ...string[]];
      const child = spawn(file, args, {
        stdio: 'inherit',
        env: {
          ...process.env,
          [RUN_ENV.apiUrl]: sim.apiUrl,
          [RUN_ENV.mqttUrl]: sim.mqttUrl,
          [RUN_ENV.controlUrl]: sim.controlUrl,
        },
      });
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
      await sim.stop();
      if (exit.error) {
        notice(io, `cannot run ${file}: ${exit.error.message}`);
        result.code = 127;
        return;
      }
      // A command killed by a signal exits as a shell would report it: 128 + the signal number.
      result.code = exit.code ?? 128 + ((exit.signal && constants.signals[exit.signal]) || 15);
    },
  };
}
