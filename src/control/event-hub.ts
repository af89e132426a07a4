/**
 * Turns what crosses the broker into the events of the event stream (docs/control-plane.md): station
 * status, lock state, commands sent, acked, rejected or timed out, faults applied; plus control
 * actions and API request summaries reported in-process. It also keeps the last status of every
 * station, which is what `/sim/v1/health` reads.
 */
import type { Fixture } from '../fixture/fixture-schema.js';
import type { StationStatus } from '../fixture/statuses.js';
import { groupTopics, parsePayload, type StationTopics } from '../mqtt/topics.js';
import { parseSimMessage } from './control-protocol.js';
import type { Clock } from '../shared/clock.js';
import type { SimStreamEvent } from './wire-schemas.js';

export type { SimStreamEvent };

/** What the hub is told to emit: an event of the stream (wire-schemas.ts) without its `time`, which the hub stamps. */
export type SimStreamEventInput = WithoutTime<Exclude<SimStreamEvent, { type: 'snapshot' }>>;
/** Distributes the union over its members, so `Omit` keeps each member's own fields. */
type WithoutTime<T> = T extends unknown ? Omit<T, 'time'> : never;

type Listener = (event: SimStreamEvent) => void;
/** A raw MQTT message of the contract, classified. */
export interface ContractMessage {
  topic: string;
  payload: string;
  kind: 'status' | 'lockState' | 'unlock' | 'acks' | 'simEvent';
  token: string;
  lockId?: string;
}
type MessageListener = (message: ContractMessage) => void;

export interface EventHubOptions {
  fixture: Fixture;
  clock: Clock;
  /**
   * After how long an unlock command without an ack is reported as `command.timeout`.
   * @default fixture.api.commandTimeoutMs
   */
  commandTimeoutMs?: number;
  /** Commands tracked at once; the oldest are forgotten past it, so memory stays bounded. @default 10000 */
  maxTrackedCommands?: number;
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

interface TrackedCommand {
  token: string;
  lockId: string;
  sentAt: number;
  timer: ReturnType<Clock['setTimeout']>;
}

export class EventHub {
  readonly #listeners = new Set<Listener>();
  readonly #messageListeners = new Set<MessageListener>();
  readonly #clock: Clock;
  /** One entry per distinct set of topic templates in the fixture. */
  readonly #routes: StationTopics[];
  readonly #statuses = new Map<string, StationStatus>();
  /** Per station that has changed status since its first report: when it last did, and the status it had held steadily before. */
  readonly #changes = new Map<string, { since: number; steady: StationStatus | undefined }>();
  readonly #wallClock: () => number;
  /** The fixture's stations: only their statuses are kept (anyone on the broker can publish others). */
  readonly #tokens: ReadonlySet<string>;
  readonly #commands = new Map<string, TrackedCommand>();
  readonly #timeoutMs: number;
  readonly #maxTracked: number;
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

