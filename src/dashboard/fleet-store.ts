/**
 * Fleet state for the dashboard, kept outside React: a reducer applies each event of the stream to
 * a map of `SimStation` by token, and the store adds what the screen needs on top (tokens in
 * order, online count, the event log, the stream's state). React reads it at most every flush
 * interval (`use-throttled-store.ts`), so a burst of events from 10,000 stations costs one redraw.
 */
import { systemClock, type Clock } from '../shared/clock.js';
import { ActivityLog, type ActionEcho, type LogTone, type UnlockResult } from './activity-log.js';
import type { StreamState } from '../client/control-client.js';
import type { SimEvent, SimLock, SimStation } from '../client/sim-types.js';

/** What an event changed: nothing, one station, or which stations there are. */
export type FleetChange = 'none' | 'station' | 'membership';

/**
 * The reducer. Changes `fleet` in place (copying 10,000 entries per event would not keep up) but
 * replaces, never mutates, each station it changes, so a rendered station object stays as it was.
 */
export function applyFleetEvent(fleet: Map<string, SimStation>, event: SimEvent): FleetChange {
  switch (event.type) {
    case 'snapshot':
      fleet.clear();
      for (const station of event.stations) fleet.set(station.token, station);
      return 'membership';
    case 'station.status': {
      const station = fleet.get(event.token);
      if (!station) return 'none';
      fleet.set(event.token, { ...station, status: event.status, batteryVoltage: event.batteryVoltage, lastConnection: event.lastConnection });
      return 'station';
    }
    case 'lock.state':
      return updateLock(fleet, event.token, event.lockId, (_lock, station) => ({
        lock: { lockId: event.lockId, status: event.status, lastUpdated: event.lastUpdated, pending: event.pending },
        // Only the timer of the phase the event reports still runs: the relock time while open.
        timers: station.timers.filter((timer) => timer.lockId !== event.lockId || (event.pending === 'open' && timer.kind === 'relock')),
      }));
    case 'command.acked':
      // The phase the station left the lock in: `opening` when the ack starts the unlock delay.
      return updateLock(fleet, event.token, event.lockId, (lock) =>
        lock && lock.pending !== event.pending ? { lock: { ...lock, pending: event.pending } } : undefined,
      );
    default:
      return 'none';
  }
}

type LockUpdate = { lock: SimLock; timers?: SimStation['timers'] } | undefined;

function updateLock(
  fleet: Map<string, SimStation>,
  token: string,
  lockId: string,
  change: (lock: SimLock | undefined, station: SimStation) => LockUpdate,
): FleetChange {
  const station = fleet.get(token);
  if (!station) return 'none';
  const index = station.locks.findIndex((lock) => lock.lockId === lockId);
  const update = change(station.locks[index], station);
  if (!update) return 'none';
  const locks = [...station.locks];
  if (index >= 0) locks[index] = update.lock;
  else locks.push(update.lock);
  fleet.set(token, { ...station, locks, timers: update.timers ?? station.timers });
  return 'station';
}

export interface FleetStoreOptions {
  /** Time of log entries made by the dashboard itself. @default systemClock */
  clock?: Clock;
  /**
   * Each station's battery voltage in the fixture, which `b` charges back to. @default the voltage
   * each station had when the dashboard first saw it
   */
  fixtureVoltages?: ReadonlyMap<string, number>;
  /** Log entries kept. @default 200 */
  logLimit?: number;
}

type Listener = () => void;

/** A battery reading: epoch ms (simulator time) and volts. */
export interface VoltageSample {
  at: number;
  volts: number;
}

/** Readings kept per station: as many as its sparkline has cells. */
const BATTERY_SAMPLES = 16;
/**
 * A change smaller than this is no new reading: heartbeats report the hourly drain in steps of
 * microvolts, and 10,000 stations sampled at each would fill memory for a line of 16 cells.
 */
const BATTERY_STEP_V = 0.005;

/** The fleet in numbers, for the overview (`s`): cheap enough to count at 10,000 stations. */
export interface FleetOverview {
  total: number;
  online: number;
  offline: number;
  /** Stations at or below their battery cutoff: they refuse unlocks. */
  lowBattery: number;
  locks: { locked: number; unlocked: number; jammed: number; opening: number };
  /** Tokens of stations with faults in force (as last fetched), in fleet order. */
  faulted: string[];
}

// Natural order: ST-2 before ST-10, as a person reads a fleet list.
const tokenOrder = new Intl.Collator('en', { numeric: true }).compare;

