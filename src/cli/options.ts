/** Options shared by several commands, declared once. */
import type { Argv } from 'yargs';
import { UsageError } from './output.js';
import { isSeed, MAX_SEED, MAX_TIMER_MS } from '../fixture/fixture-schema.js';
import { isPort, MAX_PORT } from '../shared/listen.js';
import { isTimeScale } from '../shared/clock.js';

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
  // A string, not a number: yargs turns `--seed abc` into NaN, and the usage line should echo what was typed.
  return yargs.option('seed', { type: 'string', describe: "Seed of the random source, 0 to 2147483647 (overrides the fixture's seed)" });
}

/** The `--seed` given, checked: a whole number the random source takes as it is (0 to 2^31 - 1). */
export function seedOf(argv: Record<string, unknown>): number | undefined {
  const raw = argv.seed;
  if (raw === undefined) return undefined;
  // Number() reads '' and '  ' as 0; an empty --seed is a mistake, not seed 0.
  const seed = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : Number.NaN;
  if (!isSeed(seed)) throw new UsageError(`--seed must be a whole number from 0 to ${MAX_SEED}, not "${String(raw)}"`);
  return seed;
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

export function withBrokerThread<T>(yargs: Argv<T>) {
  return yargs.option('broker-thread', {
    type: 'boolean',
    default: true,
    describe: 'Run the embedded broker on a thread of its own (--no-broker-thread: on the main thread, for debugging)',
  });
}

export function withBroker<T>(yargs: Argv<T>, required: boolean) {
  return yargs.option('broker', {
    type: 'string',
    demandOption: required ? 'give the broker URL, e.g. --broker mqtt://127.0.0.1:1883' : false,
    describe:
      'URL of an external MQTT broker (mqtt://[user:pass@]host:port); STATION_SIM_BROKER_USERNAME and STATION_SIM_BROKER_PASSWORD give the credentials instead, out of the process list',
    coerce: (value: string) => {
      if (value.trim() === '') throw new UsageError('--broker needs a URL, e.g. mqtt://127.0.0.1:1883');
      return brokerUrlWithCredentials(value, process.env);
    },
  });
}

/**
 * The broker URL with the credentials of STATION_SIM_BROKER_USERNAME and STATION_SIM_BROKER_PASSWORD
 * put in, when the URL has none of its own: a password in `--broker` shows in the process list
 * (`ps`) to every user of the machine, while the environment does not. Credentials in the URL win.
 */
export function brokerUrlWithCredentials(url: string, env: NodeJS.ProcessEnv): string {
  const username = env.STATION_SIM_BROKER_USERNAME ?? '';
  const password = env.STATION_SIM_BROKER_PASSWORD ?? '';
  if (username === '' && password === '') return url;
  // MQTT 3.1.1 sends a password only with a user name [MQTT-3.1.2-22].
  if (username === '') throw new UsageError('STATION_SIM_BROKER_PASSWORD needs STATION_SIM_BROKER_USERNAME as well');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url; // not a URL: the broker's own check says so, with the usual hint
  }
  if (parsed.username !== '' || parsed.password !== '') return url;
  parsed.username = encodeURIComponent(username);
  parsed.password = encodeURIComponent(password);
  return parsed.toString();
}

/** Validates a port option at the edge. */
export function checkPort(name: string, value: number | undefined): void {
  if (value === undefined) return;
  if (!isPort(value)) throw new UsageError(`--${name} must be a whole number from 0 to ${MAX_PORT}`);
}

/** What `--http-port` defaults to: 8080 with a fallback (`up`, `api`), or always a free port (`run`). */
export type HttpPortDefault = 'default-port' | 'free-port';