  constructor(options: EventHubOptions) {
    this.#clock = options.clock;
    this.#timeoutMs = options.commandTimeoutMs ?? options.fixture.api.commandTimeoutMs;
    this.#maxTracked = options.maxTrackedCommands ?? 10_000;
    this.#routes = groupTopics(options.fixture.stations).distinct;
    this.#tokens = new Set(options.fixture.stations.map((station) => station.token));
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
      for (const token of this.#tokens) {
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

  /**
   * Records a change the control plane made (a `/sim/v1` call or a scenario step, once the fleet
   * answered it): the station's target is then the status it was put in, whenever the broker
   * connection is lost, with no need to have held it for `STEADY_STATUS_MS`. `token` undefined
   * with a reset means the whole fleet, back to the fixture's starting statuses.
   */
  controlled(token: string | undefined, action: { action: string; online?: boolean }): void {
    const at = this.#wallClock();
    if (action.action === 'reset') {
      for (const station of token === undefined ? this.#tokens : [token]) {
        const initial = this.#initial.get(station);
        if (initial !== undefined) this.#intended.set(station, { status: initial, at });
      }
      return;
    }
    if (token === undefined || !this.#tokens.has(token)) return;
    // A reboot comes back on its own: the station is expected online.
    if (action.action === 'connection') this.#intended.set(token, { status: action.online ? 'online' : 'offline', at });
    else if (action.action === 'reboot') this.#intended.set(token, { status: 'online', at });
  }

  #rearm(): void {
    let awaited = 0;
    for (const target of this.#target.values()) if (target === 'online') awaited += 1;
    this.#awaitedOnline = awaited;
    // Nobody to wait for: before the fleet was ever heard of, one report shows a fleet process runs.
    this.#awaitingAnyReport = awaited === 0 && !this.#everCameUp;
    this.#cameUp = awaited === 0 && !this.#awaitingAnyReport;
  }

  /** Simulated time now, as the events' `time`. */
  time(): string {
    return new Date(this.#clock.now()).toISOString();
  }

  subscribe(listener: Listener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Every contract message as it crosses the broker (for transcripts). */
  onContractMessage(listener: MessageListener): () => void {
    this.#messageListeners.add(listener);
    return () => this.#messageListeners.delete(listener);
  }

  /** Last reported status of each station that has reported one. */
  get statuses(): ReadonlyMap<string, StationStatus> {
    return this.#statuses;
  }

  /** True while anybody listens to the stream; events emitted without a listener are dropped. */
  get listening(): boolean {
    return this.#listeners.size > 0;
  }

  emit(event: SimStreamEventInput): void {
    if (this.#listeners.size === 0) return;
    const full = { ...event, time: this.time() } as SimStreamEvent;
    for (const listener of this.#listeners) listener(full);
  }

  /** Feeds one MQTT message in. */
  handleMessage(topic: string, payload: Buffer): void {
    if (this.#messageListeners.size > 0) {
      const message = this.#classify(topic, payload);
      if (message) for (const listener of this.#messageListeners) listener(message);
    }
    if (topic.startsWith('station-sim/events/')) {
      const event = parseSimMessage('event', payload);
      if (event) this.emit({ type: 'fault.applied', token: topic.slice('station-sim/events/'.length), ...event });
      return;
    }
    // With nobody listening, only the statuses (for health) are worth the parsing.
    const listening = this.#listeners.size > 0;
    for (const topics of this.#routes) {
      const status = topics.match('status', topic);
      if (status) {
        const body = parsePayload('status', payload);
        if (!body) return;
        if (this.#tokens.has(status.token)) this.#setStatus(status.token, body.status);
        if (!listening) return;
        this.emit({ type: 'station.status', token: status.token, status: body.status, batteryVoltage: body.batteryVoltage, lastConnection: body.lastConnection });
        return;
      }
      if (!listening) continue;
      const lock = topics.match('lockState', topic);
      if (lock?.lockId !== undefined) {
        const body = parsePayload('lockState', payload);
        if (body) this.emit({ type: 'lock.state', token: lock.token, lockId: lock.lockId, status: body.status, lastUpdated: body.lastUpdated });
        return;
      }
      const unlock = topics.match('unlock', topic);
      if (unlock?.lockId !== undefined) {
        const body = parsePayload('unlock', payload);
        if (body) this.#sent(unlock.token, unlock.lockId, body.commandId);
        return;
      }
      const ack = topics.match('acks', topic);
      if (ack) {
        const body = parsePayload('acks', payload);
        if (body) this.#acked(ack.token, body);
        return;
      }
    }
  }

  #setStatus(token: string, status: StationStatus): void {
    if (this.#awaitingAnyReport) {
      this.#awaitingAnyReport = false;
      this.#cameUp = true;
      this.#everCameUp = true;
    }
    const before = this.#statuses.get(token);
    if (before === status) return; // a heartbeat: nothing changes
    this.#statuses.set(token, status);
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

  #classify(topic: string, payload: Buffer): ContractMessage | undefined {
    const text = payload.toString();
    if (topic.startsWith('station-sim/events/')) return { topic, payload: text, kind: 'simEvent', token: topic.slice('station-sim/events/'.length) };
    for (const topics of this.#routes) {
      for (const kind of ['status', 'lockState', 'unlock', 'acks'] as const) {
        const address = topics.match(kind, topic);
        if (address) return { topic, payload: text, kind, ...address };
      }
    }
    return undefined;
  }

  /** Stops the command timers. */
  stop(): void {
    for (const command of this.#commands.values()) this.#clock.clearTimeout(command.timer);
    this.#commands.clear();
    this.#listeners.clear();
  }

  #sent(token: string, lockId: string, commandId: string): void {
    this.emit({ type: 'command.sent', token, lockId, commandId });
    // A redelivered command keeps its first send time.
    if (this.#commands.has(commandId)) return;
    const sentAt = this.#clock.now();
    const timer = this.#clock.setTimeout(() => {
      this.#commands.delete(commandId);
      this.emit({ type: 'command.timeout', token, lockId, commandId, ms: this.#clock.now() - sentAt });
    }, this.#timeoutMs);
    this.#commands.set(commandId, { token, lockId, sentAt, timer });
    if (this.#commands.size > this.#maxTracked) {
      const [oldestId, oldest] = this.#commands.entries().next().value as [string, TrackedCommand];
      this.#clock.clearTimeout(oldest.timer);
      this.#commands.delete(oldestId);
    }
  }

  #acked(token: string, ack: { commandId: string; lockId: string; accepted: boolean; reason?: string }): void {
    const command = this.#commands.get(ack.commandId);
    // A second ack of the same command (redelivery) is still reported, timed from the first send.
    // Commands are tracked only while somebody listens (it costs a timer each); one sent before
    // that has no known send time, so its ack carries no `ms` rather than a made-up one.
    const timing = command ? { ms: this.#clock.now() - command.sentAt } : {};
    if (command) {
      this.#clock.clearTimeout(command.timer);
      this.#commands.delete(ack.commandId);
    }
    if (ack.accepted) this.emit({ type: 'command.acked', token, lockId: ack.lockId, commandId: ack.commandId, ...timing });
    else this.emit({ type: 'command.rejected', token, lockId: ack.lockId, commandId: ack.commandId, reason: ack.reason ?? 'rejected', ...timing });
  }
}
