/**
 * Helpers for end-to-end suites (vitest, jest, node:test): a simulator to test against, attached
 * (the one `station-sim run` names in the environment) or owned (started here), logged-in clients,
 * and control over the simulator. Every control method goes over HTTP through the `ControlClient`,
 * so attached and owned helpers run the same code. Framework-neutral; `withSimulator`
 * (suite-hooks.ts) wires them into the suite's hooks.
 */
import { startSimulator, type SimulatorOptions, type StartedSimulator } from '../simulator/start-simulator.js';
import { resolveFixture } from '../simulator/resolve-fixture.js';
import { createClient, type StationSimClient } from '../client/index.js';
import { ControlClient } from '../client/control-client.js';
import type { EventFilter, FilteredEvent, SimEventIterator } from '../client/event-iterator.js';
import type { WaitOptions } from '../client/live-fleet.js';
import type { ClockReply, Fault, FaultSpec, LockStatus, ResetReply, SimEventType, SimStation, StationStatus } from '../client/sim-types.js';
import type { ApiFault, ApiFaultSpec, ControlVerifyExpectation, ControlVerifyQuery, JournalEntry } from '../client/journal-query.js';
import type { Fixture } from '../fixture/fixture-schema.js';
import { normaliseEmail } from '../service/auth/account-directory.js';
import { ATTACH_ENV, attachTarget, mismatch, ownOnlyOptions, type AttachTarget } from './attach.js';
import { registerAttached, sharedSimulatorLine, type AttachRegistration } from './attach-registry.js';

export interface TestSimulatorOptions extends SimulatorOptions {
  /**
   * Attach to the simulator named by `STATION_SIM_API_URL` (and `STATION_SIM_CONTROL_URL`,
   * `STATION_SIM_MQTT_URL`, `STATION_SIM_CONTROL_TOKEN`) when it is set, as under `station-sim run`.
   * `false` always starts one of the helper's own. It attaches only to a simulator that runs the
   * same fixture and clock, and when no option asks for one of its own (a seed, ports, `record`…);
   * otherwise it starts its own and says why.
   * @default true
   */
  attach?: boolean;
  /**
   * Leave out the one line on stderr that says whether the helper attached or started a simulator.
   * The line that says other helpers are attached to the same simulator at once is said anyway.
   * @default false
   */
  quiet?: boolean;
  /** Where the `STATION_SIM_*` variables are read from. @default process.env */
  env?: NodeJS.ProcessEnv;
  /** Where the one line goes. @default a line on process.stderr */
  log?: (line: string) => void;
}

