/**
 * Helpers for end-to-end suites (vitest, jest, node:test): start a simulator, log in as a fixture
 * account, wait until a lock reaches a state, stop. Framework-neutral; `withSimulator` wires them
 * into whatever `beforeAll`/`afterAll` the suite has.
 */
import { startSimulator, type SimulatorOptions, type StartedSimulator } from '../simulator/start-simulator.js';
import { createClient, type StationSimClient } from '../client/index.js';
import type { LockStatus } from '../fixture/statuses.js';
import { normaliseEmail } from '../service/auth/account-directory.js';

export interface TestSimulator {
  readonly sim: StartedSimulator;
  /** A logged-in reference client; the first fixture account unless `email` is given. */
  login(email?: string): Promise<StationSimClient>;
  /**
   * Resolves once the lock is in `status` (now, or as soon as the station reports it). On timeout it rejects with a message that
   * says what was seen last, e.g. `lock CI-1/1 did not become "unlocked" within 2000 ms; last seen "locked"`.
   */
  waitForLock(token: string, lockId: string, status: LockStatus, options?: { timeoutMs?: number }): Promise<void>;
  stop(): Promise<void>;
}

export async function startTestSimulator(options: SimulatorOptions = {}): Promise<TestSimulator> {
  const sim = await startSimulator(options);
  const apiUrl = sim.apiUrl;
  if (!apiUrl) {
    await sim.stop();
    throw new Error('startTestSimulator needs the HTTP API (do not pass http: false)');
  }
  const login = async (email = sim.fixture.accounts[0]?.email): Promise<StationSimClient> => {
    // The same comparison as the API's login: case and surrounding spaces do not matter.
    const account = email === undefined ? undefined : sim.fixture.accounts.find((a) => normaliseEmail(a.email) === normaliseEmail(email));
    if (!account) throw new Error(`the fixture has no account ${email ?? '(none at all)'}`);
    const client = createClient({ baseUrl: apiUrl, email: account.email, password: account.password });
    await client.login();
    return client;
  };
  return {
    sim,
    login,
    waitForLock: (token, lockId, status, { timeoutMs = 5000 } = {}) => {
      // Listen to the event stream first, then read the state: a short-lived state (unlocked for
      // 200 ms) is caught whichever comes first, which polling cannot promise.
      const hub = sim.http!.control.hub;
      return new Promise<void>((resolve, reject) => {
        let last = 'nothing yet';
        let done = false;
        const finish = (error?: Error): void => {
          if (done) return;
          done = true;
          clearTimeout(timer);
          unsubscribe();
          if (error) reject(error);
          else resolve();
        };
        const timer = setTimeout(
          () => finish(new Error(`lock ${token}/${lockId} did not become "${status}" within ${timeoutMs} ms; last seen ${last}`)),
          timeoutMs,
        );
        const unsubscribe = hub.subscribe((event) => {
          if (event.type === 'lock.state' && event.token === token && event.lockId === lockId) {
            last = `"${event.status}"`;
            if (event.status === status) finish();
          }
        });
        sim.http!.control.channel.control(token, { action: 'snapshot' }).then(
          ({ station }) => {
            const lock = station.locks.find((l) => l.lockId === lockId);
            if (!lock) return finish(new Error(`station ${token} has no lock ${lockId}`));
            if (last === 'nothing yet') last = `"${lock.status}" (station ${station.status})`;
            if (lock.status === status) finish();
          },
          (error: Error) => finish(error),
        );
      });
    },
    stop: () => sim.stop(),
  };
}

/** A hook as vitest and jest take it: the function, then a timeout in milliseconds. */
export type TimeoutHook = (fn: () => Promise<void>, timeout?: number) => void;

/**
 * A hook as node:test takes it (`before`, `after`): the function, then options. node:test runs a
 * hook without a timeout unless told, and spreads what it gets as options, so the number passed
 * for vitest and jest leaves it at that.
 */
export type OptionsHook = (fn: () => Promise<void>, options?: { timeout?: number }) => void;

/**
 * The hooks a test framework offers: `{ beforeAll, afterAll }` from vitest or jest, or
 * `{ beforeAll: before, afterAll: after }` from node:test.
 */
export interface SuiteHooks {
  beforeAll: TimeoutHook | OptionsHook;
  afterAll: TimeoutHook | OptionsHook;
}

/** How long a start or a stop may take before the framework fails the hook (vitest and jest). */
const HOOK_TIMEOUT_MS = 60_000;

/** Registers `fn` with a hook of either kind (see OptionsHook for why the number suits both). */
function register(hook: SuiteHooks['beforeAll'], fn: () => Promise<void>): void {
  (hook as TimeoutHook)(fn, HOOK_TIMEOUT_MS);
}

/**
 * Starts one simulator for the suite and stops it after; returns a getter for it.
 * `const sim = withSimulator({ beforeAll, afterAll }, { fixture: 'ci' })`
 */
export function withSimulator(hooks: SuiteHooks, options: SimulatorOptions = {}): () => TestSimulator {
  let current: TestSimulator | undefined;
  register(hooks.beforeAll, async () => {
    current = await startTestSimulator(options);
  });
  register(hooks.afterAll, async () => {
    await current?.stop();
  });
  return () => {
    if (!current) throw new Error('the simulator is not started yet: use it inside tests, not at collection time');
    return current;
  };
}
