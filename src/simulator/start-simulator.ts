/**
 * The whole simulator in one call (DESIGN.md rule 4): the embedded broker (or an external one),
 * the fleet, and the `/v1` API. This is the library entry point for test suites and what
 * `station-sim up` runs.
 */
import { randomUUID } from 'node:crypto';
import { startEmbeddedBroker, type StartedBroker } from '../broker/embedded-broker.js';
import { startBrokerThread } from '../broker/broker-thread.js';
import { embeddedBrokerSettings } from '../broker/broker-settings.js';
import { DEFAULT_MAX_HEARTBEATS_PER_SECOND, heartbeatBudget, heartbeatNotice } from '../fleet/heartbeat-budget.js';
import { requireSharedJwtSecret } from '../service/auth/jwt-secret.js';
import { startFleet, type StartedFleet } from '../fleet/start-fleet.js';
import { isSeed, MAX_SEED, type Fixture } from '../fixture/fixture-schema.js';
import { isSecureScheme, parseBrokerUrl, type MqttTransport } from '../mqtt/transport.js';
import { loadIdentities, type MqttIdentities } from '../mqtt/identity.js';
import { redactUrl } from '../shared/redact-url.js';
import { ManualClock, scaledClock, systemClock, type Clock } from '../shared/clock.js';
import { seededUuids } from '../shared/seeded-ids.js';
import { SimError } from '../errors.js';
import { MQTT5_NEEDS_EXTERNAL_BROKER, embeddedBrokerVersionNotice } from '../mqtt/mqtt-version.js';
import { checkApiProcessOptions, checkSimulatorOptions, type HttpOptions, type SimulatorOptions } from './simulator-options.js';
import { resolveFixture } from './resolve-fixture.js';
import { startTranscript, type StartedTranscript } from '../transcript/transcript-recorder.js';
import { startApi, type StartedApi } from '../service/start-api.js';
import type { ApiLoggerOption } from '../service/build-api.js';
import { openLogFileOf } from '../service/http/request-logging.js';
import { startControl, type StartedControl } from '../control/start-control.js';
import { stationWatchSpec } from './station-watch-spec.js';

// The options are declared with the rules that check them (simulator-options.ts); callers of
// startSimulator take them from here.
export type { HttpOptions, SimulatorOptions } from './simulator-options.js';

/** The stations of one shard: every `count`-th station of the fixture, starting at `index - 1`. */
export function shardStations<T>(stations: T[], shard: { index: number; count: number } | undefined): T[] {
  if (!shard) return stations;
  if (!Number.isInteger(shard.count) || shard.count < 1 || !Number.isInteger(shard.index) || shard.index < 1 || shard.index > shard.count) {
    throw new SimError('BAD_REQUEST', `shard ${shard.index}/${shard.count} is not valid: use k/n with 1 <= k <= n`);
  }
  return stations.filter((_, i) => i % shard.count === shard.index - 1);
}

/** The HTTP side, running: the API server with the control plane on it. */
export interface StartedHttp {
  /** Base URL of the `/v1` API. */
  readonly apiUrl: string;
  /** Base URL of the control plane, `{apiUrl}/sim/v1`. */
  readonly controlUrl: string;
  readonly api: StartedApi;
  readonly control: StartedControl;
}

/**
 * A running simulator; `stop()` shuts every part down and leaves no handle open. `WithHttp` is
 * `true` when it was started with the HTTP side (the default: `startSimulator` returns
 * `StartedSimulator<true>` unless `http` may be `false`), so `apiUrl` is a `string` then, and
 * `createClient({ baseUrl: sim.apiUrl })` type-checks.
 */
export interface StartedSimulator<WithHttp extends boolean = boolean> {
  /** Simulated time; `advance` works when started with `clock: "manual"`. */
  readonly clock: SimulatorClock;
  readonly fixture: Fixture;
  readonly seed: number;
  /** Where MQTT clients connect (credentials, if any, removed). */
  readonly mqttUrl: string;
  readonly fleet: StartedFleet;
  /** The embedded broker, when there is one. */
  readonly broker: StartedBroker | undefined;
  /** The API and control plane, unless started with `http: false`. */
  readonly http: WithHttp extends true ? StartedHttp : StartedHttp | undefined;
  /** Shorthands for `http.apiUrl` and `http.controlUrl`. */
  readonly apiUrl: WithHttp extends true ? string : string | undefined;
  readonly controlUrl: WithHttp extends true ? string : string | undefined;
  stop(): Promise<void>;
}

