/**
 * Options shared by several commands, declared once as groups that yargs takes as they are
 * (`yargs.options(group)`) and from which tsc infers the parsed types (`FlagsOf`): a command spreads
 * the groups it has into one list, and its handler sees exactly the flags that list declares.
 * Every start of the CLI reads these declarations, so this module stays light; the handlers read
 * and check the values with option-checks.ts.
 */
import type { InferredOptionType, InferredOptionTypes, Options, PositionalOptions } from 'yargs';
import { UsageError } from './output.js';
import { DEFAULT_LOG_MAX_FILES, DEFAULT_LOG_MAX_REQUESTS_PER_SECOND, MAX_LOG_FILES } from '../service/http/logger-settings.js';

/**
 * The Redis URL of the session store, when `--state` is not given: a password in `--state` shows
 * in the process list (`ps`) to every user of the machine, while the environment does not.
 */
export const STATE_URL_ENV = 'STATION_SIM_STATE_URL';

export const DEFAULT_MQTT_PORT = 1883;
export const DEFAULT_HTTP_PORT = 8080;

/** Options as `yargs.options()` takes them, by flag name; declared `as const satisfies OptionGroup`. */
export type OptionGroup = Record<string, Options>;

/** What the flags of a group parse to: a handler's argv, and no flag that the group does not declare. */
export type FlagsOf<G extends OptionGroup> = InferredOptionTypes<G>;

/** Some of a group's flags, as a helper reads them (a test passes only those it is about). */
export type GivenFlags<G extends OptionGroup> = Partial<FlagsOf<G>>;

/** A command's positionals as `yargs.positional(name, options)` takes them, by name; declared `as const satisfies PositionalGroup`. */
export type PositionalGroup = Record<string, PositionalOptions>;

/** What a command's positionals parse to, as `FlagsOf` for its options. */
export type PositionalsOf<G extends PositionalGroup> = { [name in keyof G]: InferredOptionType<G[name]> };

export const FIXTURE_OPTIONS = {
  fixture: {
    alias: 'f',
    type: 'string',
    describe: 'Fixture file describing the fleet and accounts (default: the bundled demo fixture)',
  },
} as const satisfies OptionGroup;

export const SEED_OPTIONS = {
  // A string, not a number: yargs turns `--seed abc` into NaN, and the usage line should echo what was typed.
  seed: { type: 'string', describe: "Seed of the random source, 0 to 2147483647 (overrides the fixture's seed)" },
} as const satisfies OptionGroup;

export const JSON_OPTIONS = {
  json: { type: 'boolean', default: false, describe: 'Print the ready line as one JSON line' },
} as const satisfies OptionGroup;

export const HOST_OPTIONS = {
  host: { type: 'string', default: '127.0.0.1', describe: 'Interface to bind servers to' },
} as const satisfies OptionGroup;

export const MQTT_PORT_OPTIONS = {
  'mqtt-port': {
    type: 'number',
    describe: `Port of the embedded MQTT broker; 0 picks a free one (default ${DEFAULT_MQTT_PORT}, or a free port if that is taken)`,
  },
} as const satisfies OptionGroup;

export const BROKER_THREAD_OPTIONS = {
  'broker-thread': {
    type: 'boolean',
    default: true,
    describe: 'Run the embedded broker on a thread of its own (--no-broker-thread: on the main thread, for debugging)',
  },
} as const satisfies OptionGroup;

/** The fleet's heartbeat budget (src/fleet/heartbeat-budget.ts). */
export const HEARTBEAT_OPTIONS = {
  'max-heartbeat-rate': {
    type: 'number',
    describe: 'Heartbeats a second the fleet publishes at most; past it every station beats less often by the same factor, said at start (0: no cap; default 1000)',
  },
} as const satisfies OptionGroup;

