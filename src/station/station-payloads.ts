/**
 * The payloads of the station contract (docs/design.md, "Default MQTT topic contract"): what a station
 * reports and what it is told. src/mqtt/topics.ts owns the contract and re-exports these; callers
 * import them from there.
 *
 * Why they are declared here and not in topics.ts: the firmware model (station-model.ts) builds
 * these payloads itself, on the hot path, with no copy into a wire shape; declared in mqtt/, they
 * would make the station import the layer above it. The topic templates, QoS and parsing stay
 * in topics.ts.
 */
import { Type, type Static } from '@sinclair/typebox';
import { LockStatusSchema, StationStatusSchema } from '../fixture/statuses.js';

export const StatusPayloadSchema = Type.Object({
  stationId: Type.Integer(),
  status: StationStatusSchema,
  batteryVoltage: Type.Number(),
  lastConnection: Type.String(),
});
export const LockStatePayloadSchema = Type.Object({
  lockId: Type.String(),
  status: LockStatusSchema,
  lastUpdated: Type.String(),
});
export const UnlockCommandSchema = Type.Object({
  commandId: Type.String({ minLength: 1, maxLength: 128 }),
  /** When the service sent it, ISO 8601 UTC on the service's clock; the station refuses it past its TTL. */
  sentAt: Type.Optional(Type.String({ maxLength: 64 })),
});
export const AckPayloadSchema = Type.Union([
  Type.Object({ commandId: Type.String(), lockId: Type.String(), accepted: Type.Literal(true) }),
  Type.Object({ commandId: Type.String(), lockId: Type.String(), accepted: Type.Literal(false), reason: Type.String() }),
]);

/** `{prefix}/{token}/status`, retained; the last will carries the same with `"status":"offline"`. */
export type StatusPayload = Static<typeof StatusPayloadSchema>;
/** `{prefix}/{token}/locks/{lockId}/state`, retained. */
export type LockStatePayload = Static<typeof LockStatePayloadSchema>;
/** `{prefix}/{token}/locks/{lockId}/unlock`, service to station. */
export type UnlockCommand = Static<typeof UnlockCommandSchema>;
/** `{prefix}/{token}/acks`, station to service. */
export type AckPayload = Static<typeof AckPayloadSchema>;

/** ISO 8601 UTC as the contract writes timestamps (`Date#toISOString`): `YYYY-MM-DDTHH:MM:SS(.sss)Z`. */
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,3})?Z$/;

/** Milliseconds since the epoch of a contract timestamp; undefined when it is not ISO 8601 UTC. */
export function parseIsoUtc(value: string): number | undefined {
  if (!ISO_UTC.test(value)) return undefined;
  const at = Date.parse(value);
  // Date.parse rolls impossible dates over (February 30th is March 2nd): the value must read back the same.
  return Number.isFinite(at) && new Date(at).toISOString().slice(0, 19) === value.slice(0, 19) ? at : undefined;
}
