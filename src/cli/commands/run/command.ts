/**
 * `station-sim run -- <command...>`: the simulator around a test suite. Starts everything on free
 * ports, waits until every station is up, runs the command with the addresses in its environment,
 * forwards signals, stops everything when the command ends and exits with the command's code.
 * Without a command (`--ready-file F`), it runs in the background until a signal stops it.
 */
import type { CommandModule } from 'yargs';
import type { CliIo, CommandResult } from '../../output.js';
import { RUN_ENV } from './interface.js';
import { RUN_OPTIONS, RUN_POSITIONALS, type RunFlags } from './options.js';

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

export function runCommand(io: CliIo, result: CommandResult): CommandModule<object, RunFlags> {
  return {
    command: 'run [command..]',
    describe: 'Run a command (a test suite) against a fresh simulator on free ports: station-sim run --fixture F -- npm test',
    builder: (yargs) => yargs.options(RUN_OPTIONS).positional('command', RUN_POSITIONALS.command).epilog(EPILOG),
    handler: async (argv: RunFlags) => {
      const { runWithSimulator } = await import('./handler.js');
      await runWithSimulator(io, result, argv);
    },
  };
}
