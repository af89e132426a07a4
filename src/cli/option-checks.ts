/**
 * The flags of options.ts read and checked at the edge, as the library options they set. Values
 * are checked by the rules of the library option each flag sets (simulator-options.ts), so the CLI
 * and `startSimulator` refuse the same values; a broken rule is a usage error naming the flag.
 * Apart from the declarations, which every start of the CLI reads: these rules bring the fixture
 * schema they take their bounds from, which only a command's handler needs.
 */
import { UsageError } from './output.js';
import { LOGGER_LIMITS, type ApiLoggerSettings } from '../service/http/logger-settings.js';
import { isStateUrl } from '../service/auth/state-url.js';
import { requireSharedJwtSecret } from '../service/auth/jwt-secret.js';
import { exposesControl, optionMessage, simulatorOptionProblem, type HttpOptions, type SimulatorOptions } from '../simulator/simulator-options.js';
import { isLoopbackHost } from '../shared/listen.js';
import { redactUrl } from '../shared/redact-url.js';
import type { TlsOverrides } from '../mqtt/identity.js';
import { MQTT5_NEEDS_EXTERNAL_BROKER, MQTT_VERSION_WANTS, isMqttProtocolVersion, type MqttProtocolVersion } from '../mqtt/mqtt-version.js';
import {
  DEFAULT_HTTP_PORT,
  STATE_URL_ENV,
  type BROKER_OPTIONS,
  type BROKER_SECURITY_OPTIONS,
  type FlagsOf,
  type GivenFlags,
  type HEARTBEAT_OPTIONS,
  type HttpFlags,
  type SEED_OPTIONS,
  type TIME_OPTIONS,
} from './options.js';

/**
 * A flag's value checked by the rule of the library option it sets: the CLI and startSimulator
 * refuse the same values, and the message names the flag. `given` is what the message echoes, where
 * the flag is parsed from what was typed (`--seed abc`).
 */
export function checked<K extends keyof SimulatorOptions>(flag: string, option: K, value: SimulatorOptions[K] | undefined, given: unknown = value): SimulatorOptions[K] | undefined {
  const problem = simulatorOptionProblem(option, value);
  if (problem) throw new UsageError(optionMessage(`--${flag}`, problem, given));
  return value;
}

/** The `--seed` given, checked: a whole number the random source takes as it is (0 to 2^31 - 1). */
export function seedOf(argv: GivenFlags<typeof SEED_OPTIONS>): number | undefined {
  const raw = argv.seed;
  if (raw === undefined) return undefined;
  // Number() reads '' and '  ' as 0; an empty --seed is a mistake, not seed 0.
  const seed = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : Number.NaN;
  return checked('seed', 'seed', seed, String(raw));
}

/** `maxHeartbeatRate` for startSimulator, when the flag was given; a bad value is a usage error. */
export function heartbeatRateOption(argv: GivenFlags<typeof HEARTBEAT_OPTIONS>): Pick<SimulatorOptions, 'maxHeartbeatRate'> {
  const value = checked('max-heartbeat-rate', 'maxHeartbeatRate', argv['max-heartbeat-rate']);
  return value === undefined ? {} : { maxHeartbeatRate: value };
}

/** The embedded broker's security flags as SimulatorOptions fields: only those given (--insecure-broker only when on). */
export type BrokerSecurity = Pick<SimulatorOptions, 'brokerAuth' | 'insecureBroker' | 'brokerTlsPort' | 'brokerWsPort'>;

/** The `BROKER_SECURITY_OPTIONS` given, checked, as SimulatorOptions fields. */
export function brokerSecurityOptions(argv: GivenFlags<typeof BROKER_SECURITY_OPTIONS>): BrokerSecurity {
  const tlsPort = checked('broker-tls-port', 'brokerTlsPort', argv['broker-tls-port']);
  const wsPort = checked('broker-ws-port', 'brokerWsPort', argv['broker-ws-port']);
  const auth = argv['broker-auth'];
  return {
    ...(auth === undefined ? {} : { brokerAuth: auth }),
    ...(argv['insecure-broker'] === true ? { insecureBroker: true } : {}),
    ...(tlsPort === undefined ? {} : { brokerTlsPort: tlsPort }),
    ...(wsPort === undefined ? {} : { brokerWsPort: wsPort }),
  };
}