/** The embedded broker's security (docs/mqtt-security.md, "The embedded broker, secured"). */
export const BROKER_SECURITY_OPTIONS = {
  'broker-auth': {
    type: 'boolean',
    describe: "Embedded broker: require every MQTT client to authenticate as one of the fixture's identities (on by default when the fixture has mqtt.identities or mqtt.certs)",
  },
  'insecure-broker': {
    type: 'boolean',
    default: false,
    describe: 'Embedded broker: run without authentication on a --host other than loopback (refused otherwise, as Mosquitto 2 does)',
  },
  'broker-tls-port': { type: 'number', describe: "Embedded broker: port of an MQTT-over-TLS listener, with the fixture's mqtt.certs; 0 picks a free one" },
  'broker-ws-port': { type: 'number', describe: 'Embedded broker: port of an MQTT-over-WebSocket listener (wss with mqtt.certs); 0 picks a free one' },
} as const satisfies OptionGroup;

/** TLS to an external broker (docs/mqtt-security.md, "Connections"); each wins over the fixture's `mqtt` section. */
const BROKER_TLS_OPTIONS = {
  'broker-ca': { type: 'string', describe: "CA bundle (PEM file) an mqtts:// or wss:// broker's certificate must chain to (default: the fixture's, else the system CAs)" },
  'broker-cert': { type: 'string', describe: 'Client certificate (PEM file) of the API and control plane; stations take theirs from the fixture' },
  'broker-key': { type: 'string', describe: 'Private key (PEM file) of --broker-cert' },
  'broker-servername': { type: 'string', describe: "Host name the broker's certificate must carry (default: the URL's host)" },
  insecure: { type: 'boolean', describe: "Do not verify the broker's certificate (says so on stderr at start); for test brokers only" },
  // A string, as --seed: yargs reads `--mqtt-version five` as NaN, and the usage line should echo what was typed.
  'mqtt-version': {
    type: 'string',
    describe: "MQTT protocol of every party on the external broker: 4 (MQTT 3.1.1) or 5 (MQTT 5.0); needs --broker, the embedded broker speaks 3.1.1 only (default: the fixture's mqtt.protocolVersion, else 4)",
  },
} as const satisfies OptionGroup;

const BROKER_OPTION = {
  type: 'string',
  describe:
    'URL of an external MQTT broker (mqtt://, mqtts://, ws:// or wss://[user:pass@]host:port); STATION_SIM_BROKER_USERNAME and STATION_SIM_BROKER_PASSWORD give the credentials instead, out of the process list',
  coerce: (value: string): string => {
    if (value.trim() === '') throw new UsageError('--broker needs a URL, e.g. mqtt://127.0.0.1:1883');
    return brokerUrlWithCredentials(value, process.env);
  },
} as const satisfies Options;

/** An external broker, optional (`up`: without it, the embedded one), with its TLS options. */
export const BROKER_OPTIONS = { ...BROKER_TLS_OPTIONS, broker: BROKER_OPTION } as const satisfies OptionGroup;

/** An external broker that the command cannot do without (`stations`, `api`), with its TLS options. */
export const REQUIRED_BROKER_OPTIONS = {
  ...BROKER_TLS_OPTIONS,
  broker: { ...BROKER_OPTION, demandOption: 'give the broker URL, e.g. --broker mqtt://127.0.0.1:1883' },
} as const satisfies OptionGroup;

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

/** What `--http-port` defaults to: 8080 with a fallback (`up`, `api`), or always a free port (`run`). */
export type HttpPortDefault = 'default-port' | 'free-port';

