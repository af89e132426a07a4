/**
 * The library API's options (`startSimulator`, `startApiProcess`): their types, declared here
 * with the rules that check them so that this module does not import start-simulator.ts, which
 * imports it. They are checked once at the edge (STYLE.md, "validated once"), by the rules
 * the CLI and the fixture schema already apply: a caller in plain JavaScript, or one passing values
 * read from the environment, is told which option is wrong before anything starts, instead of
 * meeting a failure deep inside (a port taken as a socket path, a clock without `now`).
 */
import { MQTT_VERSION_WANTS, isMqttProtocolVersion, type MqttProtocolVersion } from '../mqtt/mqtt-version.js';
import { SimError } from '../errors.js';
import { ApiSettingsSchema, isSeed, MAX_SEED } from '../fixture/fixture-schema.js';
import { isLoopbackHost, isPort, MAX_PORT } from '../shared/listen.js';
import { isTimeScale } from '../shared/clock.js';
import { isStateUrl, STATE_URL_WANTS } from '../service/auth/state-url.js';
import { loggerOptionProblem } from '../service/http/logger-settings.js';
import type { Fixture } from '../fixture/fixture-schema.js';
import type { Clock } from '../shared/clock.js';
import type { ApiLoggerOption } from '../service/build-api.js';
import type { TlsOverrides } from '../mqtt/identity.js';

/**
 * The fixtures station-sim ships (`fixtures/demo.json`, `fixtures/ci.json`), by the name the
 * `fixture` option takes for them: a project that installs station-sim reaches them without
 * knowing where its package manager put the package.
 */
export const SHIPPED_FIXTURES = ['demo', 'ci'] as const;
export type ShippedFixtureName = (typeof SHIPPED_FIXTURES)[number];

/** What the HTTP side (the `/v1` API and the `/sim/v1` control plane) can be told. */
export interface HttpOptions {
  /** Port of the HTTP server (API and control plane); 0 picks a free one. @default 0 */
  httpPort?: number;
  /** Interface the servers bind to. @default "127.0.0.1" */
  host?: string;
  /** When the requested HTTP port is taken, use a free one instead of failing. @default false */
  fallbackToFreePort?: boolean;
  /** Bearer token required by `/sim/v1`. @default none */
  controlToken?: string;
  /**
   * With a `host` other than loopback and no `controlToken`, serve `/sim/v1` open to everyone who
   * can reach it; without this, such options are refused (DESIGN.md, trust model). @default false
   */
  insecureControl?: boolean;
  /** Overrides the fixture's access token lifetime. */
  accessTokenTtlSeconds?: number;
  /** Overrides the fixture's refresh token lifetime. */
  refreshTokenTtlSeconds?: number;
  /** Overrides the fixture's absolute session lifetime (at least the refresh token lifetime). */
  sessionMaxLifetimeSeconds?: number;
  /**
   * Where the API keeps sessions (refresh tokens, token families, revocations): a Redis URL,
   * `redis://[:password@]host:port[/db]` or `rediss://…`, shared by every API process given it and
   * kept across restarts. `stop()` closes its connections.
   * @default the fixture's `api.state`, else the memory of the API process
   */
  state?: string;
  /** Overrides the fixture's command timeout. */
  commandTimeoutMs?: number;
  /**
   * false turns login throttling off, for load tests that flood logins on purpose (docs/api.md,
   * section 5). @default the fixture's `api.loginThrottle.enabled` (true)
   */
  loginThrottle?: boolean;
  /** API request logging (JSON lines; tokens, passwords and bodies never included). @default false */
  logger?: ApiLoggerOption;
  /** Told about things worth a line, such as a scenario step that failed. */
  onNotice?: (message: string) => void;
  /**
   * Simulated time: `"system"` (real time), `"manual"` (frozen until `clock.advance(ms)` or
   * `POST /sim/v1/clock/advance`), or any `Clock`.
   * @default "system"
   */
  clock?: 'system' | 'manual' | Clock;
  /** Runs simulated time this many times faster than real time; with the system clock only (refused with any other). @default 1 */
  timeScale?: number;
}

