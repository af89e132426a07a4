/**
 * The `station-sim` command line (yargs). Each command has a folder of its own in `commands/`;
 * `runCli` only wires them and turns failures into one line on stderr and a non-zero exit code:
 * 2 for a usage error (every command, as getopt-style tools do), 1 for any other failure, except
 * `run`, whose own codes (125 for the simulator's failure) leave 1 to the command it wraps.
 *
 * Every start of the CLI reads every command's declaration (`commands/up/command.ts`: its name,
 * help and options, from `up/options.ts`), so these stay light; what a command does
 * (`up/handler.ts`) is imported by its handler when it runs. `--version`, `--help` or
 * `fixture validate` never load fastify, the broker or the dashboard.
 */
import { readFileSync } from 'node:fs';
import yargs from 'yargs';
import { upCommand } from './commands/up/command.js';
import { brokerCommand } from './commands/broker/command.js';
import { stationsCommand } from './commands/stations/command.js';
import { fixtureCommand } from './commands/fixture/command.js';
import { apiCommand } from './commands/api/command.js';
import { runCommand } from './commands/run/command.js';
import { transcriptCommand } from './commands/transcript/command.js';
import { dashboardCommand } from './commands/dashboard/command.js';
import { certsCommand } from './commands/certs/command.js';
import { contractCommand } from './commands/contract/command.js';
import { demoCommand } from './commands/demo/command.js';
import { UsageError, describeFailure, type CliIo, type CommandResult } from './output.js';

/** The exit code of a command line that yargs or a command rejected. */
export const USAGE_EXIT_CODE = 2;

export async function runCli(args: string[], io: CliIo = { stdout: process.stdout, stderr: process.stderr }): Promise<number> {
  const result: CommandResult = { code: 0 };
  const parser = yargs(args)
    // Everything after `--` belongs to the command `run` wraps, not to us.
    .parserConfiguration({ 'populate--': true })
    .scriptName('station-sim')
    .command(upCommand(io))
    .command(brokerCommand(io))
    .command(stationsCommand(io))
    .command(apiCommand(io))
    .command(runCommand(io, result))
    .command(transcriptCommand(io, result))
    .command(dashboardCommand(io))
    .command(fixtureCommand(io))
    .command(certsCommand(io))
    .command(contractCommand(io))
    .command(demoCommand(io, result))
    .demandCommand(1, 'name a command (see --help)')
    .strict()
    .help()
    .alias('h', 'help')
    .version(ownVersion())
    .wrap(Math.min(100, process.stdout.columns ?? 100))
    .fail((message, error) => {
      // Throwing (rather than recording) keeps yargs from running the command after a usage error.
      // yargs wraps what an option's `coerce` throws in a YError: that is a usage error too.
      if (error && error.name !== 'YError') throw error;
      throw new UsageError(message ?? error?.message ?? 'invalid command line');
    });
  try {
    await parser.parseAsync();
  } catch (error) {
    const hint = error instanceof UsageError ? '\nRun station-sim --help for usage.' : '';
    io.stderr.write(`station-sim: ${describeFailure(error)}${hint}\n`);
    return error instanceof UsageError ? USAGE_EXIT_CODE : (result.failureCode ?? 1);
  }
  return result.code;
}

/**
 * station-sim's version, from its own package.json: two levels up from this module both in `src/`
 * and in `dist/`. Told nothing, yargs takes the package.json above wherever yargs is installed,
 * which in a project that installs station-sim is that project's.
 */
function ownVersion(): string {
  const manifest: unknown = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
  if (typeof manifest === 'object' && manifest !== null && 'version' in manifest && typeof manifest.version === 'string') return manifest.version;
  throw new Error("station-sim's package.json has no version");
}
