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
import { FaultSpecSchema } from '../contract/fault-schema.js';
import { PhysicalActionSchema, REBOOT_DOWN_MS_LIMITS, VOLTAGE_LIMITS } from '../contract/station-actions.js';
import { LockStatusSchema, StationStatusSchema } from '../contract/statuses.js';
import type { StationSnapshot } from '../station/station-model.js';
import { JudgeFindingFields, JudgeFindingSchema, JudgePartySchema } from '../judge/judge-log.js';

export { FaultSpecSchema, LockStatusSchema, PhysicalActionSchema, StationStatusSchema };
export type { FaultKind, FaultSpec } from '../contract/fault-schema.js';
export type { PhysicalAction } from '../contract/station-actions.js';
export type { LockStatus, StationStatus } from '../contract/statuses.js';

const strict = { additionalProperties: false } as const;
/** An instant, as ISO 8601 in UTC: `format: date-time` documents it (the server writes it with `toISOString`). */
const IsoTime = (description: string) => Type.String({ format: 'date-time', description });

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
  { ...strict, title: 'SimLock' },
);

/** The station's battery model: what each unlock and each hour costs, and below what it refuses. */
export const BatteryModelSchema = Type.Object({ drainPerUnlockV: Type.Number(), drainPerHourV: Type.Number(), cutoffV: Type.Number() }, { ...strict, title: 'BatteryModel' });

/** A fault in force on a station: a `FaultSpec` with the `id` the station gave it. */
export const FaultSchema = Type.Object({ id: Type.String(), ...FaultSpecSchema.properties }, { ...strict, title: 'Fault' });

/** A timer running in the station: `unlock` while the unlock delay runs, `relock`, `heartbeat`. */
export const SimTimerSchema = Type.Object(
  {
    kind: Type.Union([Type.Literal('unlock'), Type.Literal('relock'), Type.Literal('heartbeat')]),
    lockId: Type.Optional(Type.String()),
    dueAt: IsoTime('When the timer falls due, in simulated time.'),
  },
  { ...strict, title: 'SimTimer' },
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
    link: Type.Optional(Type.String({ description: "The station's link to its broker, when its fixture gives it one (docs/links.md): `lte-m (75 ± 25 ms, 1 % loss, 375 kbit/s)`." })),
  },
  { ...strict, title: 'SimStation' },
);

// ── Request bodies ──────────────────────────────────────────────────────────────────────────────

export const ConnectionBodySchema = Type.Object({ online: Type.Boolean() }, { ...strict, title: 'ConnectionBody' });
export const BatteryBodySchema = Type.Object({ voltage: Type.Number(VOLTAGE_LIMITS) }, { ...strict, title: 'BatteryBody' });
/** The body is optional as a whole: none at all means `{}` (control-plane.ts fills it in). */
export const RebootBodySchema = Type.Object({ downMs: Type.Optional(Type.Integer({ ...REBOOT_DOWN_MS_LIMITS, description: 'How long the station stays down. @default 2000' })) }, { ...strict, title: 'RebootBody' });
export const PhysicalBodySchema = Type.Object({ action: PhysicalActionSchema }, { ...strict, title: 'PhysicalBody' });
/** A year of simulated time at most per call. */
export const ClockAdvanceBodySchema = Type.Object({ ms: Type.Integer({ minimum: 0, maximum: 31_536_000_000 }) }, { ...strict, title: 'ClockAdvanceBody' });

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
    stations: Type.Object(
      {
        total: Type.Integer(),
        online: Type.Integer(),
        offline: Type.Integer(),
        refused: Type.Optional(
          Type.Integer({
            minimum: 1,
            description:
              'Stations of this process whose last attempt to connect the broker refused (bad credentials, a revoked or refused client certificate, a failed TLS handshake); absent when none.',
          }),
        ),
      },
      strict,
    ),
    /** With the embedded broker: what it refused. */
    broker: Type.Optional(Type.Object({ refused: RefusedCountsSchema }, strict)),
    /** The broker the stations use: where to point `mosquitto_sub` (the dashboard's header shows it). */
    mqtt: Type.Optional(
      Type.Object(
        {
          url: Type.String({ description: 'The MQTT URL, credentials redacted; `mqtts:` or `wss:` when TLS.' }),
          embedded: Type.Boolean({ description: 'The broker runs inside the simulator (`up`), not an external one (`--broker`).' }),
        },
        { ...strict, description: 'The broker the stations use; absent when the simulator was not told it.' },
      ),
    ),
    /** Broker messages the `/v1` gateway refused as implausible, by reason; present once it has refused any. */
    gateway: Type.Optional(
      Type.Object(
        {
          refused: Type.Optional(Type.Record(Type.String(), Type.Integer({ minimum: 0 }))),
          /** MQTT 5: what the broker refused the gateway, by packet and reason code (`"PUBACK 0x87"`); present once it has refused anything. */
          brokerRefused: Type.Optional(Type.Record(Type.String(), Type.Integer({ minimum: 0 }))),
        },
        strict,
      ),
    ),
  },
  { ...strict, title: 'HealthReply' },
);
export const StationListReplySchema = Type.Object(
  {
    stations: Type.Array(SimStationSchema),
    missing: Type.Integer({ description: "Fixture stations no fleet process answered for (a shard's process is down, say)." }),
  },
  { ...strict, title: 'StationListReply' },
);
export const ResetReplySchema = Type.Object(
  {
    reset: Type.Integer(),
    missing: Type.Integer({ description: 'Fixture stations that were not reset: no fleet process answered for them, or their reset failed.' }),
  },
  { ...strict, title: 'ResetReply' },
);
export const ClockReplySchema = Type.Object({ now: IsoTime('Simulated time now.'), manual: Type.Boolean() }, { ...strict, title: 'ClockReply' });

