/** Options shared by several commands, declared once. */
import type { Argv } from 'yargs';
import { UsageError } from './output.js';
import { isSeed, MAX_SEED, MAX_TIMER_MS } from '../fixture/fixture-schema.js';
import { isLoopbackHost, isPort, MAX_PORT } from '../shared/listen.js';
import { isTimeScale } from '../shared/clock.js';
import {
  DEFAULT_LOG_MAX_FILES,
  DEFAULT_LOG_MAX_REQUESTS_PER_SECOND,
  MAX_LOG_FILES,
  MIN_LOG_FILE_BYTES,
  type ApiLoggerSettings,
} from '../service/http/request-logging.js';
import { isStateUrl } from '../service/auth/state-url.js';
import { requireSharedJwtSecret } from '../service/auth/jwt-secret.js';
import type { HttpOptions } from '../simulator/simulator-options.js';
import { redactUrl } from '../shared/redact-url.js';
import type { TlsOverrides } from '../mqtt/identity.js';
import { JUDGE_MODES } from './judge-notice.js';

/**
 * The Redis URL of the session store, when `--state` is not given: a password in `--state` shows
 * in the process list (`ps`) to every user of the machine, while the environment does not.
 */
export const STATE_URL_ENV = 'STATION_SIM_STATE_URL';

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

/** The fleet's heartbeat budget (src/fleet/heartbeat-budget.ts). */
export function withHeartbeatRate<T>(yargs: Argv<T>) {
  return yargs.option('max-heartbeat-rate', {
    type: 'number',
    describe: 'Heartbeats a second the fleet publishes at most; past it every station beats less often by the same factor, said at start (0: no cap; default 1000)',
  });
}

/** `maxHeartbeatRate` for startSimulator, when the flag was given; a bad value is a usage error. */
export function heartbeatRateOption(argv: Record<string, unknown>): { maxHeartbeatRate?: number } {
  const value = argv['max-heartbeat-rate'];
  if (value === undefined) return {};
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) throw new UsageError(`--max-heartbeat-rate must be a number of at least 0 (0: no cap), not ${String(value)}`);
  return { maxHeartbeatRate: value };
}

/** The embedded broker's security (docs/mqtt-security.md, "The embedded broker, secured"). */
export function withBrokerSecurity<T>(yargs: Argv<T>) {
  return yargs
    .option('broker-auth', {
      type: 'boolean',
      describe: "Embedded broker: require every MQTT client to authenticate as one of the fixture's identities (on by default when the fixture has mqtt.identities or mqtt.certs)",
    })
    .option('insecure-broker', {
      type: 'boolean',
      default: false,
      describe: 'Embedded broker: run without authentication on a --host other than loopback (refused otherwise, as Mosquitto 2 does)',
    })
    .option('broker-tls-port', { type: 'number', describe: "Embedded broker: port of an MQTT-over-TLS listener, with the fixture's mqtt.certs; 0 picks a free one" })
    .option('broker-ws-port', { type: 'number', describe: 'Embedded broker: port of an MQTT-over-WebSocket listener (wss with mqtt.certs); 0 picks a free one' });
}

/** The `withBrokerSecurity` flags given, as SimulatorOptions fields. */
export function brokerSecurityOptions(argv: Record<string, unknown>): { brokerAuth?: boolean; insecureBroker?: boolean; brokerTlsPort?: number; brokerWsPort?: number } {
  checkPort('broker-tls-port', argv['broker-tls-port'] as number | undefined);
  checkPort('broker-ws-port', argv['broker-ws-port'] as number | undefined);
  const given = <K extends string, V>(key: K, value: V | undefined) => (value === undefined ? {} : ({ [key]: value } as Record<K, V>));
  return {
    ...given('brokerAuth', argv['broker-auth'] as boolean | undefined),
    ...given('insecureBroker', argv['insecure-broker'] === true ? true : undefined),
    ...given('brokerTlsPort', argv['broker-tls-port'] as number | undefined),
    ...given('brokerWsPort', argv['broker-ws-port'] as number | undefined),
  };
}

export function withBroker<T>(yargs: Argv<T>, required: boolean) {
  return withBrokerTls(yargs).option('broker', {
    type: 'string',
    demandOption: required ? 'give the broker URL, e.g. --broker mqtt://127.0.0.1:1883' : false,
    describe:
      'URL of an external MQTT broker (mqtt://, mqtts://, ws:// or wss://[user:pass@]host:port); STATION_SIM_BROKER_USERNAME and STATION_SIM_BROKER_PASSWORD give the credentials instead, out of the process list',
    coerce: (value: string) => {
      if (value.trim() === '') throw new UsageError('--broker needs a URL, e.g. mqtt://127.0.0.1:1883');
      return brokerUrlWithCredentials(value, process.env);
    },
  });
}

