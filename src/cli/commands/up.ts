import type { CommandModule } from 'yargs';
import { startSimulator } from '../../simulator/start-simulator.js';
import { printReady, notice, type CliIo } from '../output.js';
import { runUntilSignal } from '../run-until-signal.js';
import { DEFAULT_MQTT_PORT, checkPort, withBroker, withFixture, withHost, withJson, withMqttPort, withSeed } from '../options.js';
import { fleetSummary } from './stations.js';

export function upCommand(io: CliIo): CommandModule {
  return {
    command: 'up',
    describe: 'Run everything: embedded MQTT broker, the virtual fleet and the /v1 API',
    builder: (yargs) => withBroker(withMqttPort(withHost(withJson(withSeed(withFixture(yargs))))), false),
    handler: async (argv) => {
      const mqttPort = argv['mqtt-port'] as number | undefined;
      checkPort('mqtt-port', mqttPort);
      const sim = await startSimulator({
        fixture: argv.fixture as string | undefined,
        seed: argv.seed as number | undefined,
        broker: argv.broker as string | undefined,
        host: argv.host as string,
        mqttPort: mqttPort ?? DEFAULT_MQTT_PORT,
        fallbackToFreePort: mqttPort === undefined,
      });
      if (sim.broker?.fellBack) {
        notice(io, `MQTT port ${DEFAULT_MQTT_PORT} is taken (a local Mosquitto?); the embedded broker uses ${sim.broker.port} instead`);
      }
      const summary = fleetSummary(sim.fleet);
      printReady(io, argv.json as boolean, `station-sim up: MQTT ${sim.mqttUrl} · ${summary.text} · seed ${sim.seed} · Ctrl-C to stop`, {
        mqttUrl: sim.mqttUrl,
        stations: summary.total,
        online: summary.online,
        seed: sim.seed,
      });
      await runUntilSignal(io, () => sim.stop());
    },
  };
}