// ── Events of GET /sim/v1/events ────────────────────────────────────────────────────────────────

/**
 * One event as the server builds it: its own fields and `time`, without the per-connection `seq`
 * the stream adds when it sends it.
 */
const event = <T extends string, P extends Record<string, TSchema>>(type: T, properties: P) =>
  Type.Object({ type: Type.Literal(type), time: IsoTime('Simulated time of the event.'), ...properties }, strict);

const CommandFields = { token: Type.String(), lockId: Type.String(), commandId: Type.String() };
/** Since the command was sent; absent when the hub did not see the send (before the control plane started, or forgotten past its bound). */
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
  /** The id of the API fault that answered this request (`POST /sim/v1/api-faults`); status 0 when it answered nothing (`reset`, `hang`). */
  fault: Type.Optional(Type.String()),
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

/** A rule of the judge broken by the code under test, with its evidence (docs/judge.md). */
export const JudgeFindingEventSchema = event('judge.finding', JudgeFindingFields);

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
  JudgeFindingEventSchema,
]);

// ── The judge: GET /sim/v1/judge ───────────────────────────────────────────────────────────────

export { JudgeFindingSchema };
export const JudgeRuleSchema = Type.Object(
  {
    id: JudgeFindingFields.rule,
    party: JudgePartySchema,
    description: Type.String(),
    fix: Type.String({ description: 'What to change in the code under test so the rule holds.' }),
    source: Type.String({ description: 'The document and section the rule comes from (a path with an anchor).' }),
  },
  strict,
);
export const JudgeReplySchema = Type.Object(
  {
    summary: Type.Record(Type.String(), Type.Integer({ minimum: 1 }), { description: 'Findings per rule id since start, only the rules broken.' }),
    findings: Type.Array(JudgeFindingSchema, { description: 'The last 1000 findings, oldest first.' }),
    rules: Type.Array(JudgeRuleSchema),
  },
  strict,
);
export type JudgeReply = Static<typeof JudgeReplySchema>;
export type { JudgeFinding } from '../judge/judge-log.js';

// ── Request journal: GET /sim/v1/journal ────────────────────────────────────────────────────────

/** The journal keeps this many entries; the oldest go first. */
export const JOURNAL_CAPACITY = 10_000;

const { type: _apiType, time: _apiTime, ...ApiRequestFields } = ApiRequestEventSchema.properties;
const JournalStamp = {
  seq: Type.Integer({ minimum: 1, description: 'Increases by one per entry, across clears.' }),
  at: IsoTime('Simulated time the entry was recorded.'),
};
/** A `/v1` request: the fields of its `api.request` event, whatever they are, without `type` and `time`. */
export const JournalApiEntrySchema = Type.Object({ ...JournalStamp, kind: Type.Literal('api'), ...ApiRequestFields }, { ...strict, title: 'JournalApiEntry' });
export const CommandOutcomeSchema = Type.Union([Type.Literal('sent'), Type.Literal('acked'), Type.Literal('rejected'), Type.Literal('timeout')], {
  description: '`sent` until the station answers; then what its ack said, or `timeout` when none came in time.',
});
/** An unlock command as the station received it on MQTT, with its outcome as later events told it. */
export const JournalCommandEntrySchema = Type.Object(
  {
    ...JournalStamp,
    kind: Type.Literal('command'),
    ...CommandFields,
    outcome: CommandOutcomeSchema,
    /** Why the station rejected it. */
    reason: Type.Optional(Type.String()),
    /** From the send to the ack or the timeout. */
    ms: Type.Optional(Type.Integer({ minimum: 0 })),
  },
  { ...strict, title: 'JournalCommandEntry' },
);
export const JournalEntrySchema = Type.Union([JournalApiEntrySchema, JournalCommandEntrySchema]);
export const JournalKindSchema = Type.Union([Type.Literal('api'), Type.Literal('command')]);
/** Query values arrive as strings; the route parses and checks them (journal-routes.ts) so a bad one is named in the 400. */
export const JournalQuerySchema = Type.Object(
  {
    since: Type.Optional(Type.String({ description: 'Only entries with a greater `seq`: the `mark` of an earlier answer. @default 0' })),
    kind: Type.Optional(Type.String({ description: '`api` or `command`.' })),
    token: Type.Optional(Type.String({ description: 'Only entries of this station (a command\'s station; a request\'s `token` field).' })),
    limit: Type.Optional(Type.String({ description: `At most this many entries, oldest first (1 to ${JOURNAL_CAPACITY}). @default ${JOURNAL_CAPACITY}` })),
  },
  strict,
);
export const JournalReplySchema = Type.Object(
  {
    mark: Type.Integer({ minimum: 0, description: 'Pass as `since` next time: the last entry this answer covers.' }),
    truncated: Type.Boolean({ description: 'Entries after `since` were dropped to keep the journal bounded.' }),
    entries: Type.Array(JournalEntrySchema),
  },
  { ...strict, title: 'JournalReply' },
);
export const JournalClearReplySchema = Type.Object({ cleared: Type.Integer({ minimum: 0 }), mark: Type.Integer({ minimum: 0 }) }, { ...strict, title: 'JournalClearReply' });

