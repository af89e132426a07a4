import type { CommandModule } from 'yargs';
import { startEmbeddedBroker } from '../../broker/embedded-broker.js';
import { printReady, notice, type CliIo } from '../output.js';
import { runUntilSignal } from '../run-until-signal.js';
import { DEFAULT_MQTT_PORT, checkPort, withHost, withJson, withMqttPort } from '../options.js';

export function brokerCommand(io: CliIo): CommandModule {
  return {
    command: 'broker',
    describe: 'Run only the embedded MQTT broker (aedes)',
    builder: (yargs) => withMqttPort(withHost(withJson(yargs))),
    handler: async (argv) => {
      const mqttPort = argv['mqtt-port'] as number | undefined;
      checkPort('mqtt-port', mqttPort);
      const broker = await startEmbeddedBroker({
        port: mqttPort ?? DEFAULT_MQTT_PORT,
        host: argv.host as string,
        fallbackToFreePort: mqttPort === undefined,
      });
      if (broker.fellBack) notice(io, `MQTT port ${DEFAULT_MQTT_PORT} is taken (a local Mosquitto?); using ${broker.port} instead`);
      printReady(io, argv.json as boolean, `station-sim broker: MQTT ${broker.url} · Ctrl-C to stop`, { mqttUrl: broker.url });
      await runUntilSignal(io, () => broker.stop());
    },
  };
}