export interface TestSimulator {
  /** `attached` to the simulator the environment names, or `owned`: started here, stopped by `stop()`. */
  readonly mode: 'attached' | 'owned';
  /** Base URL of the `/v1` API, e.g. `http://127.0.0.1:41234`. */
  readonly apiUrl: string;
  /** The control plane's URL, `{apiUrl}/sim/v1`, as `STATION_SIM_CONTROL_URL` holds it. */
  readonly controlUrl: string;
  /** Where MQTT clients connect. Attached, it is `STATION_SIM_MQTT_URL`; reading it throws when that is not set. */
  readonly mqttUrl: string;
  /** The typed client of `/sim/v1`: everything below, and the rest of the control plane. */
  readonly control: ControlClient;
  /** The fixture the helper was told (`fixture` option), whose accounts `login` uses. */
  readonly fixture: Fixture;
  /** The simulator started in this process. Owned helpers only: reading it on an attached one throws. */
  readonly sim: StartedSimulator<true>;
  /**
   * A logged-in reference client: the account `email` of the fixture (the first one unless given),
   * or any account when `password` is given too.
   */
  login(email?: string, password?: string): Promise<StationSimClient>;
  /** Every station back to the fixture's starting state, faults cleared (`POST /sim/v1/reset`). */
  reset(): Promise<ResetReply>;
  /** Puts a fault on a station: `addFault('CI-1', { kind: 'reject', count: 1 })`. */
  addFault(token: string, spec: FaultSpec): Promise<Fault>;
  /** Clears the faults of one station, or of every station when no token is given. */
  clearFaults(token?: string): Promise<void>;
  /** Takes a station offline (a real disconnect: its last will fires) or back online. */
  setOnline(token: string, online: boolean): Promise<SimStation>;
  /** Sets a station's battery voltage, in volts. */
  setBattery(token: string, volts: number): Promise<SimStation>;
  /** Someone jams the lock by hand: unlocks are refused with `Lock is jammed` until `unjam`. */
  jam(token: string, lockId: string): Promise<SimStation>;
  unjam(token: string, lockId: string): Promise<SimStation>;
  /** The station drops its connection, stays down `downMs` (default 2000), and reconnects. */
  reboot(token: string, downMs?: number): Promise<SimStation>;
  /** Moves a manual clock (`clock: 'manual'`, `--clock manual`) forward; rejects on any other clock. */
  advanceClock(ms: number): Promise<ClockReply>;
  /**
   * Resolves once the station is `status`, now or later. On timeout it rejects with what was seen
   * last, e.g. `station CI-2 did not become "online" within 2000 ms; last seen "offline"`.
   */
  waitForStation(token: string, status: StationStatus, options?: WaitOptions): Promise<void>;
  /**
   * Resolves once the lock is in `status` (now, or as soon as the station reports it). On timeout it rejects with a message that
   * says what was seen last, e.g. `lock CI-1/1 did not become "unlocked" within 2000 ms; last seen "locked"`.
   */
  waitForLock(token: string, lockId: string, status: LockStatus, options?: WaitOptions): Promise<void>;
  /** The event stream as an async iterator (see `ControlClient.events`); `stop()` closes any left open. */
  events<T extends SimEventType = Exclude<SimEventType, 'snapshot'>>(filter?: EventFilter<T>): SimEventIterator<FilteredEvent<T>>;
  /** The request journal's mark now: pass it as `since` to `verify` (see `ControlClient.verify`). */
  mark(): Promise<number>;
  /**
   * Which `/v1` requests and MQTT commands reached the simulator since a mark, WireMock-style:
   * `await sim().verify({ since: mark, route: 'POST /v1/stations/:station_token/locks/:lock_id/unlock', token: 'CI-1' }, { count: 1 })`.
   */
  verify(query: ControlVerifyQuery, expectation?: ControlVerifyExpectation): Promise<JournalEntry[]>;
  /** Faults the `/v1` API itself: `addApiFault({ route: 'GET /v1/stations/:station_token', kind: 'status', status: 401, count: 1 })`. */
  addApiFault(spec: ApiFaultSpec): Promise<ApiFault>;
  /** Removes every API fault (`reset()` does too). */
  clearApiFaults(): Promise<void>;
  /** Owned: stops the simulator. Attached: closes this helper's connections and leaves the simulator running. */
  stop(): Promise<void>;
}

/** The options only the helper reads; the rest go to `startSimulator`. */
type HelperOnly = 'attach' | 'quiet' | 'env' | 'log';

/**
 * A simulator for a test suite: attached to the one the environment names, or started here. Says
 * which in one line on stderr, e.g. `station-sim: attached to the simulator at
 * http://127.0.0.1:41234 (STATION_SIM_API_URL)`.
 */
export async function startTestSimulator(options: TestSimulatorOptions = {}): Promise<TestSimulator> {
  const { attach = true, quiet = false, env = process.env, log = (line: string) => process.stderr.write(`${line}\n`), ...simulatorOptions } = options;
  if (simulatorOptions.http === false) throw new TypeError('startTestSimulator needs the HTTP API: do not pass http: false');
  const say = (line: string): void => {
    if (!quiet) log(line);
  };
  const target = attachTarget(env, simulatorOptions.controlToken);
  let notAttached: string | undefined;
  if (target) {
    const ownOnly = ownOnlyOptions(simulatorOptions);
    if (!attach) notAttached = 'attach: false';
    else if (ownOnly.length > 0) notAttached = `${ownOnly.join(', ')} ${ownOnly.length === 1 ? 'asks' : 'ask'} for a simulator of its own`;
    else {
      const fixture = await resolveFixture(simulatorOptions.fixture);
      const control = new ControlClient({ url: target.controlUrl, ...(target.controlToken === undefined ? {} : { controlToken: target.controlToken }) });
      try {
        notAttached = await mismatch(control, target, fixture, simulatorOptions.clock);
      } catch (error) {
        control.close();
        throw error;
      }
      if (notAttached === undefined) {
        await watched(control);
        say(`station-sim: attached to the simulator at ${target.apiUrl} (${ATTACH_ENV.apiUrl})`);
        const registration = await registerAttached(target.apiUrl);
        // Said even when quiet: files that share a simulator without knowing it fail each other.
        if (registration.others.length > 0) log(sharedSimulatorLine(target.apiUrl, registration.others));
        return attached(target, control, fixture, registration);
      }
      control.close();
    }
  }
  const sim = await startSimulator(simulatorOptions as Omit<TestSimulatorOptions, HelperOnly> & { http?: true });
  const label = typeof simulatorOptions.fixture === 'string' ? simulatorOptions.fixture : simulatorOptions.fixture === undefined ? 'demo' : sim.fixture.source;
  const why = target && notAttached ? `; not attached to the one at ${target.apiUrl} (${ATTACH_ENV.apiUrl}): ${notAttached}` : '';
  const helper = owned(sim, simulatorOptions.controlToken);
  try {
    await watched(helper.control);
  } catch (error) {
    await helper.stop();
    throw error;
  }
  say(`station-sim: started a simulator at ${sim.apiUrl} (fixture ${label})${why}`);
  return helper;
}

