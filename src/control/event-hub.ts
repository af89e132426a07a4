/**
 * Turns what crosses the broker into the events of the event stream (docs/control-plane.md): station
 * status, lock state, commands sent, acked, rejected or timed out, faults applied; plus control
 * actions and API request summaries reported in-process. The statuses it hears go on to fleet
 * readiness (fleet-readiness.ts), which is what `/sim/v1/health` reads.
 */
import type { Fixture } from '../fixture/fixture-schema.js';
import { groupTopics, parsePayload, type StationTopics } from '../mqtt/topics.js';
import { parseSimMessage } from './control-protocol.js';
import type { Clock } from '../shared/clock.js';
import type { SimStreamEvent } from './wire-schemas.js';
import { FleetReadiness } from './fleet-readiness.js';

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
  /** Real time, for fleet readiness (see `FleetReadinessOptions.wallClock`). @default Date.now */
  wallClock?: () => number;
}

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
  readonly #commands = new Map<string, TrackedCommand>();
  readonly #timeoutMs: number;
  readonly #maxTracked: number;
  /** What `/sim/v1/health` reads: the statuses this hub hears, and whether the fleet came up. */
  readonly readiness: FleetReadiness;

  constructor(options: EventHubOptions) {
    this.#clock = options.clock;
    this.#timeoutMs = options.commandTimeoutMs ?? options.fixture.api.commandTimeoutMs;
    this.#maxTracked = options.maxTrackedCommands ?? 10_000;
    this.#routes = groupTopics(options.fixture.stations).distinct;
    this.readiness = new FleetReadiness({ fixture: options.fixture, ...(options.wallClock ? { wallClock: options.wallClock } : {}) });
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
      // A lock phase is no stream event of its own.
      if (event && !('type' in event)) this.emit({ type: 'fault.applied', token: topic.slice('station-sim/events/'.length), ...event });
      return;
    }
    // With nobody listening, only the statuses (for health) are worth the parsing.
    const listening = this.#listeners.size > 0;
    for (const topics of this.#routes) {
      const status = topics.match('status', topic);
      if (status) {
        const body = parsePayload('status', payload);
        if (!body) return;
        this.readiness.report(status.token, body.status);
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
