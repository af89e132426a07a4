/**
 * The HMAC key of access tokens: `STATION_SIM_JWT_SECRET` when set (so tokens stay valid across
 * restarts, or another process can verify them), otherwise 32 random bytes per start (issue:
 * "signed with a secret from the environment or generated per start").
 */
import { randomBytes } from 'node:crypto';
import { SimError } from '../../errors.js';

export const JWT_SECRET_ENV = 'STATION_SIM_JWT_SECRET';

/**
 * A session store shared by API processes and restarts is of use only if they all verify each
 * other's access tokens: with a random key per process, a token fails on every other process and
 * after a restart. Refused before anything starts, in one line naming where the store came from
 * (`source`: a flag, an environment variable, an option).
 */
export function requireSharedJwtSecret(source: string, env: Readonly<Record<string, string | undefined>>): void {
  if (env[JWT_SECRET_ENV] !== undefined && env[JWT_SECRET_ENV] !== '') return;
  throw new SimError(
    'JWT_SECRET_REQUIRED',
    `${source} shares sessions between API processes and across restarts, but ${JWT_SECRET_ENV} is not set: each process would sign access tokens with a random key of its own. ` +
      `Give every API process the same ${JWT_SECRET_ENV} (32 random bytes, e.g. openssl rand -base64 32)`,
  );
}

/** HS256 wants a key at least as long as its hash output (RFC 7518, section 3.2). */
const MIN_SECRET_BYTES = 32;

/**
 * Bits of entropy a configured secret must show at least: what 16 random bytes carry. A guess at
 * the secret costs an attacker one HMAC offline, for as many guesses as they like.
 */
const MIN_ESTIMATED_BITS = 128;

/**
 * `explicit` wins over the environment. A secret shorter than 32 bytes is refused rather than
 * stretched, and so is one that is long but predictable (`aaaa…`, a word repeated): a weak key
 * would make every token forgeable by brute force.
 */
export function resolveJwtSecret(explicit: string | undefined, env: Readonly<Record<string, string | undefined>>): Uint8Array {
  const configured = explicit ?? env[JWT_SECRET_ENV];
  if (configured === undefined || configured === '') return new Uint8Array(randomBytes(MIN_SECRET_BYTES));
  const bytes = new TextEncoder().encode(configured);
  if (bytes.length < MIN_SECRET_BYTES) throw new SimError('JWT_SECRET_TOO_SHORT');
  if (isRepetition(bytes) || estimatedBits(bytes) < MIN_ESTIMATED_BITS) throw new SimError('JWT_SECRET_WEAK');
  return bytes;
}

/**
 * An upper bound of the secret's entropy from its own bytes: its length times the Shannon entropy
 * of their distribution. 32 random bytes in base64 show about 220 bits, in hex about 250; 32 times
 * the same letter shows 0. It cannot see a secret that was written down somewhere (a dictionary
 * phrase of varied letters passes), so it refuses only what is plainly guessable.
 */
export function estimatedBits(bytes: Uint8Array): number {
  const counts = new Map<number, number>();
  for (const byte of bytes) counts.set(byte, (counts.get(byte) ?? 0) + 1);
  let perByte = 0;
  for (const count of counts.values()) {
    const p = count / bytes.length;
    perByte -= p * Math.log2(p);
  }
  return perByte * bytes.length;
}

/** True when the secret is a shorter piece written over and over (`abcabcabc…`). */
function isRepetition(bytes: Uint8Array): boolean {
  for (let period = 1; period <= bytes.length / 2; period += 1) {
    let repeats = true;
    for (let i = period; i < bytes.length && repeats; i += 1) repeats = bytes[i] === bytes[i - period];
    if (repeats) return true;
  }
  return false;
}