/** TLS to an external broker (docs/mqtt-security.md, "Connections"); each wins over the fixture's `mqtt` section. */
function withBrokerTls<T>(yargs: Argv<T>) {
  return yargs
    .option('broker-ca', { type: 'string', describe: "CA bundle (PEM file) an mqtts:// or wss:// broker's certificate must chain to (default: the fixture's, else the system CAs)" })
    .option('broker-cert', { type: 'string', describe: 'Client certificate (PEM file) of the API and control plane; stations take theirs from the fixture' })
    .option('broker-key', { type: 'string', describe: 'Private key (PEM file) of --broker-cert' })
    .option('broker-servername', { type: 'string', describe: "Host name the broker's certificate must carry (default: the URL's host)" })
    .option('insecure', { type: 'boolean', describe: "Do not verify the broker's certificate (says so on stderr at start); for test brokers only" });
}

/** The TLS options given, checked; undefined when none was. */
export function brokerTlsOf(argv: Record<string, unknown>): TlsOverrides | undefined {
  const tls: TlsOverrides = {};
  for (const [flag, field] of [['broker-ca', 'ca'], ['broker-cert', 'cert'], ['broker-key', 'key'], ['broker-servername', 'servername']] as const) {
    const value = argv[flag];
    if (value === undefined) continue;
    if (typeof value !== 'string' || value.trim() === '') throw new UsageError(`--${flag} needs a value`);
    tls[field] = value;
  }
  if ((tls.cert === undefined) !== (tls.key === undefined)) throw new UsageError('--broker-cert and --broker-key go together');
  if (argv.insecure === true) tls.insecure = true;
  if (Object.keys(tls).length > 0 && argv.broker === undefined) {
    throw new UsageError('--broker-ca, --broker-cert, --broker-key, --broker-servername and --insecure are about an external broker: give --broker');
  }
  return Object.keys(tls).length === 0 ? undefined : tls;
}

/** `{ brokerTls }` for the simulator's options, or nothing when no TLS option was given. */
export function brokerTlsOption(argv: Record<string, unknown>): { brokerTls?: TlsOverrides } {
  const tls = brokerTlsOf(argv);
  return tls ? { brokerTls: tls } : {};
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
    .option('insecure-control', {
      type: 'boolean',
      describe: 'With --host other than loopback and no control token: serve /sim/v1 open to everyone who can reach it (refused without this)',
    })
    .option('access-ttl', { type: 'number', describe: "Access token lifetime in seconds (default: the fixture's, 3600)" })
    .option('refresh-ttl', { type: 'number', describe: "Refresh token lifetime in seconds (default: the fixture's, 2592000)" })
    .option('session-max-lifetime', {
      type: 'number',
      describe: "Absolute session lifetime in seconds, however often it is refreshed; at least --refresh-ttl (default: the fixture's, 7776000 = 90 days)",
    })
    .option('state', {
      type: 'string',
      describe: `Keep sessions in Redis, shared by API processes and kept across restarts: redis://[:password@]host:port[/db] or rediss://… (or set ${STATE_URL_ENV}, which keeps the password out of the process list; default: the fixture's api.state, else memory)`,
    })
    .option('command-timeout', { type: 'number', describe: "How long an unlock waits for the station's ack, ms (default: the fixture's, 5000)" })
    .option('login-throttle', {
      type: 'boolean',
      describe: "Throttle failed logins per client address and per email with 429 (default: the fixture's, on); --no-login-throttle for load tests",
    })
    .option('log', { type: 'boolean', default: false, describe: 'Log API requests as JSON lines on stderr, sampled under load (tokens and bodies are never logged)' })
    .option('log-file', { type: 'string', describe: 'Write the API log to this file instead of stderr (implies --log); appended to, and rotated at --log-max-size' })
    .option('log-max-size', {
      // A string: "10m" is a size, and the usage line should echo what was typed.
      type: 'string',
      describe: 'Size at which --log-file is rotated to FILE.1 (FILE.1 to FILE.2…): bytes, or with k, m or g (KiB, MiB, GiB), at least 1k (default 10m)',
    })
    .option('log-files', { type: 'string', describe: `Rotated files of --log-file kept, 1 to ${MAX_LOG_FILES}; the disk used stays under about size × (this + 1) (default ${DEFAULT_LOG_MAX_FILES})` })
    .option('log-requests-per-second', {
      type: 'string',
      describe: `Requests a second whose lines are logged; the lines of the others are dropped and counted in one line a second. Warnings, errors and 5xx are always logged; 0 logs every request (default ${DEFAULT_LOG_MAX_REQUESTS_PER_SECOND})`,
    });
}

