/**
 * The payloads of the station contract (docs/design.md, "Default MQTT topic contract"): what a station
 * reports and what it is told. The station model builds them itself, on the hot path, with no copy
 * into a wire shape; topics.ts beside this says which topic carries which and parses them.
 */
import { Type, type Static } from '@sinclair/typebox';
import { LockStatusSchema, StationStatusSchema } from './statuses.js';

// The descriptions reach the AsyncAPI document (src/mqtt/asyncapi.ts); checking ignores them.
const ISO_TEXT = 'ISO 8601 UTC, as `Date#toISOString` writes it.';

export const StatusPayloadSchema = Type.Object({
  stationId: Type.Integer({ description: "The station's numeric id, as in the fixture." }),
  status: StationStatusSchema,
  batteryVoltage: Type.Number({ description: 'Battery voltage in volts, to the centivolt.' }),
  lastConnection: Type.String({
    description: `When the station connected, refreshed by every heartbeat while online; the last will carries the connect time. ${ISO_TEXT}`,
  }),
});
export const LockStatePayloadSchema = Type.Object({
  lockId: Type.String({ description: 'The lock, as in the fixture and in the topic.' }),
  status: LockStatusSchema,
  lastUpdated: Type.String({ description: `When the lock last changed state. ${ISO_TEXT}` }),
});
export const UnlockCommandSchema = Type.Object({
  commandId: Type.String({ minLength: 1, maxLength: 128, description: 'Unique per command; the ack names it, and a redelivery with the same id is not executed again.' }),
  /** When the service sent it, ISO 8601 UTC on the service's clock; the station refuses it past its TTL. */
  sentAt: Type.Optional(Type.String({ maxLength: 64, description: `When the service sent it, on the service's clock; the station refuses it past its command TTL. ${ISO_TEXT}` })),
});
// The titles name the two kinds for code generators (AsyncAPI Modelina), which would call them AnonymousSchema_N.
export const AckPayloadSchema = Type.Union([
  Type.Object({ commandId: Type.String(), lockId: Type.String(), accepted: Type.Literal(true) }, { title: 'AckAccepted' }),
  Type.Object({ commandId: Type.String(), lockId: Type.String(), accepted: Type.Literal(false), reason: Type.String() }, { title: 'AckRejected' }),
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
  // Date.parse rolls impossible dates over (February 30th is March 2nd) and takes 24:00: each
  // field is checked against its range first. Read from the string, without writing a date back
  // (this runs on every status, lock state and command).
  const year = Number(value.slice(0, 4));
  const month = Number(value.slice(5, 7));
  const day = Number(value.slice(8, 10));
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (Number(value.slice(11, 13)) > 23 || Number(value.slice(14, 16)) > 59 || Number(value.slice(17, 19)) > 59) return undefined;
  const at = Date.parse(value);
  return Number.isFinite(at) ? at : undefined;
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysInMonth(year: number, month: number): number {
  if (month !== 2) return DAYS_IN_MONTH[month - 1]!;
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
}
