/**
 * The pure firmware model of one station (docs/design.md rule 2): lock state machine, delays, battery and
 * heartbeat, with no knowledge of MQTT. It is driven by `handleUnlock`, `connected` and
 * `disconnected`, and reports every change through the `output` callbacks, which the MQTT binding
 * turns into publications. Time and randomness come in as options.
 */
import type { Clock, TimerHandle } from '../shared/clock.js';
import type { Random } from './random.js';
import { FaultSet } from './faults.js';
import type { Fault, FaultKind, FaultSpec } from '../contract/fault-schema.js';
import type { Delay, StationConfig } from '../fixture/fixture-schema.js';
import type { LockStatus, StationStatus } from '../contract/statuses.js';
import type { PhysicalAction } from '../contract/station-actions.js';
import { parseIsoUtc, type AckPayload, type LockStatePayload, type StatusPayload } from '../contract/payloads.js';

/** Where the model's outputs go. */
export interface StationOutput {
  status(payload: StatusPayload): void;
  lockState(payload: LockStatePayload): void;
  ack(payload: AckPayload): void;
  /** A fault fired; for the event stream. @default ignored */
  faultApplied?(event: { fault: FaultKind; lockId?: string; commandId?: string }): void;
  /** A lock's phase changed, or an accepted unlock left it as it was; for the event stream. @default ignored */
  lockPhase?(event: LockPhase): void;
  /** Whether anybody reads lock phases now; none is built while this says no. @default yes, when `lockPhase` is given */
  wantsLockPhases?(): boolean;
}

/**
 * Which of a lock's timers runs (`pending`, as in a snapshot), with the lock state it goes with:
 * the event stream pairs it with the contract's state message by `status` and `lastUpdated`, and
 * with the ack of the unlock that caused it by `commandId`.
 */
export interface LockPhase {
  lockId: string;
  pending: 'opening' | 'open' | null;
  status: LockStatus;
  lastUpdated: string;
  /** The accepted unlock this phase follows from (every accepted unlock reports one, changed or not). */
  commandId?: string;
}

interface OutputPayloads {
  status: StatusPayload;
  lockState: LockStatePayload;
  ack: AckPayload;
}
type OutputKind = keyof OutputPayloads;


export interface StationModelOptions {
  config: StationConfig;
  clock: Clock;
  random: Random;
  output: StationOutput;
  /**
   * How many recent command ids are remembered to recognise a QoS 1 redelivery.
   * QoS 1 redelivery comes within seconds, so a short memory is enough; each entry costs about 110
   * bytes, which 100,000 stations under sustained load pay 100,000 times (bench/README.md).
   * @default 32
   */
  rememberedCommands?: number;
  /**
   * Every heartbeat interval is multiplied by this (the fleet's heartbeat budget,
   * src/fleet/heartbeat-budget.ts). @default 1
   */
  heartbeatScale?: number;
}

/**
 * Why a station refuses an unlock; carried in the ack's `reason`. `expired`: the command's `sentAt`
 * is older than `behaviour.commandTtlMs`; `invalid`: its `sentAt` is not ISO 8601 UTC, or lies
 * further in the future than `COMMAND_CLOCK_SKEW_MS`.
 */
export type RejectReason = 'jammed' | 'low_battery' | 'unknown_lock' | 'offline' | 'expired' | 'invalid';

/** How far ahead of the station's clock a command's `sentAt` may be (the service's clock may run ahead). */
export const COMMAND_CLOCK_SKEW_MS = 5 * 60_000;

interface LockState {
  lockId: string;
  status: LockStatus;
  lastUpdated: number;
  /** The unlock delay or relock timer currently running, if any, and when it falls due. */
  timer: TimerHandle | undefined;
  dueAt: number;
  phase: 'idle' | 'opening' | 'open';
}

/** A timer of the model, for snapshots. */
export interface PendingTimer {
  kind: 'unlock' | 'relock' | 'heartbeat';
  lockId?: string;
  dueAt: string;
}

/** A read-only view of the model, for snapshots and tests. */
export interface StationSnapshot {
  token: string;
  stationId: number;
  status: StationStatus;
  batteryVoltage: number;
  lastConnection: string;
  locks: { lockId: string; status: LockStatus; lastUpdated: string; pending: 'opening' | 'open' | null }[];
  battery: StationConfig['behaviour']['battery'];
  faults: Fault[];
  timers: PendingTimer[];
  /** The station's link, in a few words, when its fixture gives it one (set by the MQTT binding, which owns the link). */
  link?: string;
}

const HOUR_MS = 3_600_000;

