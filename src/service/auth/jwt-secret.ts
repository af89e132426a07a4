/**
 * The HMAC key of access tokens: `STATION_SIM_JWT_SECRET` when set (so tokens stay valid across
 * restarts, or another process can verify them), otherwise 32 random bytes per start (issue:
 * "signed with a secret from the environment or generated per start").
 */
import { randomBytes } from 'node:crypto';
import { SimError } from '../../errors.js';

export const JWT_SECRET_ENV = 'STATION_SIM_JWT_SECRET';

/** HS256 wants a key at least as long as its hash output (RFC 7518, section 3.2). */
const MIN_SECRET_BYTES = 32;

/**
 * `explicit` wins over the environment. A secret shorter than 32 bytes is refused rather than
 * stretched: a weak key would make every token forgeable by brute force.
 */
export function resolveJwtSecret(explicit: string | undefined, env: Readonly<Record<string, string | undefined>>): Uint8Array {
  const configured = explicit ?? env[JWT_SECRET_ENV];
  if (configured === undefined || configured === '') return new Uint8Array(randomBytes(MIN_SECRET_BYTES));
  const bytes = new TextEncoder().encode(configured);
  if (bytes.length < MIN_SECRET_BYTES) throw new SimError('JWT_SECRET_TOO_SHORT');
  return bytes;
}
