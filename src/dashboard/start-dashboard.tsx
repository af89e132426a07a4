/**
 * `startDashboard`: the live terminal dashboard as a library call, which `station-sim dashboard`
 * wraps. It attaches to a running simulator through `/sim/v1` only (plus the injected unlock,
 * which goes through `/v1`), so the simulator may run in another process or on another machine.
 */
import { render } from 'ink';
import { systemClock, type Clock } from '../shared/clock.js';
import { ControlClient, type DashboardControl } from '../client/control-client.js';
import { Dashboard } from './Dashboard.js';
import type { CaptionSource } from './Caption.js';
import type { DashboardAccount, UnlockFunction } from './dashboard-actions.js';
import type { DashboardAddresses } from './addresses.js';
import { noColourRequested } from './Text.js';
import { FleetStore } from './fleet-store.js';
import { baseUrlOf, parseDashboardUrl } from './dashboard-url.js';
import { detectIconStyle, iconSet, type IconStyle } from './format.js';
import { SimulatorTime } from './simulator-time.js';
import { NOT_A_TTY_MESSAGE } from './not-a-tty.js';

export interface DashboardOptions {
  /**
   * Base URL of a running simulator's HTTP server, e.g. `http://127.0.0.1:8080`: http or https,
   * without credentials (`DashboardUrlError` otherwise).
   */
  url: string;
  /**
   * The simulator's control token (`--control-token`), sent as a bearer token to `/sim/v1`.
   * @default none
   */
  controlToken?: string;
  /**
   * The accounts `u` can unlock as, `a` switching between them; with their stations where known,
   * so `u` on a station the chosen one cannot reach goes as one that can.
   * @default one unnamed account that unlocks with `unlock`
   */
  accounts?: readonly DashboardAccount[];
  /** Unlocks a lock through the `/v1` API, where no `accounts` are given; called with the selected station's token and lock id. */
  unlock?: UnlockFunction;
  /** What the header shows of where things are. @default the API at `url`, the broker as `/sim/v1/health` names it */
  addresses?: DashboardAddresses;
  /** What the simulator said as it started, kept for the header and the info panel (`i`). @default none */
  notices?: readonly string[];
  /** Each station's fixture battery voltage, which `b` charges back to. @default as first seen */
  fixtureVoltages?: ReadonlyMap<string, number>;
  /** Where the dashboard draws; must be a TTY. @default process.stdout */
  stdout?: NodeJS.WriteStream;
  /** Where keys come from; without a TTY the dashboard is view only. @default process.stdin */
  stdin?: NodeJS.ReadStream;
  /** @default process.stderr */
  stderr?: NodeJS.WriteStream;
  /** Timers of redraw batching, polling and reconnects; time for ages unless `simulatedClock` is given. @default systemClock */
  clock?: Clock;
  /**
   * The simulator's clock when it is in this process (`up --dashboard`): ages and countdowns of
   * the simulator's timestamps are drawn against it, so they hold with `--time-scale` or
   * `--clock manual`. Only its `now()` is read; timers stay on `clock`.
   * @default the simulator's time followed over the network: `GET /sim/v1/clock` every
   * `simulatorClockPollMs`, and the times of its events
   */
  simulatedClock?: Pick<Clock, 'now'>;
  /** How often `GET /sim/v1/clock` is asked when no `simulatedClock` is given. @default 1000 */
  simulatorClockPollMs?: number;
  /** @default globalThis.fetch */
  fetch?: typeof fetch;
  /**
   * Lock icons and bars: emoji (🔒 🔓 ⚠ …) or plain ASCII (L U ! ~).
   * @default detected from `env` (ASCII for TERM=linux or a non-UTF-8 locale)
   */
  icons?: IconStyle;
  /** Draw in colour. @default not when `NO_COLOR` is set to anything but the empty string in `env` */
  colour?: boolean;
  /** Environment used to detect the icon style and `NO_COLOR`. @default process.env */
  env?: Readonly<Record<string, string | undefined>>;
  /** Longest wait between an event and the redraw that shows it. @default 100 */
  flushIntervalMs?: number;
  /** How often `/sim/v1/health` is asked while the fleet connects. @default 500 */
  healthPollMs?: number;
  /** How often the selected station is fetched in full (faults, timers). @default 1000 */
  detailRefreshMs?: number;
  /** First reconnect delay of the event stream, doubling up to 10 s. @default 250 */
  reconnectBaseMs?: number;
  /** Log entries kept in memory. @default 200 */
  logLimit?: number;
  /**
   * How often the performance timeline is emptied of measures and marks while the dashboard runs:
   * React's development build records one per render and never removes them (about 6.6 MB a
   * minute idle, and Node writes a buffer warning onto the screen at a million). @default 10000
   */
  performanceTrimMs?: number;
  /** A narrated story shown in caption lines above the table, steered with `space` and `n` (`station-sim demo`). @default none */
  caption?: CaptionSource;
}

export interface StartedDashboard {
  /** Settles when the dashboard has closed (`q`, Ctrl-C, or `stop()`) and its requests in flight are aborted. */
  waitUntilExit(): Promise<void>;
  /** Closes the dashboard: the event stream, its timers, and the screen. */
  stop(): Promise<void>;
}

