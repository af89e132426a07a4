/**
 * The wire format of the `/sim/v1` control plane and its event stream (docs/control-plane.md), as
 * TypeBox schemas: the station snapshot, faults, every event of the stream, the request bodies and
 * the replies. The server validates and serialises with them (control-plane.ts), `@fastify/swagger`
 * documents them in `/v1/openapi.json`, and the dashboard takes its types from them
 * (src/client/sim-types.ts, a type-only import allowed in test/architecture/import-graph.test.ts),
 * so the two ends cannot drift apart.
 *
 * What a fixture can also say (lock and station states, faults, the physical lock actions and the
 * voltage and reboot limits) comes from fixture/, where it is declared once.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { FaultSpecSchema } from '../fixture/fault-schema.js';
import { PhysicalActionSchema, REBOOT_DOWN_MS_LIMITS, VOLTAGE_LIMITS } from '../fixture/station-actions.js';
import { LockStatusSchema, StationStatusSchema } from '../fixture/statuses.js';
import type { StationSnapshot } from '../station/station-model.js';

export { FaultSpecSchema, LockStatusSchema, PhysicalActionSchema, StationStatusSchema };
export type { FaultKind, FaultSpec } from '../fixture/fault-schema.js';
export type { PhysicalAction } from '../fixture/station-actions.js';
export type { LockStatus, StationStatus } from '../fixture/statuses.js';

const strict = { additionalProperties: false } as const;
/** An instant, as ISO 8601 in UTC. Not checked as a `format`: the server writes it with `toISOString`. */
const IsoTime = (description: string) => Type.String({ description });

// ── Station snapshot ────────────────────────────────────────────────────────────────────────────

/** `null`: idle; `opening`: the unlock delay is running; `open`: the relock time is running. */
export const LockPendingSchema = Type.Union([Type.Literal('opening'), Type.Literal('open'), Type.Null()], {
  description: '`null` idle, `opening` the unlock delay is running, `open` the relock time is running.',
});

export const SimLockSchema = Type.Object(
  {
    lockId: Type.String(),
    status: LockStatusSchema,
    lastUpdated: IsoTime('When the lock last changed state.'),
    pending: LockPendingSchema,
  },
  strict,
);

/** The station's battery model: what each unlock and each hour costs, and below what it refuses. */
export const BatteryModelSchema = Type.Object({ drainPerUnlockV: Type.Number(), drainPerHourV: Type.Number(), cutoffV: Type.Number() }, strict);

/** A fault in force on a station: a `FaultSpec` with the `id` the station gave it. */
export const FaultSchema = Type.Object({ id: Type.String(), ...FaultSpecSchema.properties }, strict);

/** A timer running in the station: `unlock` while the unlock delay runs, `relock`, `heartbeat`. */
export const SimTimerSchema = Type.Object(
  {
    kind: Type.Union([Type.Literal('unlock'), Type.Literal('relock'), Type.Literal('heartbeat')]),
    lockId: Type.Optional(Type.String()),
    dueAt: IsoTime('When the timer falls due, in simulated time.'),
  },
  strict,
);

/** The full simulated state of one station (docs/control-plane.md, "SimStation"). */
export const SimStationSchema = Type.Object(
  {
    token: Type.String(),
    stationId: Type.Integer(),
    status: StationStatusSchema,
    batteryVoltage: Type.Number(),
    lastConnection: IsoTime('When the station last connected.'),
    battery: BatteryModelSchema,
    locks: Type.Array(SimLockSchema),
    faults: Type.Array(FaultSchema),
    timers: Type.Array(SimTimerSchema),
  },
  strict,
);

// ── Request bodies ──────────────────────────────────────────────────────────────────────────────

export const ConnectionBodySchema = Type.Object({ online: Type.Boolean() }, strict);
export const BatteryBodySchema = Type.Object({ voltage: Type.Number(VOLTAGE_LIMITS) }, strict);
/** The body is optional as a whole: none at all means `{}` (control-plane.ts fills it in). */
export const RebootBodySchema = Type.Object({ downMs: Type.Optional(Type.Integer({ ...REBOOT_DOWN_MS_LIMITS, description: 'How long the station stays down. @default 2000' })) }, strict);
export const PhysicalBodySchema = Type.Object({ action: PhysicalActionSchema }, strict);
/** A year of simulated time at most per call. */
export const ClockAdvanceBodySchema = Type.Object({ ms: Type.Integer({ minimum: 0, maximum: 31_536_000_000 }) }, strict);

