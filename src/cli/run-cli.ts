/**
 * The `station-sim` command line (yargs). Each command lives in `commands/`; `runCli` only wires
 * them and turns failures into one line on stderr and a non-zero exit code.
 */
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { upCommand } from './commands/up.js';
import { brokerCommand } from './commands/broker.js';
import { stationsCommand } from './commands/stations.js';
import { fixtureCommand } from './commands/fixture.js';
import { describeFailure, type CliIo } from './output.js';

export async function runCli(args: string[], io: CliIo = { stdout: process.stdout, stderr: process.stderr }): Promise<number> {
  let usageError: string | undefined;
  const parser = yargs(args)
    .scriptName('station-sim')
    .command(upCommand(io))
    .command(brokerCommand(io))
    .command(stationsCommand(io))
    .command(fixtureCommand(io))
    .demandCommand(1, 'name a command (see --help)')
    .strict()
    .help()
    .alias('h', 'help')
    .version()
    .wrap(Math.min(100, process.stdout.columns ?? 100))
    .fail((message, error) => {
      if (error) throw error;
      usageError = message;
    });
  try {
    await parser.parseAsync();
  } catch (error) {
    io.stderr.write(`station-sim: ${describeFailure(error)}\n`);
    return 1;
  }
  if (usageError !== undefined) {
    io.stderr.write(`station-sim: ${usageError}\nRun station-sim --help for usage.\n`);
    return 1;
  }
  return 0;
}
