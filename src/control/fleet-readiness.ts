/**
 * Fleet readiness, as `/sim/v1/health` reports it (docs/control-plane.md, "Health and the broker"):
 * the last status of every fixture station, whether the fleet has come up, and what each station
 * is expected back at after the broker connection is lost. The event hub feeds it the statuses it
 * reads off the broker; the control plane tells it what it changed on purpose.
 */
import type { Fixture } from '../fixture/fixture-schema.js';
import type { StationStatus } from '../contract/statuses.js';
import { checkStatus } from '../mqtt/plausibility.js';
import type { StatusPayload } from '../contract/payloads.js';

export interface FleetReadinessOptions {
  fixture: Fixture;
  /**
   * Real time in milliseconds, for how long a station has held its status (see `forgetStatuses`);
   * not the simulated clock, which may stand still. @default Date.now
   */
  wallClock?: () => number;
}

/**
 * A status a station took less than this long before the broker connection was lost does not
 * count as the one it had (see `forgetStatuses`).
 */
export const STEADY_STATUS_MS = 5000;

export class FleetReadiness {
  readonly #statuses = new Map<string, StationStatus>();
  /** Per station that has changed status since its first report: when it last did, and the status it had held steadily before. */
  readonly #changes = new Map<string, { since: number; steady: StationStatus | undefined }>();
  readonly #wallClock: () => number;
  /** The fixture's stations, token to station id: only their statuses are kept (anyone on the broker can publish others), and a status must carry the station's own id. */
  readonly #stationIds: ReadonlyMap<string, number>;
  /**
   * What `cameUp` waits for, per fixture station: the fixture's starting status, and after a lost
   * broker connection the status the station had before it (see `forgetStatuses`). Only stations
   * whose target is `online` hold readiness back.
   */
  readonly #target: Map<string, StationStatus>;
  readonly #initial: ReadonlyMap<string, StationStatus>;
  /** Stations whose target is `online` that have not reported `online` since the statuses were last forgotten. */
  #awaitedOnline = 0;
  #cameUp = false;
  /**
   * The status the control plane itself last put a station in (connection, reboot, reset), and
   * when: `forgetStatuses` takes it as the station's target without the steady rule, so a station
   * taken offline just before the broker died is not expected back online.
   */
  readonly #intended = new Map<string, { status: StationStatus; at: number }>();
  /** Set once `cameUp` has first been true (see `#rearm`). */
  #everCameUp = false;
  /** No station is expected online and `cameUp` has never been true: the first report from a fixture station sets it. */
  #awaitingAnyReport = false;
  /**
   * `statusOf` counted over the fleet, kept as statuses come (health reads it on every call, and a
   * fleet of 100,000 made each call a walk of 100,000 lookups): reports by status, plus the
   * stations expected offline that have not reported.
   */
  #reportedOnline = 0;
  #reportedOffline = 0;
  #unreportedOffline = 0;

  constructor(options: FleetReadinessOptions) {
    this.#stationIds = new Map(options.fixture.stations.map((station) => [station.token, station.stationId]));
    this.#target = new Map(options.fixture.stations.map((station) => [station.token, station.initialStatus]));
    this.#initial = new Map(this.#target);
    this.#wallClock = options.wallClock ?? Date.now;
    this.#rearm();
  }

  /**
   * True once every fixture station that should be online has reported `online` (read by
   * `/sim/v1/health`). Latched: a station taken offline or online on purpose later does not undo
   * it; only `forgetStatuses` does.
   *
   * A station that should be offline (the fixture starts it offline) does not hold it back, and
   * counts as offline until it reports: it publishes its retained `offline` record once at start
   * and never again, so after a broker restart that kept no retained messages nothing would ever
   * be heard of it, and an `api` started then would wait for ever. Offline is also what the `/v1`
   * API shows for a station it has no record of, so health and the API agree. When no station is
   * expected online, though, the first `cameUp` waits for one report from any fixture station
   * (the offline records its fleet process publishes at start): otherwise an `api` with no fleet
   * process running at all would say ready.
   */
  get cameUp(): boolean {
    return this.#cameUp;
  }

  /**
   * A fixture station's status as health counts it: its last report since the statuses were last
   * forgotten; without one, `offline` for a station expected offline (see `cameUp`), otherwise
   * unknown.
   */
  statusOf(token: string): StationStatus | undefined {
    return this.#statuses.get(token) ?? (this.#target.get(token) === 'offline' ? 'offline' : undefined);
  }

  /**
   * Forgets every status heard so far and re-arms `cameUp`: called when the MQTT session the
   * statuses come through is lost and again when it is back, so that health is rebuilt from the
   * retained messages the broker sends after the reconnect. Whatever was heard before may be
   * stale: a broker that restarted without persistence retains nothing, and stations come back
   * one by one. If the fleet had come up, each station is then expected back at the status it had
   * before (one taken offline on purpose need not come back; one that was online must); if not,
   * at its fixture's starting status as before. "Before" means held for `STEADY_STATUS_MS`: a
   * broker that shuts down sends every station's last will (`offline`) just before it closes
   * this session, and those must not pass for stations taken offline. A change the control plane
   * made itself (see `controlled`) needs no such wait: its status is the target at once.
   */
  forgetStatuses(): void {
    if (this.#cameUp) {
      const now = this.#wallClock();
      for (const token of this.#stationIds.keys()) {
        const change = this.#changes.get(token);
        const known =
          this.#intended.get(token)?.status ??
          (change !== undefined && now - change.since < STEADY_STATUS_MS ? change.steady : this.statusOf(token));
        if (known !== undefined) this.#target.set(token, known);
      }
    }
    this.#statuses.clear();
    this.#changes.clear();
    this.#rearm();
  }

