import type { CommandModule } from 'yargs';
import type { CliIo } from '../../output.js';
import { BROKER_COMMAND_OPTIONS, type BrokerFlags } from './options.js';

export function brokerCommand(io: CliIo): CommandModule<object, BrokerFlags> {
  return {
    command: 'broker',
    describe: 'Run only the embedded MQTT broker (aedes)',
    builder: (yargs) => yargs.options(BROKER_COMMAND_OPTIONS),
    handler: async (argv: BrokerFlags) => {
      const { runBroker } = await import('./handler.js');
      await runBroker(io, argv);
    },
  };
}
