/**
 * What is believed of what arrives on a station's topics (docs/design.md, "Trust model": checked before
 * it is believed). Anyone who can publish on the broker can publish on a station's topics; a broker
 * ACL stops that at the source (docs/mqtt-security.md), and these rules hold whatever the broker is.
 * The `/v1` gateway (src/service/gateway/plausibility.ts counts and logs its refusals) and the
 * control plane's fleet readiness both apply them, so a fake status fools neither.
 *
 * The shapes are the contract's TypeBox schemas (src/contract/payloads.ts, checked by
 * `parsePayload` in src/contract/topics.ts); the rules here are what a schema cannot say: sizes, ranges,
 * timestamps, and whether the station or lock is the one the topic names.
 */
import { VOLTAGE_LIMITS } from '../contract/station-actions.js';
import { parseIsoUtc, type AckPayload, type LockStatePayload, type StatusPayload } from '../contract/payloads.js';

export const PLAUSIBILITY_LIMITS = {
  /** A payload larger than this is not read at all (the largest real one is about 150 bytes). */
  maxPayloadBytes: 4096,
  /** Every string field of a payload (ids, reasons, timestamps). */
  maxStringLength: 64,
  /** How far ahead of the gateway's clock a timestamp may be (clock skew between machines). */
  futureSkewMs: 5 * 60_000,
} as const;

/** Why a message was refused; the keys of the counts `refusedMessages` reports. */
export const REFUSAL_REASONS = [
  /** A topic of the contract naming a station the fixture does not list. */
  'unknownStation',
  /** Larger than `maxPayloadBytes`. */
  'oversized',
  /** Not JSON of the contract's shape, or a string field over `maxStringLength`. */
  'malformed',
  /** A status whose `stationId` is not the station's. */
  'wrongStation',
  /** A battery voltage outside 0..VOLTAGE_LIMITS.maximum, or not a finite number. */
  'outOfRange',
  /** A timestamp that is not ISO 8601 UTC (`YYYY-MM-DDTHH:MM:SS(.sss)Z`) or lies in the future beyond the skew. */
  'badTimestamp',
  /** A lock state whose payload names another lock than its topic, or a lock the fixture does not give the station. */
  'unknownLock',
  /** A zero-length message (a retained message cleared): clearing a station's record is not the station saying something. */
  'emptyPayload',
  /** An ack for a command this gateway is not waiting for on that station and lock (spoofed, or too late). */
  'unexpectedAck',
  /** A second ack of a command already answered (a repeat, or a contradiction). */
  'duplicateAck',
] as const;
export type RefusalReason = (typeof REFUSAL_REASONS)[number];

/** True for an ISO 8601 UTC timestamp no further ahead of `now` than the skew allows. */
export function plausibleTimestamp(value: string, now: number): boolean {
  const at = parseIsoUtc(value);
  return at !== undefined && at <= now + PLAUSIBILITY_LIMITS.futureSkewMs;
}

function shortStrings(...values: string[]): boolean {
  return values.every((value) => value.length <= PLAUSIBILITY_LIMITS.maxStringLength);
}

/** A parsed status checked against the station it claims to be; undefined when plausible. */
export function checkStatus(status: StatusPayload, config: { stationId: number }, now: number): RefusalReason | undefined {
  if (!shortStrings(status.lastConnection)) return 'malformed';
  if (status.stationId !== config.stationId) return 'wrongStation';
  const volts = status.batteryVoltage;
  if (!Number.isFinite(volts) || volts < VOLTAGE_LIMITS.minimum || volts > VOLTAGE_LIMITS.maximum) return 'outOfRange';
  if (!plausibleTimestamp(status.lastConnection, now)) return 'badTimestamp';
  return undefined;
}

/**
 * A parsed lock state on the topic of `lockId`. `listed`: the fixture gives the station that lock.
 * A lock it does not is refused: the interface's station has the locks the service knows of, and
 * lock topics published by others (or a station's own identity, which a broker ACL lets write
 * `locks/+/state`) must not add locks to what `/v1` shows, nor grow the gateway's memory.
 */
export function checkLockState(state: LockStatePayload, lockId: string, listed: boolean, now: number): RefusalReason | undefined {
  if (!shortStrings(state.lockId, state.lastUpdated)) return 'malformed';
  // The topic addresses the lock; a payload naming another lock is inconsistent.
  if (state.lockId !== lockId) return 'unknownLock';
  if (!listed) return 'unknownLock';
  if (!plausibleTimestamp(state.lastUpdated, now)) return 'badTimestamp';
  return undefined;
}

/** A parsed ack's fields (whether anyone waits for it is `PendingCommands`' to say). */
export function checkAck(ack: AckPayload): RefusalReason | undefined {
  return shortStrings(ack.commandId, ack.lockId, ack.accepted ? '' : ack.reason) ? undefined : 'malformed';
}