/** The simulator's time source, as tests see it. */
export interface SimulatorClock extends Clock {
  readonly manual: boolean;
  /**
   * Moves a manual clock forward, firing every timer due on the way, then lets the resulting MQTT
   * traffic flow. Rejects with `CLOCK_NOT_MANUAL` on any other clock.
   */
  advance(ms: number): Promise<void>;
  /**
   * Something else `advance` waits for on each turn it gives MQTT traffic (the scenario's due
   * steps, so that they are in effect when `advance` returns). @internal
   */
  settleAlso(settle: () => Promise<void>): void;
}

/**
 * Builds the clock asked for, from options already checked (`checkSimulatorOptions`). `settle` is
 * awaited on each turn that `advance` gives MQTT traffic, so messages through a broker on another
 * thread arrive too.
 */
export function makeClock(option: HttpOptions['clock'], timeScale = 1, settle?: () => Promise<void>): SimulatorClock {
  // A manual clock moves only when told, and a clock of the caller's own runs as it runs: a time
  // scale would be silently ignored by either.
  if (timeScale !== 1 && option !== undefined && option !== 'system') {
    throw new SimError('BAD_REQUEST', `timeScale works with the system clock only, not with ${option === 'manual' ? 'clock: "manual"' : 'a clock of your own'}`);
  }
  const inner: Clock | ManualClock =
    option === 'manual' ? new ManualClock(Date.now()) : option === undefined || option === 'system' ? (timeScale === 1 ? systemClock : scaledClock(timeScale)) : option;
  const manual = inner instanceof ManualClock;
  const settlers = settle ? [settle] : [];
  const settleAll = async (): Promise<void> => {
    for (const settler of settlers) await settler();
  };
  return {
    manual,
    now: () => inner.now(),
    setTimeout: (callback, ms) => inner.setTimeout(callback, ms),
    clearTimeout: (handle) => inner.clearTimeout(handle),
    settleAlso: (more) => {
      settlers.push(more);
    },
    advance: async (ms) => {
      if (!(inner instanceof ManualClock)) throw new SimError('CLOCK_NOT_MANUAL');
      if (!(Number.isFinite(ms) && ms >= 0)) throw new SimError('BAD_REQUEST', 'ms must be a finite number of at least 0');
      // A long advance goes a minute of simulated time at a time, and lets each minute's MQTT
      // traffic flow before the next: in one pass, hours of heartbeats and battery reports of a
      // fleet would all wait in memory at once (gigabytes).
      for (let left = ms; ; ) {
        const step = Math.min(left, ADVANCE_STEP_MS);
        inner.advance(step);
        left -= step;
        if (left <= 0) break;
        await new Promise((resolve) => setImmediate(resolve));
        await settleAll();
      }
      // Timers that fired published over MQTT; give those messages a few turns to arrive.
      for (let turn = 0; turn < 10; turn += 1) {
        await new Promise((resolve) => setImmediate(resolve));
        await settleAll();
      }
    },
  };
}

/** How much simulated time `advance` moves before it lets MQTT traffic flow. */
const ADVANCE_STEP_MS = 60_000;

/** An API process without a fleet (`station-sim api`): stations run elsewhere on the same broker. */
export interface StartedApiProcess extends StartedHttp {
  readonly fixture: Fixture;
  readonly mqttUrl: string;
  stop(): Promise<void>;
}

/** Runs cleanups in reverse order of registration. */
class Cleanups {
  readonly #steps: (() => Promise<void>)[] = [];
  #running: Promise<void> | undefined;

  add(step: () => Promise<void>): void {
    this.#steps.push(step);
  }

  /**
   * Runs every step, last added first, once: a second call (two `stop()`s at once) waits for the
   * same run. A step that fails does not keep the later ones from running; the first failure is
   * thrown at the end.
   */
  readonly run = (): Promise<void> => {
    this.#running ??= this.#runAll();
    return this.#running;
  };