  /** How many fixture stations `statusOf` says are online and offline. */
  counts(): { online: number; offline: number } {
    return { online: this.#reportedOnline, offline: this.#reportedOffline + this.#unreportedOffline };
  }

  #count(status: StationStatus | undefined, by: 1 | -1): void {
    if (status === 'online') this.#reportedOnline += by;
    else if (status === 'offline') this.#reportedOffline += by;
  }

  /**
   * Records a change the control plane made (a `/sim/v1` call or a scenario step, once the fleet
   * answered it): the station's target is then the status it was put in, whenever the broker
   * connection is lost, with no need to have held it for `STEADY_STATUS_MS`. `token` undefined
   * with a reset means the whole fleet, back to the fixture's starting statuses.
   */
  controlled(token: string | undefined, action: { action: string; online?: boolean }): void {
    const at = this.#wallClock();
    if (action.action === 'reset') {
      for (const station of token === undefined ? this.#stationIds.keys() : [token]) {
        const initial = this.#initial.get(station);
        if (initial !== undefined) this.#intended.set(station, { status: initial, at });
      }
      return;
    }
    if (token === undefined || !this.#stationIds.has(token)) return;
    // A reboot comes back on its own: the station is expected online.
    if (action.action === 'connection') this.#intended.set(token, { status: action.online ? 'online' : 'offline', at });
    else if (action.action === 'reboot') this.#intended.set(token, { status: 'online', at });
  }

  #rearm(): void {
    let awaited = 0;
    let unreportedOffline = 0;
    for (const [token, target] of this.#target) {
      if (target === 'online') awaited += 1;
      else if (target === 'offline' && !this.#statuses.has(token)) unreportedOffline += 1;
    }
    this.#unreportedOffline = unreportedOffline;
    if (this.#statuses.size === 0) this.#reportedOnline = this.#reportedOffline = 0;
    this.#awaitedOnline = awaited;
    // Nobody to wait for: before the fleet was ever heard of, one report shows a fleet process runs.
    this.#awaitingAnyReport = awaited === 0 && !this.#everCameUp;
    this.#cameUp = awaited === 0 && !this.#awaitingAnyReport;
  }

  /**
   * Stations the fleet should have online (their target, or what the control plane last put them
   * in) that have all reported `offline`: none is left, so the fleet process hosting them is most
   * likely gone (killed with -9, say: the broker then sends every station's will). Read by
   * `/sim/v1/health`, which is then not ready, whatever `cameUp` latched. It does not flap when
   * stations are taken offline on purpose: those are no longer expected online. Returns the number
   * of such stations, 0 when some are online, none is expected online, or one has not reported.
   *
   * Stops at the first station expected online that is not reported offline, so a healthy fleet
   * costs one lookup or a few.
   */
  expectedOnlineAllOffline(): number {
    let offline = 0;
    for (const token of this.#stationIds.keys()) {
      const expected = this.#intended.get(token)?.status ?? this.#target.get(token);
      if (expected !== 'online') continue;
      if (this.#statuses.get(token) !== 'offline') return 0;
      offline += 1;
    }
    return offline;
  }

  /** Last reported status of each station that has reported one. */
  get statuses(): ReadonlyMap<string, StationStatus> {
    return this.#statuses;
  }

  /**
   * Whether a status message is to be believed (src/mqtt/plausibility.ts): a fixture station's,
   * with its own stationId, a voltage in range and an ISO 8601 UTC timestamp. Anyone on an open
   * broker can publish a station's status; a fake `offline` must not make health say the fleet is
   * gone. The timestamp is not held to a clock here: the control plane's clock may be a manual one
   * that stands anywhere, and a forger can write a current time anyway.
   */
  plausible(token: string, payload: StatusPayload): boolean {
    const stationId = this.#stationIds.get(token);
    return stationId !== undefined && checkStatus(payload, { stationId }, Number.POSITIVE_INFINITY) === undefined;
  }

  /** A status a station reported (over MQTT); only the fixture's stations count (anyone on the broker can publish others). */
  report(token: string, status: StationStatus): void {
    if (!this.#stationIds.has(token)) return;
    if (this.#awaitingAnyReport) {
      this.#awaitingAnyReport = false;
      this.#cameUp = true;
      this.#everCameUp = true;
    }
    const before = this.#statuses.get(token);
    if (before === status) return; // a heartbeat: nothing changes
    this.#statuses.set(token, status);
    this.#count(before, -1);
    this.#count(status, 1);
    if (before === undefined && this.#target.get(token) === 'offline') this.#unreportedOffline -= 1;
    // Only changes are timed, not first reports: a large fleet's statuses cost no record each.
    if (before !== undefined) {
      const now = this.#wallClock();
      // A steady change the control plane did not make (another api process did, say): its record is out of date.
      const intended = this.#intended.get(token);
      if (intended !== undefined && intended.status !== status && now - intended.at >= STEADY_STATUS_MS) this.#intended.delete(token);
      const change = this.#changes.get(token);
      this.#changes.set(token, { since: now, steady: change === undefined || now - change.since >= STEADY_STATUS_MS ? before : change.steady });
    }
    if (this.#cameUp || this.#target.get(token) !== 'online') return;
    if (before === 'online') this.#awaitedOnline += 1;
    if (status === 'online') this.#awaitedOnline -= 1;
    if (this.#awaitedOnline === 0) {
      this.#cameUp = true;
      this.#everCameUp = true;
    }
  }
}
