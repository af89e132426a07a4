/** What `broker` does: the embedded broker alone, secured as the fixture says, until a stop signal. */
import { startEmbeddedBroker } from '../../../broker/embedded-broker.js';
import { embeddedBrokerSettings } from '../../../broker/broker-settings.js';
import { resolveFixture } from '../../../simulator/resolve-fixture.js';
import { printReady, notice, type CliIo } from '../../output.js';
import { runUntilSignal } from '../../run-until-signal.js';
import { brokerListeners } from '../../broker-notices.js';
import { reportRefusals } from '../../broker-refusal-lines.js';
import { DEFAULT_MQTT_PORT } from '../../options.js';
import { brokerSecurityOptions, checked } from '../../option-checks.js';
import type { BrokerFlags } from './options.js';

export async function runBroker(io: CliIo, argv: BrokerFlags): Promise<void> {
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
}