/** `--log-max-size` in bytes: a whole number, or one with k, m or g (binary: 1k is 1024 bytes). */
export function parseLogSize(raw: string): number {
  const match = /^(\d+)([kmg])?(?:i?b)?$/i.exec(raw.trim());
  const bytes = match ? Number(match[1]) * 1024 ** ' kmg'.indexOf((match[2] ?? ' ').toLowerCase()) : Number.NaN;
  if (!(Number.isSafeInteger(bytes) && bytes >= MIN_LOG_FILE_BYTES)) {
    throw new UsageError(`--log-max-size must be a size of at least 1k: bytes, or a whole number with k, m or g (10m is 10 MiB), not "${raw}"`);
  }
  return bytes;
}

/** A whole-number option given as a string, checked against its bounds. */
function wholeOption(name: string, raw: string, min: number, max: number): number {
  const value = raw.trim() === '' ? Number.NaN : Number(raw);
  if (!(Number.isInteger(value) && value >= min && value <= max)) {
    throw new UsageError(`--${name} must be a whole number ${max === Number.MAX_SAFE_INTEGER ? `of at least ${min}` : `from ${min} to ${max}`}, not "${raw}"`);
  }
  return value;
}

/** The logger the `--log…` options ask for, checked at the edge; undefined for no log. */
export function loggerOf(argv: Record<string, unknown>, stderr: NodeJS.WritableStream = process.stderr): ApiLoggerSettings | undefined {
  const file = argv['log-file'] as string | undefined;
  const maxSize = argv['log-max-size'] as string | undefined;
  const files = argv['log-files'] as string | undefined;
  const perSecond = argv['log-requests-per-second'] as string | undefined;
  if (file === '') throw new UsageError('--log-file needs a file path');
  if (file === undefined && (maxSize !== undefined || files !== undefined)) {
    throw new UsageError(`--${maxSize !== undefined ? 'log-max-size' : 'log-files'} is about --log-file, which is not given`);
  }
  if (file === undefined && !argv.log) {
    if (perSecond !== undefined) throw new UsageError('--log-requests-per-second needs --log or --log-file');
    return undefined;
  }
  return {
    ...(file === undefined ? { stream: stderr } : { file }),
    ...(maxSize === undefined ? {} : { maxFileBytes: parseLogSize(maxSize) }),
    ...(files === undefined ? {} : { maxFiles: wholeOption('log-files', files, 1, MAX_LOG_FILES) }),
    ...(perSecond === undefined ? {} : { maxRequestsPerSecond: wholeOption('log-requests-per-second', perSecond, 0, Number.MAX_SAFE_INTEGER) }),
  };
}

/** The HTTP options of a parsed command line, checked at the edge. */
export function httpOptions(argv: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env) {
  const httpPort = argv['http-port'] as number | undefined;
  checkPort('http-port', httpPort);
  for (const name of ['access-ttl', 'refresh-ttl', 'session-max-lifetime', 'command-timeout']) {
    const value = argv[name] as number | undefined;
    if (value !== undefined && (!Number.isInteger(value) || value < 1)) throw new UsageError(`--${name} must be a whole number of at least 1`);
  }
  const timeout = argv['command-timeout'] as number | undefined;
  if (timeout !== undefined && timeout > MAX_TIMER_MS) throw new UsageError(`--command-timeout must be at most ${MAX_TIMER_MS} ms`);
  const controlToken = (argv['control-token'] as string | undefined) ?? env.STATION_SIM_CONTROL_TOKEN;
  checkControlExposure(argv.host as string | undefined, controlToken, argv['insecure-control'] === true);
  const state = stateUrl(argv.state as string | undefined, env);
  if (state !== undefined) requireSharedJwtSecret(argv.state === undefined ? STATE_URL_ENV : '--state', env);
  const set = <V>(key: string, value: V | undefined) => (value === undefined ? {} : { [key]: value });
  return {
    httpPort: httpPort ?? DEFAULT_HTTP_PORT,
    fallbackToFreePort: httpPort === undefined,
    ...set('controlToken', controlToken === '' ? undefined : controlToken),
    ...set('accessTokenTtlSeconds', argv['access-ttl'] as number | undefined),
    ...set('refreshTokenTtlSeconds', argv['refresh-ttl'] as number | undefined),
    ...set('sessionMaxLifetimeSeconds', argv['session-max-lifetime'] as number | undefined),
    ...set('state', state),
    ...set('commandTimeoutMs', argv['command-timeout'] as number | undefined),
    ...set('loginThrottle', argv['login-throttle'] as boolean | undefined),
    ...set('insecureControl', argv['insecure-control'] === true ? true : undefined),
    ...set('logger', loggerOf(argv)),
  } as Pick<
    HttpOptions,
    'controlToken' | 'insecureControl' | 'accessTokenTtlSeconds' | 'refreshTokenTtlSeconds' | 'sessionMaxLifetimeSeconds' | 'state' | 'commandTimeoutMs' | 'loginThrottle'
  > & { httpPort: number; fallbackToFreePort: boolean; logger?: ApiLoggerSettings };
}