/** The TLS options given, checked; undefined when none was. */
export function brokerTlsOf(argv: GivenFlags<typeof BROKER_OPTIONS>): TlsOverrides | undefined {
  const tls: TlsOverrides = {};
  for (const [flag, field] of [['broker-ca', 'ca'], ['broker-cert', 'cert'], ['broker-key', 'key'], ['broker-servername', 'servername']] as const) {
    const value = argv[flag];
    if (value === undefined) continue;
    if (value.trim() === '') throw new UsageError(`--${flag} needs a value`);
    tls[field] = value;
  }
  if ((tls.cert === undefined) !== (tls.key === undefined)) throw new UsageError('--broker-cert and --broker-key go together');
  if (argv.insecure === true) tls.insecure = true;
  if (Object.keys(tls).length > 0 && argv.broker === undefined) {
    throw new UsageError('--broker-ca, --broker-cert, --broker-key, --broker-servername and --insecure are about an external broker: give --broker');
  }
  return Object.keys(tls).length === 0 ? undefined : tls;
}

/**
 * `{ brokerTls, mqttVersion }` for the simulator's options, each only when its flags were given:
 * what the commands with `--broker` say of the external broker beyond its URL.
 */
export function brokerTlsOption(argv: GivenFlags<typeof BROKER_OPTIONS>): Pick<SimulatorOptions, 'brokerTls' | 'mqttVersion'> {
  const tls = brokerTlsOf(argv);
  const version = mqttVersionOf(argv);
  return { ...(tls ? { brokerTls: tls } : {}), ...(version === undefined ? {} : { mqttVersion: version }) };
}

/**
 * The `--mqtt-version` given, checked: 4 or 5, and 5 only with `--broker` (the embedded broker,
 * aedes, speaks MQTT 3.1.1 only; a fixture's `mqtt.protocolVersion: 5` there gets a notice instead).
 */
export function mqttVersionOf(argv: GivenFlags<typeof BROKER_OPTIONS>): MqttProtocolVersion | undefined {
  const raw = argv['mqtt-version'];
  if (raw === undefined) return undefined;
  const version = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : Number.NaN;
  if (!isMqttProtocolVersion(version)) throw new UsageError(`--mqtt-version must be ${MQTT_VERSION_WANTS}, not ${JSON.stringify(String(raw))}`);
  if (version === 5 && argv.broker === undefined) throw new UsageError(`--mqtt-version 5: ${MQTT5_NEEDS_EXTERNAL_BROKER}`);
  return version;
}

/** `--log-max-size` in bytes: a whole number, or one with k, m or g (binary: 1k is 1024 bytes). */
export function parseLogSize(raw: string): number {
  const match = /^(\d+)([kmg])?(?:i?b)?$/i.exec(raw.trim());
  const bytes = match ? Number(match[1]) * 1024 ** ' kmg'.indexOf((match[2] ?? ' ').toLowerCase()) : Number.NaN;
  if (!LOGGER_LIMITS.maxFileBytes.ok(bytes)) {
    throw new UsageError(`--log-max-size must be a size of at least 1k: bytes, or a whole number with k, m or g (10m is 10 MiB), not "${raw}"`);
  }
  return bytes;
}

/** A `--log-…` flag given as a string (the message echoes what was typed), checked by the logger setting's own bounds. */
function loggerLimit(flag: string, setting: 'maxFiles' | 'maxRequestsPerSecond', raw: string): number {
  const value = raw.trim() === '' ? Number.NaN : Number(raw);
  const { ok, wants } = LOGGER_LIMITS[setting];
  if (!ok(value)) throw new UsageError(optionMessage(`--${flag}`, { wants, secret: false }, raw));
  return value;
}

/** The logger the `--log…` options ask for, checked at the edge; undefined for no log. */
export function loggerOf(argv: HttpFlags, stderr: NodeJS.WritableStream = process.stderr): ApiLoggerSettings | undefined {
  const { 'log-file': file, 'log-max-size': maxSize, 'log-files': files, 'log-requests-per-second': perSecond } = argv;
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
    ...(files === undefined ? {} : { maxFiles: loggerLimit('log-files', 'maxFiles', files) }),
    ...(perSecond === undefined ? {} : { maxRequestsPerSecond: loggerLimit('log-requests-per-second', 'maxRequestsPerSecond', perSecond) }),
  };
}

