/**
 * The simulator's own control protocol over MQTT (docs/control-plane.md, "MQTT control topics"):
 * how the control plane reaches every fleet process through the broker, wherever it runs, and
 * what the fleet agents answer, on the topics of src/contract/sim-topics.ts.
 *
 * It belongs to the control plane, which defines it; the fleet agent (src/fleet/fleet-agent.ts),
 * the far end of the channel, imports it from here: the one sideways import between the two,
 * allowed in test/architecture/import-graph.test.ts. Nothing here imports fleet/.
 */
import { Type, type Static } from '@sinclair/typebox';
import { LinkSchema } from '../fixture/link-schema.js';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { FaultSpecSchema, type Fault } from '../contract/fault-schema.js';
import { LockStatusSchema } from '../contract/statuses.js';
import { PhysicalActionSchema, REBOOT_DOWN_MS_LIMITS, VOLTAGE_LIMITS } from '../contract/station-actions.js';
import type { StationSnapshot } from '../station/station-model.js';
import { JudgeFindingSchema } from '../judge/judge-log.js';

/**
 * A request id becomes a level of the reply topic, so it is one plain word: a `/`, `+` or `#` in it
 * would make a topic the agent cannot publish to (the control channel sends UUIDs).
 */
const RequestIdSchema = Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' });

export const ControlRequestSchema = Type.Intersect([
  Type.Object({ requestId: RequestIdSchema }),
  Type.Union([
    Type.Object({ action: Type.Literal('connection'), online: Type.Boolean() }),
    Type.Object({ action: Type.Literal('battery'), voltage: Type.Number(VOLTAGE_LIMITS) }),
    Type.Object({ action: Type.Literal('reboot'), downMs: Type.Integer(REBOOT_DOWN_MS_LIMITS) }),
    Type.Object({ action: Type.Literal('physical'), lockId: Type.String(), physical: PhysicalActionSchema }),
    Type.Object({ action: Type.Literal('addFault'), fault: FaultSpecSchema }),
    Type.Object({ action: Type.Literal('removeFault'), faultId: Type.String() }),
    Type.Object({ action: Type.Literal('clearFaults') }),
    Type.Object({ action: Type.Literal('link'), link: LinkSchema }),
    Type.Object({ action: Type.Literal('snapshot') }),
  ]),
]);
export const FleetRequestSchema = Type.Object({
  requestId: RequestIdSchema,
  action: Type.Union([Type.Literal('query'), Type.Literal('reset')]),
});
/** A fault fired. It has no `type`: it came first, and fleets of an older build still send it so. */
export const SimFaultEventSchema = Type.Object({
  fault: FaultSpecSchema.properties.kind,
  lockId: Type.Optional(Type.String()),
  commandId: Type.Optional(Type.String()),
});
/** A lock's phase (`pending`, as in a snapshot) and the state it goes with; see `LockPhase` in station-model.ts. */
export const SimLockPhaseEventSchema = Type.Object({
  type: Type.Literal('lock.phase'),
  lockId: Type.String(),
  pending: Type.Union([Type.Literal('opening'), Type.Literal('open'), Type.Null()]),
  status: LockStatusSchema,
  lastUpdated: Type.String(),
  commandId: Type.Optional(Type.String()),
});
/** A rule of the judge broken by a command a station received (src/judge/service-judge.ts), with its evidence. */
export const SimJudgeFindingEventSchema = Type.Object({ type: Type.Literal('judge.finding'), ...JudgeFindingSchema.properties });
export const SimEventSchema = Type.Union([SimFaultEventSchema, SimLockPhaseEventSchema, SimJudgeFindingEventSchema]);

/** One control action for one station, on `station-sim/control/{token}`. */
export type ControlRequest = Static<typeof ControlRequestSchema>;
/** A fleet-wide request, on `station-sim/fleet`. */
export type FleetRequest = Static<typeof FleetRequestSchema>;
/** A simulator event, on `station-sim/events/{token}`. */
export type SimEvent = Static<typeof SimEventSchema>;
export type SimFaultEvent = Static<typeof SimFaultEventSchema>;
export type SimLockPhaseEvent = Static<typeof SimLockPhaseEventSchema>;
/** The answer to a control request. */
export type ControlReply =
  | { requestId: string; ok: true; station: StationSnapshot; fault?: Fault }
  | { requestId: string; ok: false; code: 'LOCK_NOT_FOUND' | 'FAULT_NOT_FOUND' | 'BAD_REQUEST'; message: string };
/**
 * One fleet process's answer to a fleet request: a query's snapshots, or the tokens of the stations
 * a reset reset (a reset needs no snapshots, and for a large fleet they were most of its cost).
 */
export interface FleetReply {
  requestId: string;
  stations?: StationSnapshot[];
  tokens?: string[];
}

const simCheckers = {
  control: TypeCompiler.Compile(ControlRequestSchema),
  fleet: TypeCompiler.Compile(FleetRequestSchema),
  event: TypeCompiler.Compile(SimEventSchema),
};

/** Parses a simulator control message; undefined when it is not JSON of the expected shape. */
export function parseSimMessage<K extends keyof typeof simCheckers>(
  kind: K,
  payload: Buffer | string,
): (K extends 'control' ? ControlRequest : K extends 'fleet' ? FleetRequest : SimEvent) | undefined {
  let value: unknown;
  try {
    value = JSON.parse(payload.toString());
  } catch {
    return undefined;
  }
  return simCheckers[kind].Check(value) ? (value as never) : undefined;
}
