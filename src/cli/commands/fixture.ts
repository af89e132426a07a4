import type { CommandModule } from 'yargs';
import type { CliIo } from '../output.js';
import type { ValidateFlags } from './fixture-handler.js';

function validateCommand(io: CliIo): CommandModule<object, ValidateFlags> {
  return {
    command: 'validate <file>',
    describe: 'Check a fixture and name every problem with its JSON path',
    builder: (yargs) =>
      yargs.positional('file', { type: 'string', demandOption: true, describe: 'Fixture file, or the name of a shipped fixture (demo, ci) as up and run take it; a file of yours named ci is ./ci' }),
    handler: async (argv: ValidateFlags) => {
      const { runValidate } = await import('./fixture-handler.js');
      await runValidate(io, argv);
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
