/**
 * Refresh tokens (interface section 5): opaque random strings, 32 bytes from the CSPRNG in
 * base64url. Only their SHA-256 hashes are stored (memory or Redis), so what a store holds cannot
 * be replayed. A refresh token works once (rotation, docs/api.md section 4); the session store
 * keeps the records, `AuthService` the rules.
 */
import { createHash, randomBytes } from 'node:crypto';

/** A new refresh token and the hash it is stored under. */
export function newRefreshToken(): { token: string; hash: string } {
  const token = randomBytes(32).toString('base64url');
  return { token, hash: refreshTokenHash(token) };
}

/** The key a refresh token is stored under. */
export function refreshTokenHash(token: string): string {
  return createHash('sha256').update(token).digest('base64url');
}
