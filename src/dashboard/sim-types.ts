/**
 * What the control plane sends, as the dashboard sees it. These types mirror docs/control-plane.md
 * field for field and are kept in this one file on purpose: the dashboard must work against a
 * simulator running elsewhere, so it reads the documented wire format rather than the server's
 * internal types. If the server ever exports the same types, replace this file with imports.
 */

/** Station status values (docs/control-plane.md, README "MQTT topic contract"). */
export type StationStatus = 'online' | 'offline';

/** Lock status values. */
export type LockStatus = 'locked' | 'unlocked' | 'jammed';

/** `null`: idle; `opening`: the unlock delay is running; `open`: the relock time is running. */
export type LockPending = null | 'opening' | 'open';

export interface SimLock {
  lockId: string;
  status: LockStatus;
  /** ISO UTC. */
  lastUpdated: string;
  pending: LockPending;
}

/** The station's battery model: what each unlock and each hour costs, and below what it refuses. */
export interface BatteryModel {
  drainPerUnlockV: number;
  drainPerHourV: number;
  cutoffV: number;
}

export type FaultKind = 'dropCommands' | 'delayAcks' | 'reject' | 'ackNoOpen' | 'duplicateState' | 'latency';

/** A fault in force on a station (docs/control-plane.md, "Fault"). */
export interface Fault {
  id: string;
  kind: FaultKind;
  /** Only commands for this lock. */
  lockId?: string;
  /** 0..1: applies to each command with this probability. */
  probability?: number;
  /** Applies to the next `count` commands, then removes itself. */
  count?: number;
  /** For `delayAcks` and `latency`. */
  delayMs?: number;
  /** For `reject`. */
  reason?: string;
}

/** A `Fault` as asked for: the server assigns the `id`. */
export type FaultSpec = Omit<Fault, 'id'>;

/**
 * A timer running in the station. The document shows `relock` and `heartbeat`; the station model
 * also reports `unlock` while the unlock delay runs.
 */
export interface SimTimer {
  kind: 'unlock' | 'relock' | 'heartbeat';
  lockId?: string;
  /** ISO UTC. */
  dueAt: string;
}

/** The full simulated state of one station (docs/control-plane.md, "SimStation"). */
export interface SimStation {
  token: string;
  stationId: number;
  status: StationStatus;
  batteryVoltage: number;
  /** ISO UTC. */
  lastConnection: string;
  battery: BatteryModel;
  locks: SimLock[];
  faults: Fault[];
  timers: SimTimer[];
}

/** `GET /sim/v1/health`: 200 once ready, 503 with `ready: false` before. */
export interface SimHealth {
  ready: boolean;
  stations: { total: number; online: number; offline: number };
}

/** Body of `POST /sim/v1/stations/{token}/locks/{lockId}/physical`. */
export type PhysicalAction = 'jam' | 'unjam' | 'forceOpen' | 'forceClose';

/** Fields every event of the stream carries; `seq` increases by one per event of the connection. */
interface EventBase {
  seq: number;
  /** ISO UTC. */
  time: string;
}

export interface SnapshotEvent extends EventBase {
  type: 'snapshot';
  stations: SimStation[];
}

export interface StationStatusEvent extends EventBase {
  type: 'station.status';
  token: string;
  status: StationStatus;
  batteryVoltage: number;
  lastConnection: string;
}

export interface LockStateEvent extends EventBase {
  type: 'lock.state';
  token: string;
  lockId: string;
  status: LockStatus;
  lastUpdated: string;
}

export interface CommandSentEvent extends EventBase {
  type: 'command.sent';
  token: string;
  lockId: string;
  commandId: string;
}

export interface CommandAckedEvent extends EventBase {
  type: 'command.acked';
  token: string;
  lockId: string;
  commandId: string;
  /** Since the command was sent; absent when it was sent before anyone listened to the stream. */
  ms?: number;
}

export interface CommandRejectedEvent extends EventBase {
  type: 'command.rejected';
  token: string;
  lockId: string;
  commandId: string;
  reason: string;
  /** As for `command.acked`. */
  ms?: number;
}

export interface CommandTimeoutEvent extends EventBase {
  type: 'command.timeout';
  token: string;
  lockId: string;
  commandId: string;
  ms: number;
}

export interface FaultAppliedEvent extends EventBase {
  type: 'fault.applied';
  token: string;
  lockId?: string;
  /** The fault's kind. */
  fault: FaultKind;
  commandId?: string;
}

export interface ControlEvent extends EventBase {
  type: 'control';
  /** Absent for fleet-wide actions such as reset. */
  token?: string;
  /** What the control plane changed, in words. */
  action: string;
}

export interface ApiRequestEvent extends EventBase {
  type: 'api.request';
  method: string;
  /** The route pattern, e.g. `/v1/stations/:station_token`; never a token or body. */
  route: string;
  status: number;
  ms: number;
}

/** One message of `GET /sim/v1/events`. */
export type SimEvent =
  | SnapshotEvent
  | StationStatusEvent
  | LockStateEvent
  | CommandSentEvent
  | CommandAckedEvent
  | CommandRejectedEvent
  | CommandTimeoutEvent
  | FaultAppliedEvent
  | ControlEvent
  | ApiRequestEvent;

export type SimEventType = SimEvent['type'];

const EVENT_TYPES: ReadonlySet<string> = new Set<SimEventType>([
  'snapshot',
  'station.status',
  'lock.state',
  'command.sent',
  'command.acked',
  'command.rejected',
  'command.timeout',
  'fault.applied',
  'control',
  'api.request',
]);

/** Fields the dashboard relies on, per event type; checked once, where a message comes in. */
const REQUIRED_STRINGS: Partial<Record<SimEventType, readonly string[]>> = {
  'station.status': ['token', 'status', 'lastConnection'],
  'lock.state': ['token', 'lockId', 'status', 'lastUpdated'],
  'command.sent': ['token', 'lockId', 'commandId'],
  'command.acked': ['token', 'lockId', 'commandId'],
  'command.rejected': ['token', 'lockId', 'commandId', 'reason'],
  'command.timeout': ['token', 'lockId', 'commandId'],
  'fault.applied': ['token', 'fault'],
  control: ['action'],
  'api.request': ['method', 'route'],
};

/**
 * Parses one message of the event stream. Returns `undefined` for anything that is not a known,
 * well-formed event, so a newer server with more event types does not break an older dashboard.
 */
export function parseSimEvent(text: string): SimEvent | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const record = value as Record<string, unknown>;
  const type = record['type'];
  if (typeof type !== 'string' || !EVENT_TYPES.has(type) || typeof record['time'] !== 'string') return undefined;
  if (type === 'snapshot') return Array.isArray(record['stations']) ? (record as unknown as SimEvent) : undefined;
  for (const field of REQUIRED_STRINGS[type as SimEventType] ?? []) {
    if (typeof record[field] !== 'string') return undefined;
  }
  return record as unknown as SimEvent;
}
