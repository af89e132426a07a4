/**
 * Password hashing with scrypt (node:crypto). Fixture passwords are hashed once at start and the
 * plain text is not kept by the service; login hashes the attempt with the stored salt and compares
 * the two hashes with `timingSafeEqual`, so the comparison time does not depend on how many leading
 * bytes match (issue: "Passwords are compared as hashes in constant time").
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/** scrypt cost: N = 2^14, r = 8, p = 1 (the OWASP minimum for scrypt), 32-byte output. */
const SCRYPT: ScryptOptions = { N: 16_384, r: 8, p: 1 };
const KEY_LENGTH = 32;
const SALT_LENGTH = 16;

export interface PasswordHash {
  readonly salt: Buffer;
  readonly hash: Buffer;
}

export async function hashPassword(password: string, salt: Buffer = randomBytes(SALT_LENGTH)): Promise<PasswordHash> {
  return { salt, hash: await derive(password, salt) };
}

/** True when `password` hashes to `stored`. Always does the full scrypt work. */
export async function verifyPassword(password: string, stored: PasswordHash): Promise<boolean> {
  const candidate = await derive(password, stored.salt);
  return timingSafeEqual(candidate, stored.hash);
}

function derive(password: string, salt: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, KEY_LENGTH, SCRYPT, (error, key) => (error ? reject(error) : resolve(key)));
  });
}