/**
 * Opens the stream the waits read before any test acts, so a lock that opens and closes between
 * an unlock and the wait for it is still seen (live-fleet.ts). A stream that cannot open closes
 * the client: nothing of this helper is left running.
 */
async function watched(control: ControlClient): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      control.watch(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`the simulator's event stream sent no snapshot within ${WATCH_TIMEOUT_MS / 1000} s`)), WATCH_TIMEOUT_MS);
      }),
    ]);
  } catch (error) {
    control.close();
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

/** How long the helper's start waits for the event stream's first snapshot. */
const WATCH_TIMEOUT_MS = 30_000;

function attached(target: AttachTarget, control: ControlClient, fixture: Fixture, registration: AttachRegistration): TestSimulator {
  const { mqttUrl } = target;
  return {
    ...common(control, target.apiUrl, fixture),
    mode: 'attached',
    controlUrl: target.controlUrl,
    get mqttUrl(): string {
      if (mqttUrl === undefined) throw new Error(`${ATTACH_ENV.mqttUrl} is not set, so the attached helper does not know where the MQTT broker is`);
      return mqttUrl;
    },
    get sim(): StartedSimulator<true> {
      throw new Error(`sim is the simulator a helper starts itself; this one is attached to ${target.apiUrl}: use control, or pass attach: false`);
    },
    stop: async () => {
      control.close();
      await registration.release();
    },
  };
}

function owned(sim: StartedSimulator<true>, controlToken: string | undefined): TestSimulator {
  const control = new ControlClient({ url: sim.apiUrl, ...(controlToken === undefined ? {} : { controlToken }) });
  return {
    ...common(control, sim.apiUrl, sim.fixture),
    mode: 'owned',
    controlUrl: sim.controlUrl,
    mqttUrl: sim.mqttUrl,
    sim,
    stop: async () => {
      control.close();
      await sim.stop();
    },
  };
}

/** Everything that works the same attached and owned: over HTTP, through the control client. */
function common(control: ControlClient, apiUrl: string, fixture: Fixture): Omit<TestSimulator, 'mode' | 'controlUrl' | 'mqttUrl' | 'sim' | 'stop'> {
  return {
    apiUrl,
    control,
    fixture,
    login: async (email, password) => {
      if (password !== undefined) {
        if (email === undefined) throw new TypeError('login(email, password): the email is missing');
        return loggedIn(apiUrl, email, password);
      }
      const wanted = email ?? fixture.accounts[0]?.email;
      // The same comparison as the API's login: case and surrounding spaces do not matter.
      const account = wanted === undefined ? undefined : fixture.accounts.find((a) => normaliseEmail(a.email) === normaliseEmail(wanted));
      if (!account) throw new Error(`the fixture has no account ${wanted ?? '(none at all)'}`);
      return loggedIn(apiUrl, account.email, account.password);
    },
    reset: () => control.reset(),
    addFault: (token, spec) => control.addFault(token, spec),
    clearFaults: async (token) => {
      if (token !== undefined) {
        await control.clearFaults(token);
        return;
      }
      for (const station of await control.stations()) if (station.faults.length > 0) await control.clearFaults(station.token);
    },
    setOnline: (token, online) => control.setConnection(token, online),
    setBattery: (token, volts) => control.setBattery(token, volts),
    jam: (token, lockId) => control.physical(token, lockId, 'jam'),
    unjam: (token, lockId) => control.physical(token, lockId, 'unjam'),
    reboot: (token, downMs) => control.reboot(token, downMs),
    advanceClock: (ms) => control.advanceClock(ms),
    waitForStation: (token, status, options) => control.waitForStation(token, status, options),
    waitForLock: (token, lockId, status, options) => control.waitForLock(token, lockId, status, options),
    events: (filter) => control.events(filter),
    mark: () => control.mark(),
    verify: (query, expectation) => control.verify(query, expectation),
    addApiFault: (spec) => control.addApiFault(spec),
    clearApiFaults: () => control.clearApiFaults(),
  };
}

async function loggedIn(baseUrl: string, email: string, password: string): Promise<StationSimClient> {
  const client = createClient({ baseUrl, email, password });
  await client.login();
  return client;
}
