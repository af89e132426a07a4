/** What the dashboard screen (Dashboard.tsx) is given: where the simulator is, its fleet, its accounts, its clock. */
import type { Clock } from '../shared/clock.js';
import type { DashboardControl } from '../client/control-client.js';
import type { DashboardAccount, UnlockFunction } from './dashboard-actions.js';
import type { DashboardAddresses } from './addresses.js';
import type { CaptionSource } from './Caption.js';
import type { FleetStore } from './fleet-store.js';
import type { IconSet } from './format.js';

export interface DashboardProps {
  /** The control plane: actions, health, and the event stream the dashboard subscribes to. */
  control: DashboardControl;
  /** Where the stream's events go; the screen reads the fleet from here. */
  store: FleetStore;
  /**
   * The accounts `u` can unlock as, in the order `a` goes through them (the fixture's, for `up`).
   * @default one account without a name that unlocks with `unlock`
   */
  accounts?: readonly DashboardAccount[];
  /** What `u` calls, with the selected station's token and lock id, where no `accounts` are given. */
  unlock?: UnlockFunction;
  /** Timers of redraws and polling, and time for ages unless `simulatedNow` is given. */
  clock: Clock;
  /**
   * The simulator's time, against which the ages and countdowns of its timestamps are drawn: it
   * differs from real time with `--time-scale` or a manual clock.
   * @default clock.now
   */
  simulatedNow?: () => number;
  icons: IconSet;
  /** Where the simulator is: its base URL, the API's address where `addresses` does not say more. */
  title: string;
  /**
   * The addresses the header shows. @default the API at `title`, and the broker as
   * `/sim/v1/health` names it
   */
  addresses?: DashboardAddresses;
  /** What the simulator said as it started (a port taken, …): counted in the header, read with `i`. @default none */
  notices?: readonly string[];
  /** Colours on; `startDashboard` turns them off for `NO_COLOR`. @default true */
  colour?: boolean;
  /** Longest wait between an event and the redraw that shows it. @default 100 */
  flushIntervalMs?: number;
  /** How often `/sim/v1/health` is asked while the fleet connects. @default 500 */
  healthPollMs?: number;
  /** How often the selected station is fetched in full. @default 1000 */
  detailRefreshMs?: number;
  /** A narrated story (`station-sim demo`): its caption above the table, its keys `space` and `n`. @default none */
  caption?: CaptionSource;
}
