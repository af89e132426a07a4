/**
 * What the dashboard's keys do. Each action calls the control plane (or the injected unlock), puts
 * the station it gets back into the store, and logs its result, success or the error's message.
 */
import { networkErrorCode, type DashboardControl } from '../client/control-client.js';
import type { FleetStore } from './fleet-store.js';
import { FULL_VOLTAGE } from './format.js';
import type { SimStation } from '../client/sim-types.js';

/**
 * Unlocks one lock through the `/v1` API; the CLI wires it to the reference client logged in as a
 * fixture account, so the dashboard exercises the same path as any app.
 */
export type UnlockFunction = (token: string, lockId: string) => Promise<{ success: boolean; message?: string }>;

export interface DashboardActionsOptions {
  control: DashboardControl;
  store: FleetStore;
  unlock: UnlockFunction;
  /** How far below its cutoff `b` drains a battery, so the station refuses unlocks. @default 0.3 */
  drainBelowCutoffV?: number;
}

export interface DashboardActions {
  unlock(token: string, lockId: string): Promise<void>;
  /** Online stations go offline and offline ones come back. */
  toggleConnection(station: SimStation): Promise<void>;
  /** Drains a battery above its cutoff to below it; charges one at or below it to full. */
  toggleBattery(station: SimStation): Promise<void>;
  /** Jams a free lock; frees a jammed one. */
  toggleJam(station: SimStation, lockId: string): Promise<void>;
  reboot(station: SimStation): Promise<void>;
}

export function createDashboardActions(options: DashboardActionsOptions): DashboardActions {
  const { control, store } = options;
  const drainBelow = options.drainBelowCutoffV ?? 0.3;

  const run = async (what: string, call: () => Promise<SimStation>): Promise<void> => {
    try {
      store.upsert(await call());
      store.note(`${what}: ok`, 'ok');
    } catch (error) {
      store.note(`${what}: ${(error as Error).message}`, 'error');
    }
  };

  return {
    async unlock(token, lockId) {
      const id = store.beginUnlock(token, lockId);
      try {
        store.finishUnlock(id, await options.unlock(token, lockId));
      } catch (error) {
        store.finishUnlock(id, { success: false, message: describeUnlockError(error) });
      }
    },
    toggleConnection(station) {
      const online = station.status !== 'online';
      return run(`${station.token} → ${online ? 'online' : 'offline'}`, () => control.setConnection(station.token, online));
    },
    toggleBattery(station) {
      const drain = station.batteryVoltage > station.battery.cutoffV;
      // Rounded to the centivolt: 11.5 - 0.3 is 11.2000000000000001 in floating point.
      const voltage = drain ? Math.max(0, Math.round((station.battery.cutoffV - drainBelow) * 100) / 100) : FULL_VOLTAGE;
      return run(`${station.token} battery ${drain ? 'drain' : 'charge'} → ${voltage.toFixed(2)}V`, () => control.setBattery(station.token, voltage));
    },
    toggleJam(station, lockId) {
      const jammed = station.locks.find((lock) => lock.lockId === lockId)?.status === 'jammed';
      const action = jammed ? 'unjam' : 'jam';
      return run(`${station.token}/${lockId} ${action}`, () => control.physical(station.token, lockId, action));
    },
    reboot(station) {
      return run(`${station.token} reboot`, () => control.reboot(station.token));
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
