import type { CommandModule } from 'yargs';
import { resolveFixture } from '../../simulator/start-simulator.js';
import type { CliIo } from '../output.js';

/** The flags `fixture validate`'s handler sees. */
interface ValidateFlags {
  readonly file: string;
}

function validateCommand(io: CliIo): CommandModule<object, ValidateFlags> {
  return {
    command: 'validate <file>',
    describe: 'Check a fixture and name every problem with its JSON path',
    builder: (yargs) =>
      yargs.positional('file', { type: 'string', demandOption: true, describe: 'Fixture file, or the name of a shipped fixture (demo, ci) as up and run take it; a file of yours named ci is ./ci' }),
    handler: async ({ file }: ValidateFlags) => {
      // The names `up`, `run` and `transcript judge --fixture` take, resolved the same way.
      const fixture = await resolveFixture(file);
      const count = (n: number, what: string): string => `${n} ${what}${n === 1 ? '' : 's'}`;
      io.stdout.write(`${file}: valid (${count(fixture.stations.length, 'station')}, ${count(fixture.accounts.length, 'account')})\n`);
    },
  };
}

export function fixtureCommand(io: CliIo): CommandModule {
  return {
    command: 'fixture <action>',
    describe: 'Work with fixture files',
    builder: (yargs) => yargs.command(validateCommand(io)).demandCommand(1, 'name an action: validate'),
    handler: () => undefined,
  };
}