  async #runAll(): Promise<void> {
    let failure: { error: unknown } | undefined;
    for (const step of this.#steps.splice(0).reverse()) {
      try {
        await step();
      } catch (error) {
        failure ??= { error };
      }
    }
    if (failure) throw failure.error;
  }
}

/** The embedded broker, or the external one given. */
async function connectBroker(
  options: Pick<
    SimulatorOptions,
    'broker' | 'mqttVersion' | 'mqttPort' | 'host' | 'mqttFallbackToFreePort' | 'brokerThread' | 'onNotice' | 'brokerAuth' | 'insecureBroker' | 'brokerTlsPort' | 'brokerWsPort'
  >,
  cleanups: Cleanups,
  fixture?: Fixture,
): Promise<{ transport: MqttTransport; mqttUrl: string; broker: StartedBroker | undefined }> {
  // The option wins over the fixture's mqtt.protocolVersion; either applies to an external broker only.
  const version = options.mqttVersion ?? fixture?.mqtt?.protocolVersion;
  if (options.broker) {
    const transport: MqttTransport = { kind: 'tcp', url: options.broker, ...(version === undefined ? {} : { protocolVersion: version }) };
    return { transport, mqttUrl: redactUrl(options.broker), broker: undefined };
  }
  // The embedded broker (aedes) speaks MQTT 3.1.1 only: asked for 5 in so many words, refuse; asked
  // by the fixture (which may also serve runs against an external broker), say so and run 3.1.1.
  if (options.mqttVersion === 5) throw new SimError('BAD_REQUEST', MQTT5_NEEDS_EXTERNAL_BROKER);
  if (options.mqttVersion === undefined && fixture?.mqtt?.protocolVersion === 5) options.onNotice?.(embeddedBrokerVersionNotice(fixture.source));
  const host = options.host ?? '127.0.0.1';
  // Authentication, ACLs, TLS and WebSocket listeners as the fixture and options say; open beyond loopback only when asked.
  const { settings, warning } = embeddedBrokerSettings(fixture ?? { source: '<none>', stations: [], mqtt: {} }, {
    host,
    ...(options.brokerAuth === undefined ? {} : { auth: options.brokerAuth }),
    ...(options.insecureBroker === undefined ? {} : { insecure: options.insecureBroker }),
    ...(options.brokerTlsPort === undefined ? {} : { tlsPort: options.brokerTlsPort }),
    ...(options.brokerWsPort === undefined ? {} : { wsPort: options.brokerWsPort }),
  });
  if (warning) options.onNotice?.(warning);
  const where = {
    port: options.mqttPort ?? 0,
    host,
    fallbackToFreePort: options.mqttFallbackToFreePort ?? false,
    ...settings,
  };
  const broker =
    options.brokerThread === false
      ? await startEmbeddedBroker(where)
      : await startBrokerThread({ ...where, onError: (error) => options.onNotice?.(`the embedded broker's thread failed: ${error.message}`) });
  cleanups.add(() => broker.stop());
  return { transport: { kind: 'memory', broker }, mqttUrl: broker.url, broker };
}

/**
 * Every party's identity (identity.ts), and the transport with the broker's TLS settings. Into the
 * embedded broker in this process, no password is read: it authenticates those sessions by
 * construction. `--insecure` is said on stderr, once, at start.
 */
async function identitiesFor(
  fixture: Fixture,
  transport: MqttTransport,
  mqttUrl: string,
  options: Pick<SimulatorOptions, 'brokerTls' | 'onNotice'>,
): Promise<{ identities: MqttIdentities; transport: MqttTransport }> {
  const secure = transport.kind === 'tcp' && isSecureScheme(parseBrokerUrl(transport.url).scheme);
  const identities = await loadIdentities({
    settings: fixture.mqtt,
    fixtureSource: fixture.source,
    secure,
    passwords: transport.kind === 'tcp',
    ...(options.brokerTls ? { overrides: options.brokerTls } : {}),
  });
  if (secure && options.brokerTls?.insecure) {
    options.onNotice?.(`--insecure: the certificate of the MQTT broker at ${mqttUrl} is not verified; anyone on the way to it can pose as the broker`);
  }
  return { identities, transport: transport.kind === 'tcp' ? { ...transport, tls: identities.tls } : transport };
}

