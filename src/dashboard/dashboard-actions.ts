/**
 * What the dashboard's keys do. Each action calls the control plane (or an account's unlock), puts
 * the station it gets back into the store, and logs it as one line that its result, and what the
 * event stream then says of it, complete.
 */
import { networkErrorCode, type DashboardControl } from '../client/control-client.js';
import { LINK_PROFILE_NAMES, type LinkProfileName } from '../fixture/link-schema.js';
import type { ActionEcho } from './activity-log.js';
import type { FleetStore } from './fleet-store.js';
import { FULL_VOLTAGE } from './format.js';
import type { FaultSpec, SimStation } from '../client/sim-types.js';
import type { FaultKind } from '../contract/fault-schema.js';

/**
 * Unlocks one lock through the `/v1` API; the CLI wires it to the reference client logged in as a
 * fixture account, so the dashboard exercises the same path as any app.
 */
export type UnlockFunction = (token: string, lockId: string) => Promise<{ success: boolean; message?: string }>;

/** An account `u` can unlock as (`a` switches between them). */
export interface DashboardAccount {
  /** Who it is, as the header shows it; absent for an unlock function handed in on its own. */
  email?: string;
  unlock: UnlockFunction;
  /**
   * The stations the account may reach, where they are known (the fixture's list): `u` on a
   * station it cannot reach unlocks as an account that can. @default unknown: asked and seen
   */
  stations?: readonly string[];
}

/** Who unlocks a station: the chosen account where it can, else the first that can. */
export interface AccountChoice {
  account: DashboardAccount | undefined;
  /** Index of `account` in the list. */
  index: number;
  /** The chosen account cannot reach the station (another one is used, or none). */
  chosenCannot: boolean;
}

export function accountFor(accounts: readonly DashboardAccount[], chosen: number, token: string): AccountChoice {
  const reaches = (account: DashboardAccount): boolean => account.stations === undefined || account.stations.includes(token);
  const preferred = accounts[chosen];
  if (preferred && reaches(preferred)) return { account: preferred, index: chosen, chosenCannot: false };
  const index = accounts.findIndex(reaches);
  return { account: accounts[index], index, chosenCannot: preferred !== undefined };
}

/** `alice@example.com`, or `the dashboard's account` for one without a name. */
export function accountName(account: DashboardAccount | undefined): string {
  return account?.email ?? "the dashboard's account";
}

/**
 * What each fault of the menu adds: every command of the lock (or station) until cleared, with
 * delays that show within the API's 5 s command timeout.
 */
export const FAULT_MENU: readonly { kind: FaultKind; spec: Omit<FaultSpec, 'kind' | 'lockId'>; what: string }[] = [
  { kind: 'dropCommands', spec: {}, what: 'no ack, the API times out' },
  { kind: 'delayAcks', spec: { delayMs: 2000 }, what: 'acks 2 s late' },
  { kind: 'reject', spec: { reason: 'busy' }, what: 'refuses commands (reason "busy")' },
  { kind: 'ackNoOpen', spec: {}, what: 'acks, but the lock stays shut' },
  { kind: 'latency', spec: { delayMs: 1500 }, what: 'every message 1.5 s late' },
  { kind: 'duplicateState', spec: {}, what: 'reports each lock state twice' },
];

/** What `POST /sim/v1/api-faults` takes (the control client's type). */
type ApiFaultSpec = Parameters<DashboardControl['addApiFault']>[0];

/** As `api.request` events name the route (docs/control-plane.md, "API faults"). */
const UNLOCK_ROUTE = 'POST /v1/stations/:station_token/locks/:lock_id/unlock';

/** The `/v1` faults of the menu, on the unlock route of the selected station: the API answers its unlocks so. */
export const API_FAULT_MENU: readonly { key: string; spec: Omit<ApiFaultSpec, 'token'>; what: string }[] = [
  { key: '7', spec: { route: UNLOCK_ROUTE, kind: 'status', status: 503 }, what: '503' },
  { key: '8', spec: { route: UNLOCK_ROUTE, kind: 'latency', latencyMs: 3000 }, what: '3 s late' },
  { key: '9', spec: { route: UNLOCK_ROUTE, kind: 'reset' }, what: 'connection reset' },
];