/**
 * Starts the dashboard on the given terminal. Throws, drawing nothing, when stdout is not a TTY
 * (redrawing a screen into a pipe or a file gives an unreadable stream of escape codes) and when
 * the URL is not one it can use (`DashboardUrlError`).
 */
export function startDashboard(options: DashboardOptions): StartedDashboard {
  const url = baseUrlOf(parseDashboardUrl(options.url));
  const stdout = options.stdout ?? process.stdout;
  if (!stdout.isTTY) throw new Error(NOT_A_TTY_MESSAGE);
  const clock = options.clock ?? systemClock;
  const control = new ControlClient({
    url,
    controlToken: options.controlToken,
    fetch: options.fetch,
    clock,
    reconnectBaseMs: options.reconnectBaseMs,
  });
  // Attached over the network, the simulator's clock is followed from its answers and events.
  const followed = options.simulatedClock ? undefined : new SimulatorTime({ read: () => control.simulatorClock(), clock, pollMs: options.simulatorClockPollMs });
  const simulated = options.simulatedClock ?? followed!;
  const simulatedNow = (): number => simulated.now();
  followed?.start();
  // The log stamps its own lines (a requested unlock) on the simulator's time, like its events.
  const store = new FleetStore({
    clock: { ...clock, now: simulatedNow },
    logLimit: options.logLimit,
    ...(options.fixtureVoltages ? { fixtureVoltages: options.fixtureVoltages } : {}),
  });
  const env = options.env ?? process.env;
  const icons = iconSet(options.icons ?? detectIconStyle(env));
  const instance = render(
    <Dashboard
      control={followed ? observingEventTimes(control, followed) : control}
      store={store}
      {...(options.accounts ? { accounts: options.accounts } : {})}
      {...(options.unlock ? { unlock: options.unlock } : {})}
      {...(options.addresses ? { addresses: options.addresses } : {})}
      {...(options.notices ? { notices: options.notices } : {})}
      colour={options.colour ?? !noColourRequested(env)}
      clock={clock}
      simulatedNow={simulatedNow}
      icons={icons}
      title={url}
      flushIntervalMs={options.flushIntervalMs}
      healthPollMs={options.healthPollMs}
      detailRefreshMs={options.detailRefreshMs}
      caption={options.caption}
    />,
    {
      stdout,
      stdin: options.stdin ?? process.stdin,
      stderr: options.stderr ?? process.stderr,
      exitOnCtrlC: true,
      // A library call should not take over the process-wide console; nothing else writes to
      // the terminal while the dashboard runs.
      patchConsole: false,
    },
  );
  const stopTrim = trimPerformanceEntries(clock, options.performanceTrimMs ?? 10_000);
  // Asked for at once: Ink creates the exit promise lazily, and one created after the app has
  // already exited would never settle.
  // Requests still in flight are aborted on the way out: a hung server must not hold the process.
  const exited = instance
    .waitUntilExit()
    .finally(() => {
      stopTrim();
      followed?.stop();
      control.close();
    })
    .then(() => undefined);
  return {
    waitUntilExit: () => exited,
    stop: () => {
      instance.unmount();
      return exited;
    },
  };
}

/**
 * Empties the performance timeline every `intervalMs` until the returned function is called.
 * React's development build (NODE_ENV is not set to production, and setting it would leak into
 * the children of `station-sim run`) adds a `performance.measure` entry per component render and
 * never clears them. Timers of `clock` (the system clock's are unref'd: this one keeps no process alive).
 */
function trimPerformanceEntries(clock: Clock, intervalMs: number): () => void {
  let handle: ReturnType<Clock['setTimeout']> | undefined;
  const trim = (): void => {
    performance.clearMeasures();
    performance.clearMarks();
    handle = clock.setTimeout(trim, intervalMs);
  };
  handle = clock.setTimeout(trim, intervalMs);
  return () => {
    if (handle !== undefined) clock.clearTimeout(handle);
    handle = undefined;
  };
}

/** `control` as is, except that the time of every event of its stream also goes to `time`. */
function observingEventTimes(control: ControlClient, time: SimulatorTime): DashboardControl {
  return {
    health: () => control.health(),
    station: (token) => control.station(token),
    setConnection: (token, online) => control.setConnection(token, online),
    setBattery: (token, voltage) => control.setBattery(token, voltage),
    setLink: (token, link) => control.setLink(token, link),
    reboot: (token, downMs) => control.reboot(token, downMs),
    physical: (token, lockId, action) => control.physical(token, lockId, action),
    addFault: (token, fault) => control.addFault(token, fault),
    clearFaults: (token) => control.clearFaults(token),
    addApiFault: (spec) => control.addApiFault(spec),
    apiFaults: () => control.apiFaults(),
    clearApiFaults: () => control.clearApiFaults(),
    subscribe: (handlers) =>
      control.subscribe({
        ...handlers,
        onEvent: (event) => {
          time.observe(Date.parse(event.time));
          handlers.onEvent(event);
        },
      }),
  };
}