/** What the control plane and the API are started with: the fixture, the broker reached, the clock, the options, and where their stops go. */
interface HttpContext {
  fixture: Fixture;
  transport: MqttTransport;
  mqttUrl: string;
  identities: MqttIdentities;
  clock: SimulatorClock;
  options: HttpOptions;
  cleanups: Cleanups;
}

/** The control plane's channel and event hub; started before the fleet so they see it come up. */
async function startControlFor(context: HttpContext & { broker?: StartedBroker | undefined; seed?: number }): Promise<StartedControl> {
  const { fixture, transport, mqttUrl, identities, clock, options, cleanups, broker, seed } = context;
  const control = await startControl({
    transport,
    mqttUrl,
    identity: await identities.control(),
    fixture,
    ...(seed === undefined ? {} : { seed }),
    clock,
    ...(broker ? { tap: broker.tap, brokerRefusals: broker } : {}),
    ...(options.controlToken === undefined ? {} : { controlToken: options.controlToken }),
    ...(options.onNotice ? { onScenarioError: options.onNotice } : {}),
  });
  cleanups.add(() => control.stop());
  return control;
}

/** The API server with the control plane on it, listening; starts the scenario timeline. */
async function serveHttp(
  context: HttpContext & { control: StartedControl; commandIds?: () => string; transcript?: StartedTranscript | undefined },
): Promise<StartedHttp> {
  const { fixture, transport, identities, mqttUrl, clock, control, options, cleanups, commandIds, transcript } = context;
  const api = await startApi({
    fixture,
    // Token lifetimes follow simulated time, so a manual clock can expire them instantly.
    clock,
    mqttUrl,
    port: options.httpPort ?? 0,
    host: options.host ?? '127.0.0.1',
    fallbackToFreePort: options.fallbackToFreePort ?? false,
    gateway: { transport, clock, identity: await identities.service(), ...(commandIds ? { commandIds } : {}) },
    beforeListen: (app, gateway) => control.register(app, { gatewayRefused: () => gateway.refusedMessages, gatewayBrokerRefused: () => gateway.brokerRefusals }),
    // The client rules' findings join the fleet's in the control plane's judge log (docs/judge.md).
    onJudgeFinding: (finding) => control.hub.emit({ type: 'judge.finding', ...finding }),
    // A reset between tests is a new start for the client rules' counts (docs/judge.md).
    onReset: (listener) => {
      // Control events only: a listener of every type would make the hub build every event of
      // every unlock for nobody (event-hub.ts, `listening`).
      control.hub.subscribe((event) => {
        if (event.type === 'control' && event.action === 'reset') listener();
      }, ['control']);
    },
    // A transcript keeps each request as the judge saw it, so `transcript judge` can judge it again.
    ...(transcript ? { onClientObservation: transcript.recordClientRequest } : {}),
    ...pick(options, ['accessTokenTtlSeconds', 'refreshTokenTtlSeconds', 'sessionMaxLifetimeSeconds', 'state', 'commandTimeoutMs', 'loginThrottle', 'logger']),
    // The session store's "lost" and "back" lines go where the simulator's other notices go.
    ...(options.onNotice ? { onSessionStoreNotice: options.onNotice } : {}),
  });
  cleanups.add(() => api.stop());
  control.startScenario();
  // A manual advance returns once the scenario steps it made due are in effect.
  clock.settleAlso(() => control.scenarioSettled());
  // Cleanups run last-added first: the scenario stops before anything else does, so a step due
  // during shutdown cannot reset or reconnect stations that are being stopped.
  cleanups.add(async () => control.stopScenario());
  return { api, control, apiUrl: api.url, controlUrl: `${api.url}/sim/v1` };
}

/**
 * Starts the simulator. Its options are checked first (simulator-options.ts): a wrong one, or a
 * string in place of the options, is refused with `BAD_REQUEST` naming it, before anything starts.
 * A start that fails later stops whatever it had started.
 */
