import type { CommandModule } from 'yargs';
import type { CliIo } from '../../output.js';
import { UP_OPTIONS, type UpFlags } from './options.js';

export function upCommand(io: CliIo): CommandModule<object, UpFlags> {
  return {
    command: 'up',
    describe: 'Run everything: embedded MQTT broker, the virtual fleet, the /v1 API and the /sim/v1 control plane',
    builder: (yargs) => yargs.options(UP_OPTIONS),
    handler: async (argv: UpFlags) => {
      const { runUp } = await import('./handler.js');
      await runUp(io, argv);
    },
  };
}
