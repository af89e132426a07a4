/**
 * `station-sim contract asyncapi`: the AsyncAPI 3.0 document of the station MQTT contract for a
 * fixture's stations (src/mqtt/asyncapi.ts), the same document `GET /sim/v1/asyncapi.json` serves.
 */
import type { CommandModule } from 'yargs';
import type { CliIo } from '../../output.js';
import { ASYNCAPI_OPTIONS, type AsyncApiFlags } from './options.js';

function asyncApiCommand(io: CliIo): CommandModule<object, AsyncApiFlags> {
  return {
    command: 'asyncapi',
    describe: "The AsyncAPI 3.0 document of the station MQTT contract, with the fixture's topic templates",
    builder: (yargs) => yargs.options(ASYNCAPI_OPTIONS),
    handler: async (argv: AsyncApiFlags) => {
      const { runAsyncApi } = await import('./handler.js');
      await runAsyncApi(io, argv);
    },
  };
}

export function contractCommand(io: CliIo): CommandModule {
  return {
    command: 'contract <document>',
    describe: 'Print a machine-readable contract document',
    builder: (yargs) => yargs.command(asyncApiCommand(io)).demandCommand(1, 'name a document: asyncapi'),
    handler: () => undefined,
  };
}