export class StationModel {
  readonly config: StationConfig;
  readonly #clock: Clock;
  readonly #random: Random;
  readonly #output: StationOutput;
  readonly #locks = new Map<string, LockState>();
  /** Lock and command id (`commandKey`) → the ack sent for it; insertion order makes it a simple bounded LRU. */
  /** Made on the first command: most stations of a large fleet never get one. */
  #seenCommands: Map<string, AckPayload> | undefined;
  readonly #rememberedCommands: number;
  #status: StationStatus = 'offline';
  #batteryVoltage: number;
  /** The voltage in the last status this station published; NaN before the first. */
  #reportedVoltage = Number.NaN;
  #batteryAt: number;
  #lastConnection: number;
  #heartbeat: TimerHandle | undefined;
  #heartbeatDue = 0;
  readonly #heartbeatScale: number;
  readonly #faults = new FaultSet();
  /** Outputs held back by a latency fault; cleared on stop. */
  readonly #delayed = new Set<TimerHandle>();
  /** Simulated time until which outputs are held back behind a delayed one (latency fault); 0 when none is. */
  #heldUntil = 0;

  constructor(options: StationModelOptions) {
    this.#heartbeatScale = options.heartbeatScale ?? 1;
    this.config = options.config;
    this.#clock = options.clock;
    this.#random = options.random;
    this.#output = options.output;
    this.#rememberedCommands = options.rememberedCommands ?? 32;
    const now = this.#clock.now();
    this.#batteryVoltage = options.config.batteryVoltage;
    this.#batteryAt = now;
    this.#lastConnection = now;
    this.#initLocks(now);
  }

