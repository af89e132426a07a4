/**
 * Turns what crosses the broker into the events of the event stream (docs/control-plane.md): station
 * status, lock state, commands sent, acked, rejected or timed out, faults applied; plus control
 * actions and API request summaries reported in-process. The statuses it hears go on to fleet
 * readiness (fleet-readiness.ts), which is what `/sim/v1/health` reads.
 */
import type { Fixture } from '../fixture/fixture-schema.js';
import { groupTopics, parsePayload, type StationTopics } from '../contract/topics.js';
import { parseSimMessage, type SimLockPhaseEvent } from './control-protocol.js';
import { SIM_TOPICS } from '../contract/sim-topics.js';
import type { Clock } from '../shared/clock.js';
import type { SimStreamEvent } from './wire-schemas.js';
import { FleetReadiness } from './fleet-readiness.js';

/** Where a simulator event's topic ends and its station's token begins. */
const EVENTS_PREFIX = SIM_TOPICS.events('');

export type { SimStreamEvent };

/** What the hub is told to emit: an event of the stream (wire-schemas.ts) without its `time`, which the hub stamps. */
export type SimStreamEventInput = WithoutTime<Exclude<SimStreamEvent, { type: 'snapshot' }>>;
/** Distributes the union over its members, so `Omit` keeps each member's own fields. */
type WithoutTime<T> = T extends unknown ? Omit<T, 'time'> : never;

/** The fields of an `api.request` event, without `type` and `time`. */
export type ApiRequestFields = WithoutTime<Omit<Extract<SimStreamEvent, { type: 'api.request' }>, 'type'>>;

/**
 * Who takes the commands, acks and requests as they come, unparsed and unformatted (the request
 * journal): `at` is simulated time in ms, payloads are as they crossed the broker.
 */
export interface CommandTraffic {
  request(fields: ApiRequestFields, at: number): void;
  sent(token: string, lockId: string, payload: Buffer, at: number): void;
  acked(token: string, payload: Buffer, at: number): void;
  /** When the command was sent, if it is still known (for an ack of a command sent before the stream had a listener). */
  sentAt?(token: string, commandId: string): number | undefined;
}

type Listener = (event: SimStreamEvent) => void;
type EventType = SimStreamEvent['type'];
/** The command events: a narrow listener of any of them needs the unlock and ack topics parsed (the request journal takes the raw traffic instead). */
const COMMAND_TYPES: ReadonlySet<EventType> = new Set(['command.sent', 'command.acked', 'command.rejected', 'command.timeout']);
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
  /** Real time, for fleet readiness (see `FleetReadinessOptions.wallClock`). @default Date.now */
  wallClock?: () => number;
  /**
   * How long an accepted ack waits for the lock phase its station reports with it, before it is
   * reported with the phase the hub expects (see "Lock phases" in EventHub).
   * @default 1000
   */
  phaseWaitMs?: number;
}

type Pending = SimLockPhaseEvent['pending'];

interface HeldAck {
  token: string;
  lockId: string;
  commandId: string;
  timing: { ms?: number };
  timer: ReturnType<Clock['setTimeout']>;
}

interface TrackedCommand {
  token: string;
  lockId: string;
  sentAt: number;
  timer: ReturnType<Clock['setTimeout']>;
}