export class FleetStore {
  readonly log: ActivityLog;
  readonly #fleet = new Map<string, SimStation>();
  #tokens: string[] = [];
  #online = 0;
  #version = 0;
  #membershipVersion = 0;
  #maxTokenLength = 0;
  #hasSnapshot = false;
  /** Whether a snapshot has come over the stream's current connection: until then the fleet is as last seen. */
  #fresh = false;
  /** The stream was live and has been lost; the next snapshot brings it back. */
  #lost = false;
  #stream: StreamState = { phase: 'connecting', attempt: 0 };
  /** Tokens to fetch in full: seen in events but not in the fleet, or acted on by someone (faults change). */
  readonly #unknown = new Set<string>();
  readonly #fixtureVoltages: ReadonlyMap<string, number> | undefined;
  /** The voltage each station had when first seen, where the fixture's is not given. */
  readonly #firstVoltage = new Map<string, number>();
  /** Readings of stations whose voltage has changed since first seen (the others cost nothing). */
  readonly #battery = new Map<string, VoltageSample[]>();
  readonly #clock: Clock;
  #overview: { version: number; value: FleetOverview } | undefined;
  readonly #listeners = new Set<Listener>();

  constructor(options: FleetStoreOptions = {}) {
    const clock = options.clock ?? systemClock;
    this.#clock = clock;
    this.#fixtureVoltages = options.fixtureVoltages;
    this.log = new ActivityLog({ limit: options.logLimit, now: () => clock.now() });
  }

  /** The voltage `b` charges the station back to: its fixture's, or as first seen. */
  fixtureVoltage(token: string): number | undefined {
    return this.#fixtureVoltages?.get(token) ?? this.#firstVoltage.get(token);
  }