/** `--state`, else STATION_SIM_STATE_URL, checked; undefined for sessions in memory (or the fixture's `api.state`). */
export function stateUrl(option: string | undefined, env: NodeJS.ProcessEnv): string | undefined {
  const fromEnv = env[STATE_URL_ENV];
  const url = option ?? (fromEnv === '' ? undefined : fromEnv);
  if (url === undefined) return undefined;
  const source = option === undefined ? STATE_URL_ENV : '--state';
  // The URL may hold a password: it is shown redacted.
  if (!isStateUrl(url)) throw new UsageError(`${source} must be a Redis URL, redis://[:password@]host[:port][/db] or rediss://…, not "${redactUrl(url)}"`);
  return url;
}

/**
 * DESIGN.md, "Trust model": loopback only by default, open there as a local emulator is; bound to
 * any other address, the control plane (which opens any lock and resets the fleet) needs its token
 * unless the user says so in as many words.
 */
function checkControlExposure(host: string | undefined, controlToken: string | undefined, insecure: boolean): void {
  if (host === undefined || isLoopbackHost(host) || (controlToken !== undefined && controlToken !== '') || insecure) return;
  throw new UsageError(
    `--host ${host} lets other machines reach the control plane, which opens any lock and resets the fleet: ` +
      'set STATION_SIM_CONTROL_TOKEN (or --control-token), or add --insecure-control to leave it open to everyone who can reach it',
  );
}

/** How the control plane is protected, for the start-up line. */
/**
 * The start-up line on who may drive the control plane. `openBroker`: the embedded broker takes
 * anyone, so the control topics (`station-sim/control/…`, `station-sim/fleet`) are open to every
 * MQTT client that reaches it, token or not; the line says so rather than promise a token protects.
 */
export function controlAccess(host: string, controlToken: string | undefined, tokenOnCommandLine = false, openBroker = false): string {
  const where = isLoopbackHost(host) ? 'loopback only' : `bound to ${host}`;
  const token = tokenOnCommandLine ? 'token required (given with --control-token, which the process list shows to every user of this machine: STATION_SIM_CONTROL_TOKEN does not)' : 'token required';
  const line = `control plane ${where}, ${controlToken ? token : 'no token (open to anyone who can reach it)'}`;
  if (!controlToken || !openBroker) return line;
  return `${line}; over HTTP only: the embedded broker is open, so any MQTT client that reaches it can publish to the control topics without the token (--broker-auth, or mqtt identities in the fixture, close them: docs/mqtt-security.md)`;
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

/** `--judge-report FILE`: the judge's findings as JUnit XML at stop (docs/judge.md). */
export function withJudgeReport<T>(yargs: Argv<T>) {
  return yargs.option('judge-report', {
    type: 'string',
    describe: "Write the judge's verdict as JUnit XML to this file (one test case per rule, failed when broken), for CI; up, run and stations write it when they stop",
  });
}

/** `--judge off|report|strict`, `run`'s own: what the judge's findings do to the run. */
export function withJudgeMode<T>(yargs: Argv<T>) {
  return yargs.option('judge', {
    choices: JUDGE_MODES,
    default: 'report' as const,
    describe: 'report: the judge line at stop; strict: also exit 3 when the command passed but a rule was broken; off: say nothing of the judge',
  });
}