export interface DashboardActionsOptions {
  control: DashboardControl;
  store: FleetStore;
  /** The accounts `u` can unlock as, in the order `a` goes through them; none: `u` says so. */
  accounts: readonly DashboardAccount[];
  /** How far below its cutoff `b` drains a battery, so the station refuses unlocks. @default 0.3 */
  drainBelowCutoffV?: number;
}

export interface DashboardActions {
  /** Unlocks as the chosen account (`accounts[account]`), or one that can reach the station. */
  unlock(token: string, lockId: string, account: number): Promise<void>;
  /** Online stations go offline and offline ones come back. */
  toggleConnection(station: SimStation): Promise<void>;
  /**
   * Drains a battery above its cutoff to below it; charges one at or below it to its fixture
   * voltage (to full, 12.60 V, where that is at or below the cutoff too).
   */
  toggleBattery(station: SimStation): Promise<void>;
  /** Jams a free lock; frees a jammed one. */
  toggleJam(station: SimStation, lockId: string): Promise<void>;
  reboot(station: SimStation): Promise<void>;
  /**
   * The station's link to the next profile, in the order `LINK_PROFILE_NAMES` gives (a custom link
   * goes to `perfect`); a station whose fixture gives it no link says why it has none to change.
   */
  cycleLink(station: SimStation): Promise<void>;
  /** Adds a fault of the menu to the lock, or to the whole station without `lockId`. */
  addFault(station: SimStation, kind: FaultKind, lockId: string | undefined): Promise<void>;
  clearFaults(station: SimStation): Promise<void>;
  /** Adds a `/v1` fault of the menu (`API_FAULT_MENU[index]`) for the station; answers the faults now in force. */
  addApiFault(station: SimStation, index: number): Promise<void>;
  clearApiFaults(): Promise<void>;
}

/** `u`: unlocks as the chosen account, or as one that can reach the station; says so when none can. */
async function unlockAsAccount(
  { store, accounts }: DashboardActionsOptions,
  { token, lockId, chosen }: { token: string; lockId: string; chosen: number },
): Promise<void> {
  const choice = accountFor(accounts, chosen, token);
  const account = choice.account;
  if (!account) {
    store.note(
      accounts.length === 0
        ? 'no account to unlock as: start the dashboard with --email and STATION_SIM_PASSWORD'
        : `no account of the fixture can reach ${token}: nothing to unlock as`,
      'warn',
    );
    return;
  }
  const id = store.beginUnlock(token, lockId, choice.chosenCannot ? account.email : undefined);
  try {
    const result = await account.unlock(token, lockId);
    // A station of the fleet the API calls unknown is one this account may not reach: a fact of
    // the fixture the presenter should see as such, not a failure that looks like a bug.
    if (!result.success && result.message === 'Station not found' && store.get(token)) {
      const how = accounts.length > 1 ? 'a: switch account' : 'not one of its stations';
      store.finishUnlock(id, { success: false, message: `${accountName(account)} cannot reach ${token} (${how})`, unreachable: true });
    } else {
      store.finishUnlock(id, result);
    }
  } catch (error) {
    store.finishUnlock(id, { success: false, message: describeUnlockError(error) });
  }
}

