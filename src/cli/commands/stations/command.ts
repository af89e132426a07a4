import type { CommandModule } from 'yargs';
import type { CliIo } from '../../output.js';
import { STATIONS_OPTIONS, type StationsFlags } from './options.js';

export function stationsCommand(io: CliIo): CommandModule<object, StationsFlags> {
  return {
    command: 'stations',
    describe: 'Run only the virtual fleet, against any MQTT broker',
    builder: (yargs) => yargs.options(STATIONS_OPTIONS),
    handler: async (argv: StationsFlags) => {
      const { runStations } = await import('./handler.js');
      await runStations(io, argv);
    },
  };
}
