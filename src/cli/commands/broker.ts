import type { CommandModule } from 'yargs';
import { startEmbeddedBroker } from '../../broker/embedded-broker.js';
import { embeddedBrokerSettings } from '../../broker/broker-settings.js';
import { resolveFixture } from '../../simulator/start-simulator.js';
import { printReady, notice, type CliIo } from '../output.js';
import { runUntilSignal } from '../run-until-signal.js';
import { brokerListeners } from '../broker-notices.js';
import { reportRefusals } from '../broker-refusal-lines.js';
import { DEFAULT_MQTT_PORT, brokerSecurityOptions, checkPort, withBrokerSecurity, withFixture, withHost, withJson, withMqttPort } from '../options.js';

export function brokerCommand(io: CliIo): CommandModule {
  return {
    command: 'broker',
    describe: 'Run only the embedded MQTT broker (aedes)',
    builder: (yargs) => withBrokerSecurity(withFixture(withMqttPort(withHost(withJson(yargs))))),
    handler: async (argv) => {
      const mqttPort = argv['mqtt-port'] as number | undefined;
      checkPort('mqtt-port', mqttPort);
      const flags = brokerSecurityOptions(argv);
      const host = argv.host as string;
      // The fixture says who may connect and to which topics (docs/mqtt-security.md).
      const fixture = await resolveFixture(argv.fixture as string | undefined);
      const { settings, warning } = embeddedBrokerSettings(fixture, {
        host,
        ...(flags.brokerAuth === undefined ? {} : { auth: flags.brokerAuth }),
        ...(flags.insecureBroker === undefined ? {} : { insecure: flags.insecureBroker }),
        ...(flags.brokerTlsPort === undefined ? {} : { tlsPort: flags.brokerTlsPort }),
        ...(flags.brokerWsPort === undefined ? {} : { wsPort: flags.brokerWsPort }),
      });
      if (warning) notice(io, warning);
      const broker = await startEmbeddedBroker({
        port: mqttPort ?? DEFAULT_MQTT_PORT,
        host,
        fallbackToFreePort: mqttPort === undefined,
        ...settings,
      });
      if (broker.fellBack) notice(io, `MQTT port ${DEFAULT_MQTT_PORT} is taken (a local Mosquitto?); using ${broker.port} instead`);
      const listeners = brokerListeners(broker);
      printReady(io, argv.json as boolean, `station-sim broker: MQTT ${broker.url}${listeners.text} · Ctrl-C to stop`, { mqttUrl: broker.url, ...listeners.json });
      // Alone, the broker has no health route or event stream: its refusals go to stderr.
      const stopReporting = reportRefusals(broker, (line) => notice(io, line));
      await runUntilSignal(io, async () => {
        stopReporting();
        await broker.stop();
      });
    },
  };
}