// ── API faults: /sim/v1/api-faults ──────────────────────────────────────────────────────────────

export const ApiFaultKindSchema = Type.Union([Type.Literal('status'), Type.Literal('latency'), Type.Literal('reset'), Type.Literal('hang')], {
  description: '`status`: answer with `status` and `message`; `latency`: wait `latencyMs`, then go on as usual; `reset`: destroy the connection without an answer; `hang`: never answer.',
});
/** The longest latency a fault may add: `stop()` waits for requests in flight, up to this. */
export const API_FAULT_MAX_LATENCY_MS = 60_000;
export const ApiFaultSpecSchema = Type.Object(
  {
    route: Type.Optional(Type.String({ description: 'Only this route, as `api.request` shows it: "POST /v1/auth/refresh". @default every /v1 route' })),
    token: Type.Optional(Type.String({ minLength: 1, description: 'Only requests for this station (the route\'s `station_token`). @default any' })),
    kind: ApiFaultKindSchema,
    status: Type.Optional(Type.Integer({ minimum: 400, maximum: 599, description: 'The status to answer with (kind `status`, required there).' })),
    message: Type.Optional(Type.String({ maxLength: 1000, description: 'The `message` of the answer. @default the usual one for the status (401: "Token is invalid")' })),
    retryAfterSeconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 86_400, description: 'Sent as `Retry-After` (kind `status`).' })),
    latencyMs: Type.Optional(Type.Integer({ minimum: 0, maximum: API_FAULT_MAX_LATENCY_MS, description: 'The delay (kind `latency`, required there).' })),
    count: Type.Optional(Type.Integer({ minimum: 1, description: 'The fault acts on the next `count` matching requests, then is removed. @default no limit' })),
    probability: Type.Optional(Type.Number({ minimum: 0, maximum: 1, description: "The chance it acts on a matching request, drawn from the simulator's seed. @default 1" })),
  },
  { ...strict, title: 'ApiFaultSpec' },
);
export const ApiFaultSchema = Type.Object(
  {
    id: Type.String(),
    ...ApiFaultSpecSchema.properties,
    remaining: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description: 'Requests it will still act on; `null` without a `count`.' }),
  },
  { ...strict, title: 'ApiFault' },
);
export const ApiFaultListReplySchema = Type.Object({ faults: Type.Array(ApiFaultSchema) }, { ...strict, title: 'ApiFaultListReply' });
export const ApiFaultClearReplySchema = Type.Object({ cleared: Type.Integer({ minimum: 0 }) }, { ...strict, title: 'ApiFaultClearReply' });

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
export type JournalEntry = Static<typeof JournalEntrySchema>;
export type JournalApiEntry = Static<typeof JournalApiEntrySchema>;
export type JournalCommandEntry = Static<typeof JournalCommandEntrySchema>;
export type JournalKind = Static<typeof JournalKindSchema>;
export type JournalReply = Static<typeof JournalReplySchema>;
export type JournalClearReply = Static<typeof JournalClearReplySchema>;
export type ApiFaultKind = Static<typeof ApiFaultKindSchema>;
export type ApiFaultSpec = Static<typeof ApiFaultSpecSchema>;
export type ApiFault = Static<typeof ApiFaultSchema>;
export type ApiFaultListReply = Static<typeof ApiFaultListReplySchema>;
/** An event of the stream as the server builds it, without `seq`. */
export type SimStreamEvent = Static<typeof SimStreamEventSchema>;

/**
 * The station model builds the snapshot the wire carries, and cannot import this layer: the two
 * types are held equal here, at compile time, so a field added to one and not the other fails
 * `tsc`. (True when each is assignable to the other.)
 */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** @public Imported by nobody: exported only so that the check is not an unused type. */
export type SnapshotMatchesWire = Assert<Same<StationSnapshot, SimStation>>;
type Assert<T extends true> = T;
