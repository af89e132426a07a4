/**
 * What the control plane sends, as the dashboard sees it: the types of the wire schemas the server
 * validates and serialises with (src/control/wire-schemas.ts, docs/control-plane.md), imported as
 * types only, so the dashboard still runs against a simulator elsewhere and cannot drift from it.
 * The one thing written here is what the dashboard checks of a message it receives
 * (`parseSimEvent`), and the compiler holds that to the types.
 */
import type { Static } from '@sinclair/typebox';
import type * as Wire from '../control/wire-schemas.js';

export type {
  BatteryModel,
  ClockReply,
  FaultKind,
  FaultSpec,
  LockPending,
  LockStatus,
  PhysicalAction,
  ResetReply,
  SimHealth,
  SimLock,
  SimStation,
  SimTimer,
  StationListReply,
  StationStatus,
} from '../control/wire-schemas.js';

/**
 * `ControlClient.stations()`: the stations, and `missing`, the fixture's stations no fleet process
 * answered for; an array still, so a caller that only iterates it reads it as before.
 */
export type SimStationList = Wire.SimStation[] & { readonly missing: number };

/** A fault in force on a station (docs/control-plane.md, "Fault"). */
export type Fault = Wire.SimFault;

/** Every message of the stream carries `seq`, which increases by one per event of the connection. */
type Sent<T> = T & { seq: number };

export type SnapshotEvent = Sent<Static<typeof Wire.SnapshotEventSchema>>;
export type StationStatusEvent = Sent<Static<typeof Wire.StationStatusEventSchema>>;
export type LockStateEvent = Sent<Static<typeof Wire.LockStateEventSchema>>;
export type CommandSentEvent = Sent<Static<typeof Wire.CommandSentEventSchema>>;
export type CommandAckedEvent = Sent<Static<typeof Wire.CommandAckedEventSchema>>;
export type CommandRejectedEvent = Sent<Static<typeof Wire.CommandRejectedEventSchema>>;
export type CommandTimeoutEvent = Sent<Static<typeof Wire.CommandTimeoutEventSchema>>;
export type FaultAppliedEvent = Sent<Static<typeof Wire.FaultAppliedEventSchema>>;
export type ControlEvent = Sent<Static<typeof Wire.ControlEventSchema>>;
export type ApiRequestEvent = Sent<Static<typeof Wire.ApiRequestEventSchema>>;
export type JudgeFindingEvent = Sent<Static<typeof Wire.JudgeFindingEventSchema>>;
export type { JudgeReply, JudgeFinding } from '../control/wire-schemas.js';

/** One message of `GET /sim/v1/events`. */
export type SimEvent = Sent<Wire.SimStreamEvent>;

export type SimEventType = SimEvent['type'];

/** The fields of an event that are strings (required or optional). */
type StringFields<E> = { [K in keyof E]-?: E[K] extends string | undefined ? K : never }[keyof E];

/**
 * Fields the dashboard relies on, per event type; checked once, where a message comes in. Written
 * against the wire types: a type missing here, or a field that is no string there, fails `tsc`.
 */
const REQUIRED_STRINGS: { readonly [T in SimEventType]: readonly StringFields<Extract<SimEvent, { type: T }>>[] } = {
  snapshot: [],
  'station.status': ['token', 'status', 'lastConnection'],
  'lock.state': ['token', 'lockId', 'status', 'lastUpdated'],
  'command.sent': ['token', 'lockId', 'commandId'],
  'command.acked': ['token', 'lockId', 'commandId'],
  'command.rejected': ['token', 'lockId', 'commandId', 'reason'],
  'command.timeout': ['token', 'lockId', 'commandId'],
  'fault.applied': ['token', 'fault'],
  control: ['action'],
  'api.request': ['method', 'route'],
  'broker.refused': ['kind', 'reason'],
  'judge.finding': ['rule', 'detail'],
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
  if (typeof type !== 'string' || !Object.hasOwn(REQUIRED_STRINGS, type) || typeof record['time'] !== 'string') return undefined;
  if (type === 'snapshot') return Array.isArray(record['stations']) ? (record as unknown as SimEvent) : undefined;
  for (const field of REQUIRED_STRINGS[type as SimEventType] as readonly string[]) {
    if (typeof record[field] !== 'string') return undefined;
  }
  return record as unknown as SimEvent;
}