export class EventHub {
  readonly #listeners = new Set<Listener>();
  /**
   * Listeners of some event types only, by type. They do not make the hub `listening`: the
   * journal listens for good, and would otherwise make every lock state and status be parsed and
   * built into events that nobody reads (a reset of a large fleet publishes several per station).
   */
  readonly #narrow = new Map<EventType, Set<Listener>>();
  readonly #messageListeners = new Set<MessageListener>();
  readonly #traffic = new Set<CommandTraffic>();
  readonly #listeningListeners = new Set<(listening: boolean) => void>();
  readonly #clock: Clock;
  /** One entry per distinct set of topic templates in the fixture. */
  readonly #routes: StationTopics[];
  readonly #commands = new Map<string, TrackedCommand>();
  readonly #timeoutMs: number;
  readonly #maxTracked: number;
  /** What `/sim/v1/health` reads: the statuses this hub hears, and whether the fleet came up. */
  readonly readiness: FleetReadiness;
  /*
   * Lock phases. The phase of a lock (`pending`) lives in the station model; the fleet reports it on
   * `SIM_TOPICS.events(token)` (control-protocol.ts `SimLockPhaseEventSchema`), while the state
   * and the ack it goes with travel on the contract topics, through another client: either may
   * reach the hub first. So:
   * - a `lock.state` takes the phase whose `status` and `lastUpdated` name that very state, when it
   *   came first; otherwise the phase the model always has after that change (unlocked: `open`;
   *   locked, jammed: none), which is what the phase event will say when it comes. (A state
   *   republished while the lock opens, before the `opening` phase arrived, is the one this gets
   *   wrong; the phase's own lock state is kept per lock for the next one.)
   * - an accepted ack is paired with the phase reported for its commandId (every accepted unlock
   *   reports one): whichever of the two comes second emits `command.acked`. An ack waits at most
   *   `phaseWaitMs`, and is emitted before any later `lock.state` of its lock, so the stream
   *   keeps the station's order (ack before the `unlocked` it leads to). Stations whose fleet
   *   never reported a phase (no fleet agent) do not wait.
   */
  readonly #phases = new Map<string, SimLockPhaseEvent>();
  readonly #commandPhases = new Map<string, Pending>();
  readonly #heldAcks = new Map<string, HeldAck>();
  readonly #phaseTokens = new Set<string>();
  readonly #phaseWaitMs: number;

  constructor(options: EventHubOptions) {
    this.#clock = options.clock;
    this.#timeoutMs = options.commandTimeoutMs ?? options.fixture.api.commandTimeoutMs;
    this.#maxTracked = options.maxTrackedCommands ?? 10_000;
    this.#phaseWaitMs = options.phaseWaitMs ?? 1000;
    this.#routes = groupTopics(options.fixture.stations).distinct;
    this.readiness = new FleetReadiness({ fixture: options.fixture, ...(options.wallClock ? { wallClock: options.wallClock } : {}) });
  }