export function createDashboardActions(options: DashboardActionsOptions): DashboardActions {
  const { control, store } = options;
  const drainBelow = options.drainBelowCutoffV ?? 0.3;

  const run = async (token: string, what: string, echoes: readonly ActionEcho[], call: () => Promise<SimStation | undefined>): Promise<void> => {
    const id = store.beginAction(token, what, echoes);
    try {
      const station = await call();
      if (station) store.upsert(station);
      store.finishAction(id, { ok: true });
    } catch (error) {
      store.finishAction(id, { ok: false, message: (error as Error).message });
    }
  };
  /** An action on no station (the `/v1` faults are the API's): its `control` event names none. */
  const runApi = async (what: string, call: () => Promise<unknown>): Promise<void> => {
    const id = store.beginAction(undefined, what);
    try {
      await call();
      store.finishAction(id, { ok: true });
    } catch (error) {
      store.finishAction(id, { ok: false, message: (error as Error).message });
    }
  };

  return {
    unlock(token, lockId, chosen) {
      return unlockAsAccount(options, { token, lockId, chosen });
    },
    toggleConnection(station) {
      const online = station.status !== 'online';
      const status = online ? 'online' : 'offline';
      return run(station.token, `${station.token} → ${status}`, [{ type: 'status', status }], () => control.setConnection(station.token, online));
    },
    toggleBattery(station) {
      const drain = station.batteryVoltage > station.battery.cutoffV;
      const fixture = store.fixtureVoltage(station.token);
      const charged = fixture !== undefined && fixture > station.battery.cutoffV ? fixture : FULL_VOLTAGE;
      // Rounded to the centivolt: 11.5 - 0.3 is 11.2000000000000001 in floating point.
      const voltage = Math.round((drain ? Math.max(0, station.battery.cutoffV - drainBelow) : charged) * 100) / 100;
      return run(station.token, `${station.token} battery ${drain ? 'drain' : 'charge'} → ${voltage.toFixed(2)}V`, [], () => control.setBattery(station.token, voltage));
    },
    toggleJam(station, lockId) {
      const jammed = station.locks.find((lock) => lock.lockId === lockId)?.status === 'jammed';
      const action = jammed ? 'unjam' : 'jam';
      const echo: ActionEcho = { type: 'lock', lockId, status: jammed ? 'locked' : 'jammed' };
      return run(station.token, `${station.token}/${lockId} ${action}`, [echo], () => control.physical(station.token, lockId, action));
    },
    cycleLink(station) {
      const next = nextLinkProfile(station.link);
      return run(station.token, `${station.token} link → ${next}`, [], () => control.setLink(station.token, next));
    },
    reboot(station) {
      const echoes: ActionEcho[] = station.status === 'online' ? [{ type: 'status', status: 'offline', step: true }, { type: 'status', status: 'online', step: true }] : [];
      return run(station.token, `${station.token} reboot`, echoes, () => control.reboot(station.token));
    },
    addFault(station, kind, lockId) {
      const item = FAULT_MENU.find((each) => each.kind === kind);
      const spec: FaultSpec = { kind, ...(item?.spec ?? {}), ...(lockId === undefined ? {} : { lockId }) };
      const where = lockId === undefined ? station.token : `${station.token}/${lockId}`;
      return run(station.token, `${where} fault ${kind} added`, [], async () => {
        await control.addFault(station.token, spec);
        return control.station(station.token);
      });
    },
    clearFaults(station) {
      return run(station.token, `${station.token} faults cleared`, [], () => control.clearFaults(station.token));
    },
    addApiFault(station, index) {
      const item = API_FAULT_MENU[index];
      if (!item) return Promise.resolve();
      return runApi(`${station.token} /v1 unlock fault ${item.what} added`, () => control.addApiFault({ ...item.spec, token: station.token }));
    },
    clearApiFaults() {
      return runApi('/v1 faults cleared', () => control.clearApiFaults());
    },
  };
}

/**
 * What the log says of an unlock call that threw. No answer from the `/v1` API is said the way the
 * control plane's is (`cannot reach the /v1 API: ECONNREFUSED`), not as fetch's `fetch failed` or a
 * client's full sentence about the request; anything else by its message.
 */
export function describeUnlockError(error: unknown): string {
  const code = networkErrorCode(error);
  if (code !== undefined) return `cannot reach the /v1 API: ${code}`;
  if (error instanceof Error && error.name === 'TimeoutError') return 'cannot reach the /v1 API: no answer in time';
  return error instanceof Error ? error.message : String(error);
}

/** The profile after a station's link (`SimStation.link` names its profile first), in `LINK_PROFILE_NAMES` order. */
export function nextLinkProfile(link: string | undefined): LinkProfileName {
  const at = LINK_PROFILE_NAMES.indexOf((link?.split(' ')[0] ?? '') as LinkProfileName);
  return LINK_PROFILE_NAMES[(at + 1) % LINK_PROFILE_NAMES.length]!;
}