/** The HTTP side's options for startSimulator and startApiProcess: those given, checked. */
export type HttpSettings = Pick<
  HttpOptions,
  'controlToken' | 'insecureControl' | 'accessTokenTtlSeconds' | 'refreshTokenTtlSeconds' | 'sessionMaxLifetimeSeconds' | 'state' | 'commandTimeoutMs' | 'loginThrottle'
> & { httpPort: number; fallbackToFreePort: boolean; logger?: ApiLoggerSettings };

/** The HTTP options of a parsed command line, checked at the edge. */
export function httpOptions(flags: HttpFlags, env: NodeJS.ProcessEnv = process.env): HttpSettings {
  const httpPort = checked('http-port', 'httpPort', flags['http-port']);
  const accessTtl = checked('access-ttl', 'accessTokenTtlSeconds', flags['access-ttl']);
  const refreshTtl = checked('refresh-ttl', 'refreshTokenTtlSeconds', flags['refresh-ttl']);
  const sessionLifetime = checked('session-max-lifetime', 'sessionMaxLifetimeSeconds', flags['session-max-lifetime']);
  const timeout = checked('command-timeout', 'commandTimeoutMs', flags['command-timeout']);
  const given = flags['control-token'] ?? env.STATION_SIM_CONTROL_TOKEN;
  const controlToken = given === '' ? undefined : given;
  checkControlExposure(flags.host, controlToken, flags['insecure-control'] === true);
  const state = stateUrl(flags.state, env);
  if (state !== undefined) requireSharedJwtSecret(flags.state === undefined ? STATE_URL_ENV : '--state', env);
  const logger = loggerOf(flags);
  const loginThrottle = flags['login-throttle'];
  return {
    httpPort: httpPort ?? DEFAULT_HTTP_PORT,
    fallbackToFreePort: httpPort === undefined,
    ...(controlToken === undefined ? {} : { controlToken }),
    ...(accessTtl === undefined ? {} : { accessTokenTtlSeconds: accessTtl }),
    ...(refreshTtl === undefined ? {} : { refreshTokenTtlSeconds: refreshTtl }),
    ...(sessionLifetime === undefined ? {} : { sessionMaxLifetimeSeconds: sessionLifetime }),
    ...(state === undefined ? {} : { state }),
    ...(timeout === undefined ? {} : { commandTimeoutMs: timeout }),
    ...(loginThrottle === undefined ? {} : { loginThrottle }),
    ...(flags['insecure-control'] === true ? { insecureControl: true } : {}),
    ...(logger === undefined ? {} : { logger }),
  };
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
 * DESIGN.md, "Trust model": the library's rule (`exposesControl`), said in flags: bound beyond
 * loopback, the control plane (which opens any lock and resets the fleet) needs its token unless
 * the user says so in as many words.
 */
function checkControlExposure(host: string | undefined, controlToken: string | undefined, insecureControl: boolean): void {
  if (!exposesControl({ host, controlToken, insecureControl })) return;
  throw new UsageError(
    `--host ${host} lets other machines reach the control plane, which opens any lock and resets the fleet: ` +
      'set STATION_SIM_CONTROL_TOKEN (or --control-token), or add --insecure-control to leave it open to everyone who can reach it',
  );
}

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

/** The time options for startSimulator: the clock, and the others when given. */
export type TimeSettings = { clock: 'system' | 'manual' } & Pick<SimulatorOptions, 'timeScale' | 'record'>;

/** The time options of a parsed command line, checked at the edge. */
export function timeOptions(argv: FlagsOf<typeof TIME_OPTIONS>): TimeSettings {
  const { 'time-scale': given, record, clock } = argv;
  const timeScale = checked('time-scale', 'timeScale', given);
  if (timeScale !== undefined && clock === 'manual') throw new UsageError('--time-scale and --clock manual do not go together');
  return { clock, ...(timeScale === undefined ? {} : { timeScale }), ...(record === undefined ? {} : { record }) };
}
