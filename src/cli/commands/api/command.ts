import type { CommandModule } from 'yargs';
import type { CliIo } from '../../output.js';
import { API_OPTIONS, type ApiFlags } from './options.js';

export function apiCommand(io: CliIo): CommandModule<object, ApiFlags> {
  return {
    command: 'api',
    describe: 'Run only the /v1 API and the /sim/v1 control plane, against stations on any MQTT broker',
    builder: (yargs) => yargs.options(API_OPTIONS),
    handler: async (argv: ApiFlags) => {
      const { runApi } = await import('./handler.js');
      await runApi(io, argv);
    },
  };
}