/**
 * What a backend must know under `timeScale` (docs/judge.md, "Time scale"): stations judge a
 * command's `sentAt` by the simulated clock, which a backend stamping the wall clock cannot know,
 * so its commands would look stale and be refused. Said once at start.
 */
export function timeScaleNotice(timeScale: number | undefined): string | undefined {
  if (timeScale === undefined || timeScale === 1) return undefined;
  return (
    `time scale ${timeScale}: stations check a command's sentAt against simulated time, which runs ${timeScale}× the wall clock; ` +
    'a backend must stamp sentAt from GET /sim/v1/clock (its `now`), not its own clock, or its commands are refused as expired and judged service.stale-sent-at'
  );
}

/** Command ids of this process's gateway remembered for the fleet's judge: far more than are ever in flight. */
const GATEWAY_COMMANDS_KEPT = 100_000;

export function startSimulator(options?: SimulatorOptions & { http?: true }): Promise<StartedSimulator<true>>;
export function startSimulator(options?: SimulatorOptions): Promise<StartedSimulator>;
export async function startSimulator(options: SimulatorOptions = {}): Promise<StartedSimulator> {
  checkSimulatorOptions(options);
  const fixture = await resolveFixture(options.fixture);
  const seed = options.seed ?? fixture.seed;
  // The random source keeps 32 bits of the seed: a larger one would replay a smaller one.
  if (!isSeed(seed)) throw new SimError('BAD_REQUEST', `seed must be a whole number from 0 to ${MAX_SEED}, not ${seed}`);
  // A shared session store needs a shared key (the CLI says so earlier, naming its flag).
  if (options.http !== false) requireSecretForStore(options.state, fixture);
  const cleanups = new Cleanups();
  try {
    options = { ...options, logger: await openLogFileFirst(options, cleanups) };
    const connected = await connectBroker(options, cleanups, fixture);
    const { mqttUrl, broker } = connected;
    const { identities, transport } = await identitiesFor(fixture, connected.transport, mqttUrl, options);
    const clock = makeClock(options.clock, options.timeScale, broker?.sync);
    const scaleNotice = timeScaleNotice(options.timeScale);
    if (scaleNotice) options.onNotice?.(scaleNotice);
    const context: HttpContext = { fixture, transport, mqttUrl, identities, clock, options, cleanups };
    const control = options.http === false ? undefined : await startControlFor({ ...context, broker, seed });
    const stations = shardStations(fixture.stations, options.shard);
    // What only the embedded broker sees is judged there, for a fleet here (docs/judge.md, "What the broker sees").
    const brokerWatch = broker !== undefined && fixture.judge?.enabled !== false && stations.length > 0;
    let transcript: StartedTranscript | undefined;
    if (options.record !== undefined) {
      if (!control) throw new SimError('BAD_REQUEST', 'a transcript needs the control plane (do not combine record with http: false)');
      const started = await startTranscript({
        path: options.record,
        hub: control.hub,
        clock,
        fleetStations: stations,
        judge: fixture.judge,
        protocolVersion: transport.kind === 'tcp' ? (transport.protocolVersion ?? 4) : 4,
        ...(brokerWatch ? { brokerWatch: { fixtureTokens: fixture.stations.map((station) => station.token) } } : {}),
        ...(options.onNotice ? { onNotice: options.onNotice } : {}),
      });
      transcript = started;
      cleanups.add(() => started.stop());
    }
    const maxHeartbeats = options.maxHeartbeatRate ?? DEFAULT_MAX_HEARTBEATS_PER_SECOND;
    const slowed = heartbeatNotice(stations.length, heartbeatBudget(stations, maxHeartbeats), maxHeartbeats);
    if (slowed) options.onNotice?.(slowed);
    // The command ids this process's gateway publishes, so the fleet's judge blames no service rule
    // on station-sim itself (docs/judge.md, "Who is blamed"); the oldest forgotten first.
    const gatewayCommands = new Set<string>();
    const fleet = await startFleet({
      stations,
      isGatewayCommand: (commandId) => gatewayCommands.has(commandId),
      maxHeartbeatsPerSecond: maxHeartbeats,
      ...(transcript ? { onCommand: transcript.recordCommand, onPublished: transcript.recordPublished } : {}),
      transport,
      identities,
      seed,
      clock,
      judge: fixture.judge,
      ...(fixture.mqtt?.mqtt5 === undefined ? {} : { mqtt5: fixture.mqtt.mqtt5 }),
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
    });
    cleanups.add(() => fleet.stop());
    if (brokerWatch) {
      // Classified on the broker's thread; only misdeeds come back, to the fleet's judge.
      const unwatch = await broker.watchStations(stationWatchSpec(fixture, stations), (misdeed) => fleet.judgePublished(misdeed));
      cleanups.add(unwatch);
    }
    control?.watchStations(fleet.stations.values());
    // Under a manual clock a run replays exactly, command ids included (docs/fixtures.md,
    // "Reproducible runs"); otherwise they are random, as two processes on one broker need.
    const issue = clock.manual ? seededUuids(seed) : randomUUID;
    const commandIds = (): string => {
      const id = issue();
      gatewayCommands.add(id);
      if (gatewayCommands.size > GATEWAY_COMMANDS_KEPT) gatewayCommands.delete(gatewayCommands.values().next().value as string);
      return id;
    };
    const http = control ? await serveHttp({ ...context, control, commandIds, transcript }) : undefined;
    return { clock, fixture, seed, mqttUrl, fleet, broker, http, apiUrl: http?.apiUrl, controlUrl: http?.controlUrl, stop: cleanups.run };
  } catch (error) {
    await cleanups.run();
    throw error;
  }
}