  #initLocks(now: number): void {
    this.#locks.clear();
    for (const lock of this.config.locks) {
      this.#locks.set(lock.lockId, { lockId: lock.lockId, status: lock.status, lastUpdated: now, timer: undefined, dueAt: 0, phase: 'idle' });
    }
  }

  get status(): StationStatus {
    return this.#status;
  }

  get batteryVoltage(): number {
    this.#drainOverTime();
    return this.#batteryVoltage;
  }

  /** The connection is up (since `at`, when it was asked for): publish status and every lock, start the heartbeat. */
  connected(at = this.#clock.now()): void {
    this.#status = 'online';
    this.#lastConnection = at;
    this.#publishStatus();
    for (const lock of this.#locks.values()) this.#publishLock(lock);
    this.#scheduleHeartbeat();
  }

  /** The connection is down (or going down). Timers of locks keep running: the hardware does not stop. */
  disconnected(): void {
    this.#status = 'offline';
    this.#stopHeartbeat();
  }

  /** The status payload as it stands, e.g. for a last will or a clean shutdown. */
  statusPayload(status: StationStatus = this.#status): StatusPayload {
    this.#drainOverTime();
    return {
      stationId: this.config.stationId,
      status,
      batteryVoltage: round(this.#batteryVoltage),
      lastConnection: new Date(this.#lastConnection).toISOString(),
    };
  }

  lockPayload(lockId: string): LockStatePayload | undefined {
    const lock = this.#locks.get(lockId);
    return lock && toLockPayload(lock);
  }

  /**
   * An unlock command arrived. The ack goes out at once; a command id already seen (QoS 1
   * redelivery, docs/design.md) is acknowledged again with the same answer and not executed again.
   *
   * `sentAt` (the service's clock) is checked against this station's clock, the simulated one: a
   * command older than `behaviour.commandTtlMs` is refused `expired` and never acted on, so a
   * command that waited in a persistent session or a paused process does not open a lock after
   * its caller gave up. A command without `sentAt` is taken as sent now: external publishers that
   * predate the field keep working (docs/mqtt-security.md, "Commands sent while a station is
   * offline"). One with a malformed `sentAt`, or from the future beyond the skew, is `invalid`.
   */
  handleUnlock(lockId: string, commandId: string, sentAt?: string): void {
    // The same id for another lock is another command (a client that reuses ids), not a
    // redelivery: commands are remembered by lock and id, so one does not overwrite the other.
    const earlier = this.#seenCommands?.get(commandKey(lockId, commandId));
    if (earlier) {
      this.#send(lockId, 'ack', earlier);
      const lock = this.#locks.get(lockId);
      if (earlier.accepted && lock) this.#reportPhase(lock, commandId);
      return;
    }
    const stale = this.#staleness(sentAt);
    if (stale) {
      const refused: AckPayload = { commandId, lockId, accepted: false, reason: stale };
      this.#remember(commandKey(lockId, commandId), refused);
      this.#send(lockId, 'ack', refused);
      return;
    }
    const random = this.#random;
    const fired = (kind: FaultKind): boolean => {
      const fault = this.#faults.take(kind, lockId, random);
      if (fault) this.#output.faultApplied?.({ fault: kind, lockId, commandId });
      return fault !== undefined;
    };
    // A dropped command leaves no trace, so a redelivery of it is treated as new.
    if (fired('dropCommands')) return;
    let ack = this.#decide(lockId, commandId);
    const rejectFault = ack.accepted ? this.#faults.take('reject', lockId, random) : undefined;
    if (rejectFault) {
      this.#output.faultApplied?.({ fault: 'reject', lockId, commandId });
      ack = { commandId, lockId, accepted: false, reason: rejectFault.reason ?? 'rejected' };
    }
    const neverOpen = ack.accepted && fired('ackNoOpen');
    this.#remember(commandKey(lockId, commandId), ack);
    const delay = this.#faults.take('delayAcks', lockId, random);
    const respond = (): void => {
      this.#send(lockId, 'ack', ack);
      if (!ack.accepted) return;
      const lock = this.#locks.get(lockId)!;
      if (!neverOpen) this.#execute(lock);
      this.#reportPhase(lock, commandId);
    };
    if (!delay) {
      respond();
      return;
    }
    this.#output.faultApplied?.({ fault: 'delayAcks', lockId, commandId });
    this.#later(delay.delayMs ?? 0, respond);
  }

  /** Something physical happens to a lock. Returns false for an unknown lock. */
  physical(lockId: string, action: PhysicalAction): boolean {
    const lock = this.#locks.get(lockId);
    if (!lock) return false;
    this.#cancelLockTimer(lock);
    switch (action) {
      case 'jam':
        this.#setLock(lock, 'jammed');
        break;
      case 'unjam':
      case 'forceClose':
        this.#setLock(lock, 'locked');
        break;
      case 'forceOpen':
        // The door was pushed open: the latch reports unlocked and relocks as after any opening.
        this.#setLock(lock, 'unlocked');
        lock.phase = 'open';
        this.#scheduleRelock(lock);
        break;
    }
    this.#reportPhase(lock);
    return true;
  }

  /** Sets the battery voltage, as a charger or a drained cell would. */
  setBattery(volts: number): void {
    this.#drainOverTime();
    this.#batteryVoltage = Math.max(0, volts);
    this.#publishStatus();
  }

  addFault(spec: FaultSpec): Fault {
    return this.#faults.add(spec);
  }

  removeFault(id: string): boolean {
    return this.#faults.remove(id);
  }

  clearFaults(): void {
    this.#faults.clear();
  }

  /**
   * Back to the fixture's starting state: battery, locks, no faults, nothing pending.
   *
   * An online station already in that state, with no fault and nothing held back, has published
   * everything it holds (each change is published as it happens), so the broker already retains
   * that state: it publishes nothing and keeps its timestamps, and only its heartbeat starts again.
   * A reset between tests touches few stations of a large fleet, and republishing every one cost
   * several MQTT messages a station (10,000 stations took seconds; docs/control-plane.md, "Reset").
   */
  reset(): void {
    const online = this.#status === 'online';
    const untouched = online && this.#inStartingState();
    this.stop();
    this.#faults.clear();
    this.#seenCommands = undefined;
    const now = this.#clock.now();
    // (What drained below the published rounding goes back too.)
    this.#batteryVoltage = this.config.batteryVoltage;
    this.#batteryAt = now;
    if (untouched) {
      this.#scheduleHeartbeat();
      return;
    }
    this.#initLocks(now);
    for (const lock of this.#locks.values()) this.#reportPhase(lock);
    if (online) this.connected();
  }

  /**
   * True when a reset would change nothing that was published: the battery reads as it starts,
   * every lock is idle in its starting status, no fault is in force and no message is held back by
   * one (a held message may yet change what the broker has).
   */
  #inStartingState(): boolean {
    if (this.#faults.list().length > 0 || this.#delayed.size > 0 || this.#heldUntil > this.#clock.now()) return false;
    if (this.statusPayload().batteryVoltage !== round(this.config.batteryVoltage) || this.#reportedVoltage !== round(this.config.batteryVoltage)) return false;
    if (this.#locks.size !== this.config.locks.length) return false;
    for (const lock of this.config.locks) {
      const state = this.#locks.get(lock.lockId);
      if (!state || state.status !== lock.status || state.phase !== 'idle' || state.timer !== undefined) return false;
    }
    return true;
  }

  /** Stops every timer. The model can be dropped afterwards. */
  stop(): void {
    this.#stopHeartbeat();
    for (const lock of this.#locks.values()) this.#cancelLockTimer(lock);
    for (const handle of this.#delayed) this.#clock.clearTimeout(handle);
    this.#delayed.clear();
    this.#heldUntil = 0;
  }

  snapshot(): StationSnapshot {
    const status = this.statusPayload();
    return {
      token: this.config.token,
      stationId: this.config.stationId,
      status: status.status,
      batteryVoltage: status.batteryVoltage,
      lastConnection: status.lastConnection,
      locks: [...this.#locks.values()].map((lock) => ({
        ...toLockPayload(lock),
        pending: lock.phase === 'idle' ? null : lock.phase,
      })),
      battery: { ...this.config.behaviour.battery },
      faults: this.#faults.list(),
      timers: this.#timers(),
    };
  }

  #timers(): PendingTimer[] {
    const timers: PendingTimer[] = [];
    for (const lock of this.#locks.values()) {
      if (lock.timer) {
        timers.push({ kind: lock.phase === 'opening' ? 'unlock' : 'relock', lockId: lock.lockId, dueAt: new Date(lock.dueAt).toISOString() });
      }
    }
    if (this.#heartbeat) timers.push({ kind: 'heartbeat', dueAt: new Date(this.#heartbeatDue).toISOString() });
    return timers;
  }

  /** Why a command's `sentAt` rules it out (see `handleUnlock`), or undefined. */
  #staleness(sentAt: string | undefined): 'expired' | 'invalid' | undefined {
    if (sentAt === undefined) return undefined;
    const at = parseIsoUtc(sentAt);
    if (at === undefined) return 'invalid';
    const age = this.#clock.now() - at;
    if (age > this.config.behaviour.commandTtlMs) return 'expired';
    if (age < -COMMAND_CLOCK_SKEW_MS) return 'invalid';
    return undefined;
  }

  #decide(lockId: string, commandId: string): AckPayload {
    const lock = this.#locks.get(lockId);
    const reject = (reason: RejectReason): AckPayload => ({ commandId, lockId, accepted: false, reason });
    if (!lock) return reject('unknown_lock');
    if (lock.status === 'jammed') return reject('jammed');
    if (this.batteryVoltage < this.config.behaviour.battery.cutoffV) return reject('low_battery');
    return { commandId, lockId, accepted: true };
  }

  #execute(lock: LockState): void {
    // An unlock while opening changes nothing; while open it restarts the relock time, as a
    // real latch held by its solenoid would.
    if (lock.phase === 'opening') return;
    this.#batteryVoltage = Math.max(0, this.batteryVoltage - this.config.behaviour.battery.drainPerUnlockV);
    // The firmware reports its battery when the reading changes: with the default drain every
    // unlock does, with no drain there is nothing new to say (the retained status still holds).
    if (round(this.#batteryVoltage) !== this.#reportedVoltage) this.#publishStatus();
    if (lock.phase === 'open') {
      this.#scheduleRelock(lock);
      return;
    }
    lock.phase = 'opening';
    const delay = this.#draw(this.config.behaviour.unlockDelayMs);
    lock.dueAt = this.#clock.now() + delay;
    lock.timer = this.#clock.setTimeout(() => {
      lock.timer = undefined;
      if (lock.status === 'jammed') {
        lock.phase = 'idle';
        this.#reportPhase(lock);
        return;
      }
      this.#setLock(lock, 'unlocked');
      lock.phase = 'open';
      this.#scheduleRelock(lock);
      this.#reportPhase(lock);
    }, delay);
  }

  #scheduleRelock(lock: LockState): void {
    if (lock.timer) this.#clock.clearTimeout(lock.timer);
    const delay = this.#draw(this.config.behaviour.relockMs);
    lock.dueAt = this.#clock.now() + delay;
    lock.timer = this.#clock.setTimeout(() => {
      lock.timer = undefined;
      lock.phase = 'idle';
      if (lock.status === 'unlocked') this.#setLock(lock, 'locked');
      this.#reportPhase(lock);
    }, delay);
  }

  #cancelLockTimer(lock: LockState): void {
    if (lock.timer) this.#clock.clearTimeout(lock.timer);
    lock.timer = undefined;
    lock.phase = 'idle';
  }

  /** Runs `action` after `ms` of simulated time; cancelled by stop(). */
  #later(ms: number, action: () => void): void {
    const handle = this.#clock.setTimeout(() => {
      this.#delayed.delete(handle);
      action();
    }, ms);
    this.#delayed.add(handle);
  }

  /**
   * Sends one output, through the output faults: `latency` holds it back, `duplicateState` sends a
   * lock state twice. What the station sends stays in the order it was sent, as over one network
   * connection: an output held back holds back the ones after it (so an ack still comes before
   * the `unlocked` it leads to). Without faults or anything held back (the usual case, and the
   * hot path under load) it is a direct call.
   */
  #send<K extends OutputKind>(lockId: string | undefined, kind: K, payload: OutputPayloads[K]): void {
    if (this.#heldUntil === 0 && this.#faults.empty) {
      this.#emit(kind, payload);
      return;
    }
    const now = this.#clock.now();
    const random = this.#random;
    const latency = this.#faults.take('latency', lockId, random);
    const twice = kind === 'lockState' && this.#faults.take('duplicateState', lockId, random) !== undefined;
    const go = (): void => {
      this.#emit(kind, payload);
      if (twice) this.#emit(kind, payload);
    };
    if (twice) this.#output.faultApplied?.({ fault: 'duplicateState', ...(lockId ? { lockId } : {}) });
    if (latency) this.#output.faultApplied?.({ fault: 'latency', ...(lockId ? { lockId } : {}) });
    const due = Math.max(now + (latency?.delayMs ?? 0), this.#heldUntil);
    if (due <= now) {
      go();
      return;
    }
    this.#heldUntil = due;
    this.#later(due - now, () => {
      go();
      if (this.#heldUntil === due) this.#heldUntil = 0; // the last one held back went out
    });
  }

  #emit<K extends OutputKind>(kind: K, payload: OutputPayloads[K]): void {
    (this.#output[kind] as (payload: OutputPayloads[K]) => void).call(this.#output, payload);
  }

  #setLock(lock: LockState, status: LockStatus): void {
    lock.status = status;
    lock.lastUpdated = this.#clock.now();
    this.#publishLock(lock);
  }

  #scheduleHeartbeat(): void {
    this.#stopHeartbeat();
    const interval = this.config.behaviour.heartbeatMs * this.#heartbeatScale;
    if (interval <= 0) return;
    this.#heartbeatDue = this.#clock.now() + interval;
    this.#heartbeat = this.#clock.setTimeout(() => {
      this.#heartbeat = undefined;
      if (this.#status !== 'online') return;
      this.#lastConnection = this.#clock.now();
      this.#publishStatus();
      this.#scheduleHeartbeat();
    }, interval);
  }

  #stopHeartbeat(): void {
    if (this.#heartbeat) this.#clock.clearTimeout(this.#heartbeat);
    this.#heartbeat = undefined;
  }

  #drainOverTime(): void {
    const now = this.#clock.now();
    const hours = (now - this.#batteryAt) / HOUR_MS;
    if (hours > 0) {
      this.#batteryVoltage = Math.max(0, this.#batteryVoltage - hours * this.config.behaviour.battery.drainPerHourV);
      this.#batteryAt = now;
    }
  }

  #remember(key: string, ack: AckPayload): void {
    const seen = (this.#seenCommands ??= new Map<string, AckPayload>());
    seen.set(key, ack);
    if (seen.size > this.#rememberedCommands) {
      const oldest = seen.keys().next().value;
      if (oldest !== undefined) seen.delete(oldest);
    }
  }

  #draw(delay: Delay): number {
    return typeof delay === 'number' ? delay : this.#random.int(delay.min, delay.max);
  }

  #publishStatus(): void {
    if (this.#status !== 'online') return;
    const payload = this.statusPayload();
    this.#reportedVoltage = payload.batteryVoltage;
    this.#send(undefined, 'status', payload);
  }

  /** Not gated by the connection or the output faults: it is the simulator's report, not the station's. */
  #reportPhase(lock: LockState, commandId?: string): void {
    if (!this.#output.lockPhase || this.#output.wantsLockPhases?.() === false) return;
    this.#output.lockPhase({
      ...toLockPayload(lock),
      pending: lock.phase === 'idle' ? null : lock.phase,
      ...(commandId === undefined ? {} : { commandId }),
    });
  }

  #publishLock(lock: LockState): void {
    if (this.#status !== 'online') return;
    const payload = toLockPayload(lock);
    this.#send(lock.lockId, 'lockState', payload);
  }
}

function toLockPayload(lock: LockState): LockStatePayload {
  return { lockId: lock.lockId, status: lock.status, lastUpdated: new Date(lock.lastUpdated).toISOString() };
}

/** Volts to the centivolt, as a station's ADC would report them. */
function round(volts: number): number {
  return Math.round(volts * 100) / 100;
}

/** What identifies a command to a station: its lock and its id (a lock id holds no NUL, so the key is unambiguous). */
function commandKey(lockId: string, commandId: string): string {
  return `${lockId}\0${commandId}`;
}
