/** Options shared by several commands, declared once. */
import type { Argv } from 'yargs';

export const DEFAULT_MQTT_PORT = 1883;
export const DEFAULT_HTTP_PORT = 8080;

export function withFixture<T>(yargs: Argv<T>) {
  return yargs.option('fixture', {
    alias: 'f',
    type: 'string',
    describe: 'Fixture file describing the fleet and accounts (default: the bundled demo fixture)',
  });
}

export function withSeed<T>(yargs: Argv<T>) {
  return yargs.option('seed', { type: 'number', describe: "Seed of the random source (overrides the fixture's seed)" });
}

export function withJson<T>(yargs: Argv<T>) {
  return yargs.option('json', { type: 'boolean', default: false, describe: 'Print the ready line as one JSON line' });
}

export function withHost<T>(yargs: Argv<T>) {
  return yargs.option('host', { type: 'string', default: '127.0.0.1', describe: 'Interface to bind servers to' });
}

export function withMqttPort<T>(yargs: Argv<T>) {
  return yargs.option('mqtt-port', {
    type: 'number',
    describe: `Port of the embedded MQTT broker; 0 picks a free one (default ${DEFAULT_MQTT_PORT}, or a free port if that is taken)`,
  });
}

export function withBroker<T>(yargs: Argv<T>, required: boolean) {
  return yargs.option('broker', {
    type: 'string',
    demandOption: required ? 'give the broker URL, e.g. --broker mqtt://127.0.0.1:1883' : false,
    describe: 'URL of an external MQTT broker (mqtt://[user:pass@]host:port)',
  });
}

/** Validates a port option at the edge. */
export function checkPort(name: string, value: number | undefined): void {
  if (value === undefined) return;
  if (!Number.isInteger(value) || value < 0 || value > 65535) {
    throw new Error(`--${name} must be a whole number from 0 to 65535`);
  }
}