export interface SimulatorOptions extends HttpOptions {
  /**
   * The name of a fixture station-sim ships (`"ci"`: 25 stations with fast delays for test suites;
   * `"demo"`), a fixture file path (relative to the working directory; a file named like a shipped
   * fixture is `./ci`), fixture data, or a fixture already loaded.
   * @default "demo"
   */
  // `string & {}` keeps the shipped names offered by editors (a plain `string` would absorb them).
  fixture?: ShippedFixtureName | (string & {}) | Fixture | object;
  /** Overrides the fixture's seed. */
  seed?: number;
  /** URL of an external broker (`mqtt://host:port`); when set, no broker is embedded and stations use TCP. */
  broker?: string;
  /**
   * MQTT protocol level of every party on the external broker: 4 (MQTT 3.1.1) or 5 (MQTT 5.0,
   * docs/mqtt-security.md, "MQTT 5"); `--mqtt-version`. Over the fixture's `mqtt.protocolVersion`.
   * The embedded broker speaks 3.1.1 only, so 5 without `broker` is refused.
   * @default the fixture's `mqtt.protocolVersion`, else 4
   */
  mqttVersion?: MqttProtocolVersion;
  /**
   * How every party checks an `mqtts://` or `wss://` broker, and the service and control client
   * certificate (`--broker-ca`, `--broker-cert`, `--broker-key`, `--broker-servername`,
   * `--insecure`); each wins over the fixture's `mqtt` section (docs/mqtt-security.md).
   */
  brokerTls?: TlsOverrides;
  /** Port of the embedded broker; 0 picks a free one. @default 0 */
  mqttPort?: number;
  /** When the requested MQTT port is taken, use a free one instead of failing. @default false */
  mqttFallbackToFreePort?: boolean;
  /**
   * Run the embedded broker on a thread of its own, beside the stations and the API instead of
   * taking turns with them (broker-thread.ts). Off, it runs on the calling thread.
   * @default true
   */
  brokerThread?: boolean;
  /** Embedded broker: require authentication even when the fixture names no identities (docs/mqtt-security.md). @default as the fixture says */
  brokerAuth?: boolean;
  /** Embedded broker: run without authentication on a host other than loopback (refused otherwise, as Mosquitto 2 does). @default false */
  insecureBroker?: boolean;
  /** Embedded broker: port of an MQTT-over-TLS listener (needs the fixture's `mqtt.certs`); 0 picks a free one. @default the fixture's `mqtt.broker.tlsPort` */
  brokerTlsPort?: number;
  /** Embedded broker: port of an MQTT-over-WebSocket listener; 0 picks a free one. @default the fixture's `mqtt.broker.wsPort` */
  brokerWsPort?: number;
  /**
   * Serve the `/v1` API and the `/sim/v1` control plane. Off for a fleet-only process.
   * @default true
   */
  http?: boolean;
  /** Called as stations come up. */
  onProgress?: (ready: number, total: number) => void;
  /**
   * Heartbeats a second this process's fleet publishes at most; past it every station beats less
   * often by the same factor, and `onNotice` says so (src/fleet/heartbeat-budget.ts). 0 is no cap.
   * @default 1000
   */
  maxHeartbeatRate?: number;
  /** Write a transcript of every MQTT message and API request to this JSON-lines file. */
  record?: string;
  /**
   * Run only shard `index` (1-based) of `count` of the fixture's fleet, so several processes or
   * machines carry one fleet between them. Station i of the fixture goes to shard (i mod count) + 1.
   */
  shard?: { index: number; count: number };
}

/** What one option takes: a test and, for the message, what it must be. */
interface OptionRule {
  ok: (value: unknown) => boolean;
  wants: string;
  /** Leave the value out of the message (a token, a URL with credentials). */
  secret?: boolean;
  /** A message of its own for what is wrong, where `wants` alone would not say (an object's field). */
  problem?: (value: unknown) => string | undefined;
}

type Rules<T> = { readonly [K in keyof Required<T>]: OptionRule };

/** True for what `fixture` takes: a shipped fixture's name or a path, or fixture data. */
export function isFixtureOption(value: unknown): value is NonNullable<SimulatorOptions['fixture']> {
  return (typeof value === 'string' && value !== '') || (typeof value === 'object' && value !== null && !Array.isArray(value));
}

export const FIXTURE_WANTS = 'the name of a shipped fixture ("demo", "ci"), a fixture file path, or fixture data (an object)';

const nonEmptyString: OptionRule = { ok: (value) => typeof value === 'string' && value !== '', wants: 'a non-empty string' };
const boolean: OptionRule = { ok: (value) => typeof value === 'boolean', wants: 'true or false' };
const callback: OptionRule = { ok: (value) => typeof value === 'function', wants: 'a function' };
const port: OptionRule = { ok: isPort, wants: `a whole number from 0 to ${MAX_PORT}` };