  /** Simulated time now, as the events' `time`. */
  time(): string {
    return new Date(this.#clock.now()).toISOString();
  }

  /** Every event from now on; with `types`, only events of those types (see `wants`). */
  subscribe(listener: Listener, types?: readonly EventType[]): () => void {
    if (types === undefined) {
      this.#listeners.add(listener);
      if (this.#listeners.size === 1) this.#listeningChanged(true);
      return () => {
        if (this.#listeners.delete(listener) && this.#listeners.size === 0) this.#listeningChanged(false);
      };
    }
    for (const type of types) {
      const set = this.#narrow.get(type) ?? new Set<Listener>();
      set.add(listener);
      this.#narrow.set(type, set);
    }
    return () => {
      for (const type of types) {
        const set = this.#narrow.get(type);
        set?.delete(listener);
        if (set?.size === 0) this.#narrow.delete(type);
      }
    };
  }

  /** True when an event of this type would reach anybody: build it only then. */
  wants(type: EventType): boolean {
    return this.#listeners.size > 0 || this.#narrow.has(type);
  }

  /**
   * Told when the hub starts to have a listener of every event (`true`) and when it has none left
   * (`false`): the fleet reports lock phases only meanwhile (control-protocol.ts, `listener`).
   */
  onListeningChange(listener: (listening: boolean) => void): () => void {
    this.#listeningListeners.add(listener);
    return () => this.#listeningListeners.delete(listener);
  }

  #listeningChanged(listening: boolean): void {
    // Phases stopped while nobody listened: until a station reports one again, its acks need not
    // wait for a phase (see "Lock phases").
    if (listening) this.#phaseTokens.clear();
    for (const listener of this.#listeningListeners) listener(listening);
  }

  /** Commands, acks and requests, raw, from now on (the request journal); returns a function that stops it. */
  onCommandTraffic(listener: CommandTraffic): () => void {
    this.#traffic.add(listener);
    return () => this.#traffic.delete(listener);
  }

  /** True when a `/v1` request's summary would reach anybody: build it only then. */
  get wantsRequests(): boolean {
    return this.#traffic.size > 0 || this.wants('api.request');
  }

  /** A `/v1` request's summary: to the raw listeners as it is, and as an `api.request` event to those who take it. */
  request(fields: ApiRequestFields): void {
    if (this.#traffic.size > 0) {
      const at = this.#clock.now();
      for (const listener of this.#traffic) listener.request(fields, at);
    }
    if (this.wants('api.request')) this.emit({ type: 'api.request', ...fields });
  }

  /** Every contract message as it crosses the broker (for transcripts). */
  onContractMessage(listener: MessageListener): () => void {
    this.#messageListeners.add(listener);
    return () => this.#messageListeners.delete(listener);
  }

  /** True while anybody listens to the stream; events emitted without a listener are dropped. */
  get listening(): boolean {
    return this.#listeners.size > 0;
  }

  emit(event: SimStreamEventInput): void {
    const narrow = this.#narrow.get(event.type);
    if (this.#listeners.size === 0 && narrow === undefined) return;
    const full = { ...event, time: this.time() } as SimStreamEvent;
    for (const listener of this.#listeners) listener(full);
    if (narrow) for (const listener of narrow) listener(full);
  }

  /** Feeds one MQTT message in. */
  handleMessage(topic: string, payload: Buffer): void {
    if (this.#messageListeners.size > 0) {
      const message = this.#classify(topic, payload);
      if (message) for (const listener of this.#messageListeners) listener(message);
    }
    if (topic.startsWith(EVENTS_PREFIX)) {
      const event = parseSimMessage('event', payload);
      const token = topic.slice(EVENTS_PREFIX.length);
      if (!event) return;
      if ('type' in event && event.type === 'judge.finding') {
        // The hub stamps its own time (the same simulated clock): the station's is in `time` of the finding it replaces.
        const { type: _type, time: _time, ...finding } = event;
        this.emit({ type: 'judge.finding', ...finding, token });
      } else if ('type' in event) this.#phase(token, event);
      else this.emit({ type: 'fault.applied', token, ...event });
      return;
    }
    // With nobody listening, only the statuses (for health) are worth the parsing, and the
    // commands when a narrow listener takes them.
    const listening = this.#listeners.size > 0;
    const commandEvents = listening || this.#wantsCommands();
    const commands = commandEvents || this.#traffic.size > 0;
    for (const topics of this.#routes) {
      const status = topics.match('status', topic);
      if (status) {
        const body = parsePayload('status', payload);
        if (!body || !this.readiness.plausible(status.token, body)) return;
        this.readiness.report(status.token, body.status);
        if (!listening) return;
        this.emit({ type: 'station.status', token: status.token, status: body.status, batteryVoltage: body.batteryVoltage, lastConnection: body.lastConnection });
        return;
      }
      if (!commands) continue;
      if (listening) {
        const lock = topics.match('lockState', topic);
        if (lock?.lockId !== undefined) {
          const body = parsePayload('lockState', payload);
          if (body) this.#lockState(lock.token, lock.lockId, body);
          return;
        }
      } else if (topics.match('lockState', topic)) {
        return;
      }
      const unlock = topics.match('unlock', topic);
      if (unlock?.lockId !== undefined) {
        for (const listener of this.#traffic) listener.sent(unlock.token, unlock.lockId, payload, this.#clock.now());
        if (!commandEvents) return;
        const body = parsePayload('unlock', payload);
        if (body) this.#sent(unlock.token, unlock.lockId, body.commandId);
        return;
      }
      const ack = topics.match('acks', topic);
      if (ack) {
        for (const listener of this.#traffic) listener.acked(ack.token, payload, this.#clock.now());
        if (!commandEvents) return;
        const body = parsePayload('acks', payload);
        if (body) this.#acked(ack.token, body);
        return;
      }
    }
  }

  #classify(topic: string, payload: Buffer): ContractMessage | undefined {
    const text = payload.toString();
    if (topic.startsWith(EVENTS_PREFIX)) return { topic, payload: text, kind: 'simEvent', token: topic.slice(EVENTS_PREFIX.length) };
    for (const topics of this.#routes) {
      for (const kind of ['status', 'lockState', 'unlock', 'acks'] as const) {
        const address = topics.match(kind, topic);
        if (address) return { topic, payload: text, kind, ...address };
      }
    }
    return undefined;
  }

  #recordedSend(token: string, commandId: string): number | undefined {
    for (const listener of this.#traffic) {
      const at = listener.sentAt?.(token, commandId);
      if (at !== undefined) return at;
    }
    return undefined;
  }

  #wantsCommands(): boolean {
    for (const type of COMMAND_TYPES) if (this.#narrow.has(type)) return true;
    return false;
  }

  /** Stops the command timers. */
  stop(): void {
    for (const command of this.#commands.values()) this.#clock.clearTimeout(command.timer);
    this.#commands.clear();
    for (const held of this.#heldAcks.values()) this.#clock.clearTimeout(held.timer);
    this.#heldAcks.clear();
    this.#listeners.clear();
    this.#narrow.clear();
    this.#listeningListeners.clear();
    this.#traffic.clear();
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
    // Commands are tracked only while somebody takes command events (it costs a timer each); for
    // one sent before that, the request journal may still know the send. Otherwise its ack
    // carries no `ms` rather than a made-up one.
    const sentAt = command?.sentAt ?? this.#recordedSend(token, ack.commandId);
    const timing = sentAt === undefined ? {} : { ms: this.#clock.now() - sentAt };
    if (command) {
      this.#clock.clearTimeout(command.timer);
      this.#commands.delete(ack.commandId);
    }
    if (ack.accepted) this.#ackAccepted(token, ack.lockId, ack.commandId, timing);
    else this.emit({ type: 'command.rejected', token, lockId: ack.lockId, commandId: ack.commandId, reason: ack.reason ?? 'rejected', ...timing });
  }

  #phase(token: string, phase: SimLockPhaseEvent): void {
    this.#phaseTokens.add(token);
    this.#phases.set(lockKey(token, phase.lockId), phase);
    if (phase.commandId === undefined) return;
    const key = commandKey(token, phase.lockId, phase.commandId);
    const held = this.#heldAcks.get(key);
    if (held) {
      this.#release(key, held, phase.pending);
      return;
    }
    if (!this.listening) return;
    this.#commandPhases.set(key, phase.pending);
    if (this.#commandPhases.size > this.#maxTracked) this.#commandPhases.delete(this.#commandPhases.keys().next().value as string);
  }

  #lockState(token: string, lockId: string, body: { status: SimLockPhaseEvent['status']; lastUpdated: string }): void {
    for (const [key, held] of this.#heldAcks) if (held.token === token && held.lockId === lockId) this.#release(key, held, this.#expectedAfterAck(token, lockId));
    const phase = this.#phases.get(lockKey(token, lockId));
    const pending = phase && phase.status === body.status && phase.lastUpdated === body.lastUpdated ? phase.pending : body.status === 'unlocked' ? 'open' : null;
    this.emit({ type: 'lock.state', token, lockId, status: body.status, lastUpdated: body.lastUpdated, pending });
  }

  #ackAccepted(token: string, lockId: string, commandId: string, timing: { ms?: number }): void {
    const key = commandKey(token, lockId, commandId);
    const reported = this.#commandPhases.get(key);
    if (reported !== undefined) {
      this.#commandPhases.delete(key);
      this.emit({ type: 'command.acked', token, lockId, commandId, ...timing, pending: reported });
      return;
    }
    if (!this.#phaseTokens.has(token) || !this.listening) {
      this.emit({ type: 'command.acked', token, lockId, commandId, ...timing, pending: this.#expectedAfterAck(token, lockId) });
      return;
    }
    // A redelivery's ack while the first still waits: the first goes out as expected, so neither is lost.
    const earlier = this.#heldAcks.get(key);
    if (earlier) this.#release(key, earlier, this.#expectedAfterAck(token, lockId));
    const held: HeldAck = { token, lockId, commandId, timing, timer: this.#clock.setTimeout(() => this.#release(key, held, this.#expectedAfterAck(token, lockId)), this.#phaseWaitMs) };
    this.#heldAcks.set(key, held);
  }

  #release(key: string, held: HeldAck, pending: Pending): void {
    this.#clock.clearTimeout(held.timer);
    this.#heldAcks.delete(key);
    this.emit({ type: 'command.acked', token: held.token, lockId: held.lockId, commandId: held.commandId, ...held.timing, pending });
  }

  /** Without its phase report: an accepted unlock opens an idle lock and leaves one opening or open as it is. */
  #expectedAfterAck(token: string, lockId: string): Pending {
    return this.#phases.get(lockKey(token, lockId))?.pending ?? 'opening';
  }
}

function lockKey(token: string, lockId: string): string {
  return `${token}\0${lockId}`;
}

function commandKey(token: string, lockId: string, commandId: string): string {
  return `${token}\0${lockId}\0${commandId}`;
}