export function withHttp<T>(yargs: Argv<T>, portDefault: HttpPortDefault = 'default-port') {
  const where = 'Port of the HTTP server (/v1 API and /sim/v1 control plane)';
  return yargs
    .option('http-port', {
      type: 'number',
      describe:
        portDefault === 'free-port'
          ? `${where} (default: a free one; a port given that is taken is an error)`
          : `${where}; 0 picks a free one (default ${DEFAULT_HTTP_PORT}, or a free port if that is taken)`,
    })
    .option('control-token', {
      type: 'string',
      describe: 'Require "Authorization: Bearer <token>" on /sim/v1 (or set STATION_SIM_CONTROL_TOKEN, which keeps it out of the process list)',
    })
    .option('access-ttl', { type: 'number', describe: "Access token lifetime in seconds (default: the fixture's, 3600)" })
    .option('refresh-ttl', { type: 'number', describe: "Refresh token lifetime in seconds (default: the fixture's, 2592000)" })
    .option('command-timeout', { type: 'number', describe: "How long an unlock waits for the station's ack, ms (default: the fixture's, 5000)" })
    .option('log', { type: 'boolean', default: false, describe: 'Log API requests as JSON lines on stderr (tokens and bodies are never logged)' });
}

/** The HTTP options of a parsed command line, checked at the edge. */
export function httpOptions(argv: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env) {
  const httpPort = argv['http-port'] as number | undefined;
  checkPort('http-port', httpPort);
  for (const name of ['access-ttl', 'refresh-ttl', 'command-timeout']) {
    const value = argv[name] as number | undefined;
    if (value !== undefined && (!Number.isInteger(value) || value < 1)) throw new UsageError(`--${name} must be a whole number of at least 1`);
  }
  const timeout = argv['command-timeout'] as number | undefined;
  if (timeout !== undefined && timeout > MAX_TIMER_MS) throw new UsageError(`--command-timeout must be at most ${MAX_TIMER_MS} ms`);
  const controlToken = (argv['control-token'] as string | undefined) ?? env.STATION_SIM_CONTROL_TOKEN;
  const set = <V>(key: string, value: V | undefined) => (value === undefined ? {} : { [key]: value });
  return {
    httpPort: httpPort ?? DEFAULT_HTTP_PORT,
    fallbackToFreePort: httpPort === undefined,
    ...set('controlToken', controlToken === '' ? undefined : controlToken),
    ...set('accessTokenTtlSeconds', argv['access-ttl'] as number | undefined),
    ...set('refreshTokenTtlSeconds', argv['refresh-ttl'] as number | undefined),
    ...set('commandTimeoutMs', argv['command-timeout'] as number | undefined),
    ...(argv.log ? { logger: { stream: process.stderr } } : {}),
  } as {
    httpPort: number;
    fallbackToFreePort: boolean;
    controlToken?: string;
    accessTokenTtlSeconds?: number;
    refreshTokenTtlSeconds?: number;
    commandTimeoutMs?: number;
    logger?: { stream: NodeJS.WritableStream };
  };
}

/** How the control plane is protected, for the start-up line. */
export function controlAccess(host: string, controlToken: string | undefined): string {
  const where = host === '127.0.0.1' || host === '::1' || host === 'localhost' ? 'loopback only' : `bound to ${host}`;
  return `control plane ${where}, ${controlToken ? 'token required' : 'no token (open to anyone who can reach it)'}`;
}

export function withTime<T>(yargs: Argv<T>) {
  return yargs
    .option('record', { type: 'string', describe: 'Write a transcript of every MQTT message and API request (JSON lines) to this file' })
    .option('time-scale', { type: 'number', describe: 'Run station behaviour, scenario timelines and token lifetimes this many times faster' })
    .option('clock', {
      choices: ['system', 'manual'] as const,
      default: 'system' as const,
      describe: 'manual: simulated time stands still until POST /sim/v1/clock/advance moves it',
    });
}

/** The time options of a parsed command line, checked at the edge. */
export function timeOptions(argv: Record<string, unknown>): { clock: 'system' | 'manual'; timeScale?: number; record?: string } {
  const timeScale = argv['time-scale'] as number | undefined;
  const record = argv.record as string | undefined;
  const clock = argv.clock as 'system' | 'manual';
  if (timeScale !== undefined && !isTimeScale(timeScale)) throw new UsageError('--time-scale must be a positive number');
  if (timeScale !== undefined && clock === 'manual') throw new UsageError('--time-scale and --clock manual do not go together');
  return { clock, ...(timeScale === undefined ? {} : { timeScale }), ...(record === undefined ? {} : { record }) };
}