  /** The station's battery readings, oldest first: one while it has not changed. */
  batteryHistory(token: string): readonly VoltageSample[] {
    const history = this.#battery.get(token);
    if (history) return history;
    const station = this.#fleet.get(token);
    return station ? [{ at: this.#clock.now(), volts: station.batteryVoltage }] : [];
  }

  /** Counts by status, lock state and battery, and the stations with faults; counted once per change. */
  overview(): FleetOverview {
    if (this.#overview?.version === this.#version) return this.#overview.value;
    const value: FleetOverview = { total: this.#fleet.size, online: 0, offline: 0, lowBattery: 0, locks: { locked: 0, unlocked: 0, jammed: 0, opening: 0 }, faulted: [] };
    for (const token of this.#tokens) {
      const station = this.#fleet.get(token);
      if (!station) continue;
      if (station.status === 'online') value.online += 1;
      else value.offline += 1;
      if (station.batteryVoltage <= station.battery.cutoffV) value.lowBattery += 1;
      if (station.faults.length > 0) value.faulted.push(token);
      for (const lock of station.locks) {
        if (lock.status === 'jammed') value.locks.jammed += 1;
        else if (lock.pending === 'opening') value.locks.opening += 1;
        else if (lock.status === 'unlocked') value.locks.unlocked += 1;
        else value.locks.locked += 1;
      }
    }
    this.#overview = { version: this.#version, value };
    return value;
  }

  /** Starts the log line of a dashboard action (log `beginAction`). */
  beginAction(token: string | undefined, label: string, echoes: readonly ActionEcho[] = []): number {
    const id = this.log.beginAction(token, label, echoes);
    this.#changed();
    return id;
  }

  finishAction(id: number, outcome: { ok: boolean; message?: string }): void {
    this.log.finishAction(id, outcome);
    this.#changed();
  }

  #sampleBattery(before: SimStation | undefined, after: SimStation | undefined): void {
    if (!after) return;
    if (!this.#firstVoltage.has(after.token)) this.#firstVoltage.set(after.token, before?.batteryVoltage ?? after.batteryVoltage);
    const previous = before?.batteryVoltage ?? this.#firstVoltage.get(after.token)!;
    const history = this.#battery.get(after.token);
    const last = history?.at(-1)?.volts ?? previous;
    if (Math.abs(after.batteryVoltage - last) < BATTERY_STEP_V) return;
    const now = this.#clock.now();
    const next = history ?? [{ at: now, volts: previous }];
    next.push({ at: now, volts: after.batteryVoltage });
    if (next.length > BATTERY_SAMPLES) next.splice(0, next.length - BATTERY_SAMPLES);
    this.#battery.set(after.token, next);
  }

  /** Increases with every change; React compares it to decide whether to redraw. */
  get version(): number {
    return this.#version;
  }

  /** Increases when stations come or go, so the sorted, filtered list is recomputed only then. */
  get membershipVersion(): number {
    return this.#membershipVersion;
  }

  /** Every token, in natural order. */
  get tokens(): readonly string[] {
    return this.#tokens;
  }

  get size(): number {
    return this.#fleet.size;
  }

  get online(): number {
    return this.#online;
  }

  get maxTokenLength(): number {
    return this.#maxTokenLength;
  }

  /** Whether the stream's first snapshot has arrived. */
  get hasSnapshot(): boolean {
    return this.#hasSnapshot;
  }

  get stream(): StreamState {
    return this.#stream;
  }

  /** Whether what the store holds is live: the stream is open and has sent its snapshot. */
  get live(): boolean {
    return this.#stream.phase === 'open' && this.#fresh;
  }

  get(token: string): SimStation | undefined {
    return this.#fleet.get(token);
  }

  /** Applies one event of the stream: the fleet through the reducer, then the log. */
  apply(event: SimEvent): void {
    const token = 'token' in event ? event.token : undefined;
    const before = token === undefined ? undefined : this.#fleet.get(token);
    const change = applyFleetEvent(this.#fleet, event);
    if (event.type === 'snapshot') {
      this.#hasSnapshot = true;
      this.#fresh = true;
      this.#unknown.clear();
      if (this.#lost) this.log.note('events back: live again', 'ok', Date.parse(event.time));
      this.#lost = false;
    }
    if (change === 'membership') this.#rebuildIndex();
    else if (change === 'station' && token !== undefined) {
      const after = this.#fleet.get(token);
      this.#countChange(before, after);
      this.#sampleBattery(before, after);
    } else if (event.type === 'control' && token !== undefined && before !== undefined) {
      // Someone acted on the station (maybe added or cleared a fault, which no event carries).
      this.#unknown.add(token);
    }
    else if (token !== undefined && before === undefined && this.#hasSnapshot && (event.type === 'station.status' || event.type === 'lock.state')) {
      // A station that came up after the snapshot (another fleet process): fetched by the caller.
      this.#unknown.add(token);
    }
    this.log.observe(event, before);
    this.#changed();
  }

  /** Puts a station as the control plane returned it (after an action, or fetched). */
  upsert(station: SimStation): void {
    const before = this.#fleet.get(station.token);
    this.#fleet.set(station.token, station);
    this.#unknown.delete(station.token);
    if (before) this.#countChange(before, station);
    else this.#insertToken(station);
    this.#sampleBattery(before, station);
    this.#changed();
  }

  /** Tokens seen in events but missing from the fleet, each handed out once. */
  takeUnknownTokens(): string[] {
    const tokens = [...this.#unknown];
    this.#unknown.clear();
    return tokens;
  }

  /** The stream's state; losing a live stream, and getting it back, are logged. */
  setStream(state: StreamState): void {
    const wasLive = this.live;
    const before = this.#stream.phase;
    this.#stream = state;
    if (state.phase !== 'open') this.#fresh = false;
    if (state.phase === 'refused') {
      // Said in full here, where a line wraps; the status line has one line for it.
      if (before !== 'refused') this.log.note(`events refused: ${state.reason}`, 'error');
    } else if (wasLive && state.phase === 'waiting') {
      this.#lost = true;
      this.log.eventsLost();
      this.log.note(`events lost: ${state.reason} · reconnecting`, 'error');
    }
    this.#changed();
  }

  /** Logs a line of the dashboard's own, e.g. the result of an action. */
  note(text: string, tone: LogTone = 'info'): void {
    this.log.note(text, tone);
    this.#changed();
  }

  beginUnlock(token: string, lockId: string, as?: string): number {
    const id = this.log.beginUnlock(token, lockId, as);
    this.#changed();
    return id;
  }

  finishUnlock(id: number, result: UnlockResult): void {
    this.log.finishUnlock(id, result);
    this.#changed();
  }

  /** Called after every change, synchronously; listeners should only schedule work. */
  subscribe(listener: Listener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #changed(): void {
    this.#version += 1;
    for (const listener of this.#listeners) listener();
  }

  #rebuildIndex(): void {
    this.#tokens = [...this.#fleet.keys()].sort(tokenOrder);
    this.#online = 0;
    this.#maxTokenLength = 0;
    for (const station of this.#fleet.values()) {
      if (!this.#firstVoltage.has(station.token)) this.#firstVoltage.set(station.token, station.batteryVoltage);
      if (station.status === 'online') this.#online += 1;
      this.#maxTokenLength = Math.max(this.#maxTokenLength, station.token.length);
    }
    this.#membershipVersion += 1;
  }

  #insertToken(station: SimStation): void {
    let low = 0;
    let high = this.#tokens.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (tokenOrder(this.#tokens[middle]!, station.token) < 0) low = middle + 1;
      else high = middle;
    }
    // A new array, not splice: the old one may be what the current frame is drawing from.
    this.#tokens = [...this.#tokens.slice(0, low), station.token, ...this.#tokens.slice(low)];
    if (station.status === 'online') this.#online += 1;
    this.#maxTokenLength = Math.max(this.#maxTokenLength, station.token.length);
    this.#membershipVersion += 1;
  }

  #countChange(before: SimStation | undefined, after: SimStation | undefined): void {
    this.#online += (after?.status === 'online' ? 1 : 0) - (before?.status === 'online' ? 1 : 0);
  }
}
