/**
 * What `dashboard` does: the Ink dashboard attached to a running simulator, and the pieces `up
 * --dashboard` and `demo` run it with in-process (one terminal session, unlocks as a fixture account).
 */
import { createClient } from '../../../client/index.js';
import { DashboardUrlError, parseDashboardUrl, startDashboard, NOT_A_TTY_MESSAGE } from '../../../dashboard/index.js';
import type { DashboardAccount, DashboardAddresses, StartedDashboard, UnlockFunction } from '../../../dashboard/index.js';
import { ApiError } from '../../../client/index.js';
import { SimError } from '../../../errors.js';
import type { Clock } from '../../../shared/clock.js';
import { UsageError, type CliIo } from '../../output.js';
import type { DashboardFlags } from './options.js';
import { runUntilSignal } from '../../run-until-signal.js';

/** An unlock function that logs in as `email` through the reference client. */
export function unlockAs(apiUrl: string, email: string, password: string): UnlockFunction {
  const client = createClient({ baseUrl: apiUrl, email, password });
  return async (token, lockId) => {
    try {
      return await client.unlock(token, lockId);
    } catch (error) {
      // The API's own message ("Station not found", "Invalid credentials") is what the log should show.
      if (error instanceof ApiError) return { success: false, message: error.message };
      throw error;
    }
  };
}

export interface CliDashboardOptions {
  /** The simulator's base URL, already checked. */
  url: string;
  /** The accounts `u` unlocks as (`a` switches); none: `u` says how to give one. */
  accounts: readonly DashboardAccount[];
  /** What the header shows of where things are (`up` knows; attached, health says). */
  addresses?: DashboardAddresses;
  /** What `up` said as it started, kept for the dashboard's info panel. */
  notices?: readonly string[];
  fixtureVoltages?: ReadonlyMap<string, number>;
  controlToken?: string;
  /** The simulator's clock when it runs in this process (`up`), for ages under --time-scale or --clock manual. */
  simulatedClock?: Pick<Clock, 'now'>;
}

/**
 * Starts the dashboard on this process's terminal; refuses with one line where there is no
 * terminal. The caller waits for it (`waitUntilExit`) and stops it (`stop`) on a signal: an Ink app
 * left mounted holds stdin in raw mode and keeps the process alive.
 */
export function runDashboard({ url, controlToken, simulatedClock, ...rest }: CliDashboardOptions): StartedDashboard {
  if (!process.stdout.isTTY) throw new SimError('BAD_REQUEST', NOT_A_TTY_MESSAGE);
  return startDashboard({ url, ...rest, ...(controlToken ? { controlToken } : {}), ...(simulatedClock ? { simulatedClock } : {}) });
}

/** Runs a started dashboard until the user quits or a stop signal arrives, then `stop`s what else there is. */
export async function runDashboardUntilDone(io: CliIo, dashboard: StartedDashboard, stopRest: () => Promise<void> = async () => undefined): Promise<void> {
  // Once only: a signal may arrive while `q` is already shutting down, or the other way round.
  let stopping: Promise<void> | undefined;
  // The dashboard goes first, so its screen is not left reconnecting to a simulator that is gone.
  const shutdown = (): Promise<void> => (stopping ??= dashboard.stop().then(stopRest));
  await Promise.race([dashboard.waitUntilExit().then(shutdown), runUntilSignal(io, shutdown)]);
}

/** `--url` checked before anything starts: one usage line, never the URL itself (it may hold a password). */
function checkedUrl(text: string): string {
  try {
    parseDashboardUrl(text);
  } catch (error) {
    if (error instanceof DashboardUrlError) throw new UsageError(`--url ${error.problem}`);
    throw error;
  }
  return text.replace(/\/+$/, '');
}

export async function runDashboardCommand(io: CliIo, argv: DashboardFlags): Promise<void> {
  const url = checkedUrl(argv.url);
  const email = argv.email;
  const password = process.env.STATION_SIM_PASSWORD;
  const controlToken = argv['control-token'] ?? process.env.STATION_SIM_CONTROL_TOKEN;
  if (email && !password) throw new UsageError('--email needs the password in STATION_SIM_PASSWORD (kept out of the process list)');
  // The stations the account may reach are not known here: a 404 from the API says it cannot.
  const accounts: DashboardAccount[] = email && password ? [{ email, unlock: unlockAs(url, email, password) }] : [];
  await runDashboardUntilDone(io, runDashboard({ url, accounts, controlToken }));
}