/** A whole number within the bounds an API setting has in the fixture schema. */
function apiSetting(schema: { minimum?: number; maximum?: number }): OptionRule {
  const { minimum = 0, maximum } = schema;
  return {
    ok: (value) => Number.isInteger(value) && (value as number) >= minimum && (maximum === undefined || (value as number) <= maximum),
    wants: maximum === undefined ? `a whole number of at least ${minimum}` : `a whole number from ${minimum} to ${maximum}`,
  };
}

const isClock = (value: unknown): boolean =>
  typeof value === 'object' &&
  value !== null &&
  ['now', 'setTimeout', 'clearTimeout'].every((method) => typeof (value as Record<string, unknown>)[method] === 'function');

const HTTP_RULES: Rules<HttpOptions> = {
  httpPort: port,
  host: nonEmptyString,
  fallbackToFreePort: boolean,
  insecureControl: boolean,
  // RFC 6750, section 2.1: a Bearer credential is a b64token, so a token of other characters
  // (a space, say) could never be sent and would lock everyone out of the control plane.
  controlToken: {
    ok: (value) => typeof value === 'string' && /^[A-Za-z0-9\-._~+/]+=*$/.test(value),
    wants: 'a non-empty string of the characters A-Z a-z 0-9 - . _ ~ + / (and = at the end), as a Bearer credential allows (leave it out for no token)',
    secret: true,
  },
  accessTokenTtlSeconds: apiSetting(ApiSettingsSchema.properties.accessTokenTtlSeconds),
  refreshTokenTtlSeconds: apiSetting(ApiSettingsSchema.properties.refreshTokenTtlSeconds),
  sessionMaxLifetimeSeconds: apiSetting(ApiSettingsSchema.properties.sessionMaxLifetimeSeconds),
  // Secret: the URL may hold the Redis password.
  state: { ok: isStateUrl, wants: STATE_URL_WANTS, secret: true },
  commandTimeoutMs: apiSetting(ApiSettingsSchema.properties.commandTimeoutMs),
  loginThrottle: boolean,
  logger: {
    ok: (value) => loggerOptionProblem(value) === undefined,
    wants: 'true, false or { level?, stream?, file?, maxFileBytes?, maxFiles?, maxRequestsPerSecond? }',
    problem: loggerOptionProblem,
  },
  onNotice: callback,
  clock: { ok: (value) => value === 'system' || value === 'manual' || isClock(value), wants: '"system", "manual" or a Clock (now, setTimeout, clearTimeout)' },
  timeScale: { ok: isTimeScale, wants: 'a positive number' },
};

const FIXTURE_RULE: OptionRule = { ok: isFixtureOption, wants: FIXTURE_WANTS };

const SIMULATOR_RULES: Rules<SimulatorOptions> = {
  ...HTTP_RULES,
  fixture: FIXTURE_RULE,
  seed: { ok: (value) => typeof value === 'number' && isSeed(value), wants: `a whole number from 0 to ${MAX_SEED}` },
  broker: { ...nonEmptyString, wants: 'a broker URL (mqtt://host:port)', secret: true },
  brokerTls: {
    ok: (value) =>
      typeof value === 'object' &&
      value !== null &&
      Object.entries(value).every(([key, field]) =>
        key === 'insecure' ? field === undefined || typeof field === 'boolean' : ['ca', 'cert', 'key', 'servername'].includes(key) && (field === undefined || (typeof field === 'string' && field !== '')),
      ),
    wants: '{ ca?, cert?, key?, servername?: non-empty strings, insecure?: boolean }',
  },
  mqttPort: port,
  mqttFallbackToFreePort: boolean,
  brokerThread: boolean,
  brokerAuth: boolean,
  insecureBroker: boolean,
  brokerTlsPort: port,
  brokerWsPort: port,
  mqttVersion: { ok: isMqttProtocolVersion, wants: MQTT_VERSION_WANTS },
  http: boolean,
  onProgress: callback,
  maxHeartbeatRate: { ok: (value) => typeof value === 'number' && Number.isFinite(value) && value >= 0, wants: 'a number of at least 0 (0: no cap)' },
  record: { ...nonEmptyString, wants: 'a file path' },
  shard: {
    ok: (value) => typeof value === 'object' && value !== null && 'index' in value && 'count' in value,
    wants: '{ index, count } (shard index of count, 1-based)',
  },
};

