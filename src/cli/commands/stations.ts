import type { CommandModule } from 'yargs';
import { startSimulator } from '../../simulator/start-simulator.js';
import type { StartedFleet } from '../../fleet/start-fleet.js';
import { printReady, type CliIo } from '../output.js';
import { runUntilSignal } from '../run-until-signal.js';
import { withBroker, withFixture, withJson, withSeed } from '../options.js';

export function stationsCommand(io: CliIo): CommandModule {
  return {
    command: 'stations',
    describe: 'Run only the virtual fleet, against any MQTT broker',
    builder: (yargs) => withBroker(withJson(withSeed(withFixture(yargs))), true),
    handler: async (argv) => {
      const sim = await startSimulator({
        fixture: argv.fixture as string | undefined,
        seed: argv.seed as number | undefined,
        broker: argv.broker as string,
        http: false,
      });
      const summary = fleetSummary(sim.fleet);
      printReady(io, argv.json as boolean, `station-sim stations: ${summary.text} on ${sim.mqttUrl} · seed ${sim.seed} · Ctrl-C to stop`, {
        mqttUrl: sim.mqttUrl,
        stations: summary.total,
        online: summary.online,
        seed: sim.seed,
      });
      await runUntilSignal(io, () => sim.stop());
    },
  };
}

export function fleetSummary(fleet: StartedFleet): { total: number; online: number; text: string } {
  const total = fleet.stations.size;
  const online = fleet.onlineCount();
  const offline = total - online;
  return { total, online, text: `${total} stations (${online} online${offline > 0 ? `, ${offline} offline` : ''})` };
}