// ── Replies ─────────────────────────────────────────────────────────────────────────────────────

const RefusedCountsSchema = Type.Object(
  { connect: Type.Integer(), publish: Type.Integer(), subscribe: Type.Integer(), 'packet-too-large': Type.Integer() },
  { ...strict, description: 'What the embedded broker refused so far, by kind (docs/mqtt-security.md).' },
);

export const HealthReplySchema = Type.Object(
  {
    ready: Type.Boolean(),
    /** Why not ready (absent when ready). */
    reason: Type.Optional(Type.String()),
    stations: Type.Object({ total: Type.Integer(), online: Type.Integer(), offline: Type.Integer() }, strict),
    /** With the embedded broker: what it refused. */
    broker: Type.Optional(Type.Object({ refused: RefusedCountsSchema }, strict)),
    /** Broker messages the `/v1` gateway refused as implausible, by reason; present once it has refused any. */
    gateway: Type.Optional(Type.Object({ refused: Type.Record(Type.String(), Type.Integer({ minimum: 0 })) }, strict)),
  },
  strict,
);
export const StationListReplySchema = Type.Object(
  {
    stations: Type.Array(SimStationSchema),
    missing: Type.Integer({ description: "Fixture stations no fleet process answered for (a shard's process is down, say)." }),
  },
  strict,
);
export const ResetReplySchema = Type.Object(
  {
    reset: Type.Integer(),
    missing: Type.Integer({ description: 'Fixture stations that were not reset: no fleet process answered for them, or their reset failed.' }),
  },
  strict,
);
export const ClockReplySchema = Type.Object({ now: IsoTime('Simulated time now.'), manual: Type.Boolean() }, strict);

// ── Events of GET /sim/v1/events ────────────────────────────────────────────────────────────────

/**
 * One event as the server builds it: its own fields and `time`, without the per-connection `seq`
 * the stream adds when it sends it.
 */
const event = <T extends string, P extends Record<string, TSchema>>(type: T, properties: P) =>
  Type.Object({ type: Type.Literal(type), time: IsoTime('Simulated time of the event.'), ...properties }, strict);

const CommandFields = { token: Type.String(), lockId: Type.String(), commandId: Type.String() };
/** Since the command was sent; absent when it was sent before anyone listened to the stream. */
const CommandMs = Type.Optional(Type.Integer({ minimum: 0 }));