/** The options `startApiProcess` takes: the HTTP side, its fixture and the broker. */
const API_PROCESS_RULES: Rules<HttpOptions & Pick<SimulatorOptions, 'fixture' | 'broker' | 'brokerTls' | 'mqttVersion'>> = {
  ...HTTP_RULES,
  fixture: SIMULATOR_RULES.fixture,
  broker: SIMULATOR_RULES.broker,
  brokerTls: SIMULATOR_RULES.brokerTls,
  mqttVersion: SIMULATOR_RULES.mqttVersion,
};

/** What is wrong with one option's value: what the option takes, or a message of its own. */
export interface OptionProblem {
  /** What the option takes, e.g. "a whole number from 0 to 65535". */
  wants: string;
  /** The value must not be shown (a token, a URL with credentials). */
  secret: boolean;
  /** A whole message of its own, where `wants` alone would not say (a field of an object). */
  message?: string;
}

/**
 * The problem with `value` as `startSimulator`'s option `name`, or undefined when there is none (an
 * option set to `undefined` counts as left out): for a caller that names the option its own way, as
 * the CLI does with its flags, so that both refuse the same values.
 */
export function simulatorOptionProblem<K extends keyof SimulatorOptions>(name: K, value: unknown): OptionProblem | undefined {
  return ruleProblem(SIMULATOR_RULES[name], value);
}

/** "`name` must be `wants`, not `value`": one wording for every option, whatever names it. */
export function optionMessage(name: string, problem: OptionProblem, value: unknown): string {
  return problem.message ?? `${name} must be ${problem.wants}${problem.secret ? '' : `, not ${shown(value)}`}`;
}

function ruleProblem(rule: OptionRule, value: unknown): OptionProblem | undefined {
  if (value === undefined || rule.ok(value)) return undefined;
  const message = rule.problem?.(value);
  return { wants: rule.wants, secret: rule.secret === true, ...(message ? { message } : {}) };
}

/**
 * DESIGN.md, trust model: loopback only by default, open there as a local emulator is; bound to
 * any other address, the control plane (which opens any lock and resets the fleet) needs its token
 * unless the caller says otherwise in as many words. True when `options` leave it open that way.
 */
export function exposesControl(options: Pick<HttpOptions, 'host' | 'controlToken' | 'insecureControl'>): boolean {
  return !(options.host === undefined || isLoopbackHost(options.host) || options.controlToken !== undefined || options.insecureControl === true);
}

/** Refuses options `startSimulator` cannot run with, naming the option; an option set to `undefined` counts as left out. */
export function checkSimulatorOptions(options: unknown): asserts options is SimulatorOptions {
  check('startSimulator', options, SIMULATOR_RULES);
  if ((options as SimulatorOptions).http !== false) checkControlExposure(options as SimulatorOptions);
}

/** As checkSimulatorOptions, for `startApiProcess`. */
export function checkApiProcessOptions(options: unknown): asserts options is HttpOptions & Pick<SimulatorOptions, 'fixture' | 'broker' | 'brokerTls' | 'mqttVersion'> {
  check('startApiProcess', options, API_PROCESS_RULES);
  checkControlExposure(options as HttpOptions);
}

/** Refuses a control plane open beyond loopback (`exposesControl`). */
function checkControlExposure(options: HttpOptions): void {
  if (!exposesControl(options)) return;
  throw new SimError(
    'BAD_REQUEST',
    `host "${options.host}" lets other machines reach the control plane, which opens any lock and resets the fleet: give controlToken, or insecureControl: true to leave it open to everyone who can reach it`,
  );
}

function check(caller: string, options: unknown, rules: Readonly<Record<string, OptionRule>>): void {
  if (typeof options === 'string') {
    // The one mistake a path invites: startSimulator('fixture.json') would otherwise run the demo fixture.
    throw new SimError('BAD_REQUEST', `${caller} takes an options object, not a string: for a fixture file, ${caller}({ fixture: ${JSON.stringify(options)} })`);
  }
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new SimError('BAD_REQUEST', `${caller} takes an options object (or nothing), not ${shown(options)}`);
  }
  for (const [name, value] of Object.entries(options)) {
    const rule = rules[name];
    if (!rule) throw new SimError('BAD_REQUEST', `${caller} has no option ${JSON.stringify(name)}; it takes ${Object.keys(rules).join(', ')}`);
    const problem = ruleProblem(rule, value);
    if (problem) throw new SimError('BAD_REQUEST', optionMessage(name, problem, value));
  }
}

/** A value as a message shows it: strings quoted, so `"7"` reads as the string it is. */
export function shown(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'object' && value !== null) return 'an object';
  return String(value);
}