/** The `/v1` API and the control plane against an external broker, with no fleet of its own. */
export async function startApiProcess(
  options: HttpOptions & Pick<SimulatorOptions, 'fixture' | 'brokerTls' | 'mqttVersion'> & { broker: string },
): Promise<StartedApiProcess> {
  checkApiProcessOptions(options);
  const fixture = await resolveFixture(options.fixture);
  requireSecretForStore(options.state, fixture);
  const cleanups = new Cleanups();
  try {
    options = { ...options, logger: await openLogFileFirst(options, cleanups) };
    const connected = await connectBroker({ broker: options.broker, ...(options.mqttVersion === undefined ? {} : { mqttVersion: options.mqttVersion }) }, cleanups, fixture);
    const { mqttUrl } = connected;
    const { identities, transport } = await identitiesFor(fixture, connected.transport, mqttUrl, options);
    const clock = makeClock(options.clock, options.timeScale);
    const context: HttpContext = { fixture, transport, mqttUrl, identities, clock, options, cleanups };
    const control = await startControlFor(context);
    const http = await serveHttp({ ...context, control });
    return { ...http, fixture, mqttUrl, stop: cleanups.run };
  } catch (error) {
    await cleanups.run();
    throw error;
  }
}

/** A Redis session store from the options or the fixture's `api.state` needs `STATION_SIM_JWT_SECRET`. */
function requireSecretForStore(state: string | undefined, fixture: Fixture): void {
  if (state !== undefined) requireSharedJwtSecret('the state option', process.env);
  else if (fixture.api.state !== undefined) requireSharedJwtSecret("the fixture's api.state", process.env);
}

/**
 * The logger option with its file, if any, opened: first, so that a path that cannot be opened
 * fails start-up before the broker and fleet start, and closed last (cleanups run in reverse), after
 * the API and its gateway have written their final lines.
 */
async function openLogFileFirst(options: Pick<HttpOptions, 'logger' | 'onNotice'>, cleanups: Cleanups): Promise<ApiLoggerOption | undefined> {
  const { logger, onNotice } = options;
  if (typeof logger !== 'object' || logger.file === undefined) return logger;
  const { option, close } = await openLogFileOf(logger, onNotice);
  cleanups.add(close);
  return option;
}

/** The options of `keys` that are set, leaving unset ones out (for exact optional properties). */
function pick<T extends object, K extends keyof T>(source: T, keys: K[]): Partial<Pick<T, K>> {
  const picked: Partial<Pick<T, K>> = {};
  for (const key of keys) if (source[key] !== undefined) picked[key] = source[key];
  return picked;
}