export const SnapshotEventSchema = event('snapshot', { stations: Type.Array(SimStationSchema) });
export const StationStatusEventSchema = event('station.status', {
  token: Type.String(),
  status: StationStatusSchema,
  batteryVoltage: Type.Number(),
  lastConnection: Type.String(),
});
/** The lock's phase with this state, as the station model has it (the snapshot's `pending`). */
export const LockStateEventSchema = event('lock.state', {
  token: Type.String(),
  lockId: Type.String(),
  status: LockStatusSchema,
  lastUpdated: Type.String(),
  pending: LockPendingSchema,
});
export const CommandSentEventSchema = event('command.sent', CommandFields);
/** `pending`: the lock's phase once the station has acted on the command (`opening` when it starts opening). */
export const CommandAckedEventSchema = event('command.acked', { ...CommandFields, ms: CommandMs, pending: LockPendingSchema });
export const CommandRejectedEventSchema = event('command.rejected', { ...CommandFields, reason: Type.String(), ms: CommandMs });
export const CommandTimeoutEventSchema = event('command.timeout', { ...CommandFields, ms: Type.Integer({ minimum: 0 }) });
export const FaultAppliedEventSchema = event('fault.applied', {
  token: Type.String(),
  lockId: Type.Optional(Type.String()),
  /** The fault's kind. */
  fault: FaultSpecSchema.properties.kind,
  commandId: Type.Optional(Type.String()),
});
export const ControlEventSchema = event('control', {
  /** Absent for fleet-wide actions such as reset and a clock advance. */
  token: Type.Optional(Type.String()),
  /** What the control plane changed, in words. */
  action: Type.String(),
});
export const ApiRequestEventSchema = event('api.request', {
  method: Type.String(),
  /** The route pattern, e.g. `/v1/stations/:station_token`; never a bearer token, password or body. */
  route: Type.String(),
  status: Type.Integer(),
  /** How long the request took, in real time (the API's own measure, whatever the clock). */
  ms: Type.Integer({ minimum: 0 }),
  /**
   * The station of the route (its `:station_token`, the station's id such as `CI-1`), when it has
   * one: a station of the fixture, or a short name that is not one (a typo). A long value that is
   * no station (a credential pasted into the path) is left out.
   */
  token: Type.Optional(Type.String()),
  /** The lock of the route (`:lock_id`), when it has one. */
  lockId: Type.Optional(Type.String()),
  /**
   * What the request came to, when there is something to say: for an error, its code
   * (`STATION_NOT_FOUND`, `UNLOCK_OUTCOME_UNKNOWN`, docs/errors.md); for an unlock answered 200,
   * `accepted` or the failure (`STATION_OFFLINE`, `BATTERY_LOW`, … in docs/api.md).
   */
  outcome: Type.Optional(Type.String()),
  /** For an unlock, the command it published. */
  commandId: Type.Optional(Type.String()),
});

/** The embedded broker refused a connection, a publish, a subscription or an oversized packet (at most 20 a second are sent; `counts` counts them all). Never a password. */
export const BrokerRefusedEventSchema = event('broker.refused', {
  kind: Type.Union([Type.Literal('connect'), Type.Literal('publish'), Type.Literal('subscribe'), Type.Literal('packet-too-large')]),
  identity: Type.Optional(Type.String()),
  clientId: Type.Optional(Type.String()),
  topic: Type.Optional(Type.String()),
  reason: Type.String(),
  counts: RefusedCountsSchema,
});

/** Every event the server builds, without `seq`. */
export const SimStreamEventSchema = Type.Union([
  SnapshotEventSchema,
  StationStatusEventSchema,
  LockStateEventSchema,
  CommandSentEventSchema,
  CommandAckedEventSchema,
  CommandRejectedEventSchema,
  CommandTimeoutEventSchema,
  FaultAppliedEventSchema,
  ControlEventSchema,
  ApiRequestEventSchema,
  BrokerRefusedEventSchema,
]);

/** One message of `GET /sim/v1/events`: an event with `seq`, which increases by one per event of the connection. */
export const SimEventMessageSchema = Type.Union(
  SimStreamEventSchema.anyOf.map((schema) => Type.Object({ seq: Type.Integer({ minimum: 1 }), ...schema.properties }, strict)),
);

/** The event types, in the order of docs/control-plane.md. */
export const SIM_EVENT_TYPES = SimStreamEventSchema.anyOf.map((schema) => schema.properties.type.const);

export type SimLock = Static<typeof SimLockSchema>;
export type LockPending = Static<typeof LockPendingSchema>;
export type BatteryModel = Static<typeof BatteryModelSchema>;
export type SimFault = Static<typeof FaultSchema>;
export type SimTimer = Static<typeof SimTimerSchema>;
export type SimStation = Static<typeof SimStationSchema>;
export type SimHealth = Static<typeof HealthReplySchema>;
export type StationListReply = Static<typeof StationListReplySchema>;
export type ResetReply = Static<typeof ResetReplySchema>;
export type ClockReply = Static<typeof ClockReplySchema>;
/** An event of the stream as the server builds it, without `seq`. */
export type SimStreamEvent = Static<typeof SimStreamEventSchema>;

/**
 * The station model builds the snapshot the wire carries, and cannot import this layer: the two
 * types are held equal here, at compile time, so a field added to one and not the other fails
 * `tsc`. (True when each is assignable to the other.)
 */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
export type SnapshotMatchesWire = Assert<Same<StationSnapshot, SimStation>>;
type Assert<T extends true> = T;