/** The HTTP side's options; only the help of `--http-port` depends on its default. */
export function httpOptionGroup(portDefault: HttpPortDefault) {
  const where = 'Port of the HTTP server (/v1 API and /sim/v1 control plane)';
  return {
    'http-port': {
      type: 'number',
      describe:
        portDefault === 'free-port'
          ? `${where} (default: a free one; a port given that is taken is an error)`
          : `${where}; 0 picks a free one (default ${DEFAULT_HTTP_PORT}, or a free port if that is taken)`,
    },
    'control-token': {
      type: 'string',
      describe: 'Require "Authorization: Bearer <token>" on /sim/v1 (or set STATION_SIM_CONTROL_TOKEN, which keeps it out of the process list)',
    },
    'insecure-control': {
      type: 'boolean',
      describe: 'With --host other than loopback and no control token: serve /sim/v1 open to everyone who can reach it (refused without this)',
    },
    'access-ttl': { type: 'number', describe: "Access token lifetime in seconds (default: the fixture's, 3600)" },
    'refresh-ttl': { type: 'number', describe: "Refresh token lifetime in seconds (default: the fixture's, 2592000)" },
    'session-max-lifetime': {
      type: 'number',
      describe: "Absolute session lifetime in seconds, however often it is refreshed; at least --refresh-ttl (default: the fixture's, 7776000 = 90 days)",
    },
    state: {
      type: 'string',
      describe: `Keep sessions in Redis, shared by API processes and kept across restarts: redis://[:password@]host:port[/db] or rediss://… (or set ${STATE_URL_ENV}, which keeps the password out of the process list; default: the fixture's api.state, else memory)`,
    },
    'command-timeout': { type: 'number', describe: "How long an unlock waits for the station's ack, ms (default: the fixture's, 5000)" },
    'login-throttle': {
      type: 'boolean',
      describe: "Throttle failed logins per client address and per email with 429 (default: the fixture's, on); --no-login-throttle for load tests",
    },
    log: { type: 'boolean', default: false, describe: 'Log API requests as JSON lines on stderr, sampled under load (tokens and bodies are never logged)' },
    'log-file': { type: 'string', describe: 'Write the API log to this file instead of stderr (implies --log); appended to, and rotated at --log-max-size' },
    'log-max-size': {
      // A string: "10m" is a size, and the usage line should echo what was typed.
      type: 'string',
      describe: 'Size at which --log-file is rotated to FILE.1 (FILE.1 to FILE.2…): bytes, or with k, m or g (KiB, MiB, GiB), at least 1k (default 10m)',
    },
    'log-files': { type: 'string', describe: `Rotated files of --log-file kept, 1 to ${MAX_LOG_FILES}; the disk used stays under about size × (this + 1) (default ${DEFAULT_LOG_MAX_FILES})` },
    'log-requests-per-second': {
      type: 'string',
      describe: `Requests a second whose lines are logged; the lines of the others are dropped and counted in one line a second. Warnings, errors and 5xx are always logged; 0 logs every request (default ${DEFAULT_LOG_MAX_REQUESTS_PER_SECOND})`,
    },
  } as const satisfies OptionGroup;
}

/** The HTTP side's options with `--http-port` 8080 by default (`up`, `api`). */
export const HTTP_OPTIONS = httpOptionGroup('default-port');

/** The flags `httpOptions` reads: the HTTP side's, and `--host` where the command has it. */
export type HttpFlags = GivenFlags<typeof HTTP_OPTIONS> & GivenFlags<typeof HOST_OPTIONS>;

export const TIME_OPTIONS = {
  record: { type: 'string', describe: 'Write a transcript of every MQTT message and API request (JSON lines) to this file' },
  'time-scale': { type: 'number', describe: 'Run station behaviour, scenario timelines and token lifetimes this many times faster' },
  clock: {
    choices: ['system', 'manual'],
    default: 'system',
    describe: 'manual: simulated time stands still until POST /sim/v1/clock/advance moves it',
  },
} as const satisfies OptionGroup;

/** `--judge-report FILE`: the judge's findings as JUnit XML at stop (docs/judge.md). */
export const JUDGE_REPORT_OPTIONS = {
  'judge-report': {
    type: 'string',
    describe: "Write the judge's verdict as JUnit XML to this file (one test case per rule, failed when broken), for CI; up, run and stations write it when they stop",
  },
} as const satisfies OptionGroup;

/** `--judge`: `off` says nothing of the judge at stop; `report` (the default) the line; `strict` also fails `run` on a finding. */
const JUDGE_MODES = ['off', 'report', 'strict'] as const;
export type JudgeMode = (typeof JUDGE_MODES)[number];

/** `--judge off|report|strict`, `run`'s own: what the judge's findings do to the run. */
export const JUDGE_MODE_OPTIONS = {
  judge: {
    choices: JUDGE_MODES,
    default: 'report',
    describe: 'report: the judge line at stop; strict: also exit 3 when the command passed but a rule was broken; off: say nothing of the judge',
  },
} as const satisfies OptionGroup;

/** The flags `judgeOutletsOf` reads: `--judge` where the command has it (`run`), and `--judge-report`. */
export type JudgeOutletFlags = GivenFlags<typeof JUDGE_MODE_OPTIONS> & GivenFlags<typeof JUDGE_REPORT_OPTIONS>;
