import type { CommandModule } from 'yargs';
import { startEmbeddedBroker } from '../../broker/embedded-broker.js';
import { embeddedBrokerSettings } from '../../broker/broker-settings.js';
import { resolveFixture } from '../../simulator/start-simulator.js';
import { printReady, notice, type CliIo } from '../output.js';
import { runUntilSignal } from '../run-until-signal.js';
import { brokerListeners } from '../broker-notices.js';
import { reportRefusals } from '../broker-refusal-lines.js';
import {
  BROKER_SECURITY_OPTIONS,
  DEFAULT_MQTT_PORT,
  FIXTURE_OPTIONS,
  HOST_OPTIONS,
  JSON_OPTIONS,
  MQTT_PORT_OPTIONS,
  brokerSecurityOptions,
  checked,
  type FlagsOf,
  type OptionGroup,
} from '../options.js';

/** `broker`'s options, in the order --help lists them. */
const BROKER_COMMAND_OPTIONS = { ...JSON_OPTIONS, ...HOST_OPTIONS, ...MQTT_PORT_OPTIONS, ...FIXTURE_OPTIONS, ...BROKER_SECURITY_OPTIONS } as const satisfies OptionGroup;

/** The flags `broker`'s handler sees. */
export type BrokerFlags = FlagsOf<typeof BROKER_COMMAND_OPTIONS>;

export function brokerCommand(io: CliIo): CommandModule<object, BrokerFlags> {
  return {
    command: 'broker',
    describe: 'Run only the embedded MQTT broker (aedes)',
    builder: (yargs) => yargs.options(BROKER_COMMAND_OPTIONS),
    handler: async (argv: BrokerFlags) => {
      const mqttPort = checked('mqtt-port', 'mqttPort', argv['mqtt-port']);
      const flags = brokerSecurityOptions(argv);
      const host = argv.host;
      // The fixture says who may connect and to which topics (docs/mqtt-security.md).
      const fixture = await resolveFixture(argv.fixture);
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
      // Alone, the broker has no health route or event stream: its refusals go to stderr.
      const stopReporting = reportRefusals(broker, (line) => notice(io, line));
      // Signals are ours before the ready line goes out: a supervisor may send SIGTERM the moment it reads it.
      const stopped = runUntilSignal(io, async () => {
        stopReporting();
        await broker.stop();
      });
      printReady(io, argv.json, `station-sim broker: MQTT ${broker.url}${listeners.text} · Ctrl-C to stop`, { mqttUrl: broker.url, ...listeners.json });
      await stopped;
    },
  };
}
