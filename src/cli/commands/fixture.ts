import type { CommandModule } from 'yargs';
import { loadFixture } from '../../fixture/load-fixture.js';
import type { CliIo } from '../output.js';

export function fixtureCommand(io: CliIo): CommandModule {
  return {
    command: 'fixture <action>',
    describe: 'Work with fixture files',
    builder: (yargs) =>
      yargs.command({
        command: 'validate <file>',
        describe: 'Check a fixture and name every problem with its JSON path',
        builder: (y) => y.positional('file', { type: 'string', demandOption: true, describe: 'Fixture file' }),
        handler: async (argv) => {
          const fixture = await loadFixture(argv.file as string);
          const accounts = fixture.accounts.length;
          io.stdout.write(`${argv.file as string}: valid (${fixture.stations.length} stations, ${accounts} account${accounts === 1 ? '' : 's'})\n`);
        },
      }).demandCommand(1, 'name an action: validate'),
    handler: () => undefined,
  };
}
