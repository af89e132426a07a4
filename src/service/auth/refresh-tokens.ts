/**
 * Refresh tokens (interface section 5): opaque random strings, 32 bytes from the CSPRNG in
 * base64url. Only their SHA-256 hashes are stored, so the store's contents cannot be replayed.
 * A refresh token works once: `consume` removes it, and the refresh endpoint hands out a new one
 * (rotation, docs/api.md section 4).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { ServiceClock } from '../service-clock.js';

/** How often expired entries are swept out, at most. */
const SWEEP_INTERVAL_MS = 60_000;

export interface RefreshTokenOptions {
  /** Lifetime in seconds. */
  ttlSeconds: number;
  clock: ServiceClock;
}

/** What a refresh token stands for. */
export interface RefreshGrant {
  accountId: string;
  /** The account's revocation generation at issue. */
  gen: number;
}

interface StoredGrant extends RefreshGrant {
  expiresAt: number;
}

export class RefreshTokens {
  readonly #options: RefreshTokenOptions;
  readonly #grants = new Map<string, StoredGrant>();
  #lastSweep: number;

  constructor(options: RefreshTokenOptions) {
    this.#options = options;
    this.#lastSweep = options.clock.now();
  }

  /** Number of stored (possibly expired, not yet swept) tokens. */
  get size(): number {
    return this.#grants.size;
  }

  issue(grant: RefreshGrant): string {
    this.#sweep();
    const token = randomBytes(32).toString('base64url');
    this.#grants.set(digest(token), { ...grant, expiresAt: this.#options.clock.now() + this.#options.ttlSeconds * 1000 });
    return token;
  }

  /** Removes the token and returns its grant; undefined when unknown, used or expired. */
  consume(token: string): RefreshGrant | undefined {
    const key = digest(token);
    const grant = this.#grants.get(key);
    if (!grant) return undefined;
    this.#grants.delete(key);
    if (grant.expiresAt <= this.#options.clock.now()) return undefined;
    return { accountId: grant.accountId, gen: grant.gen };
  }

  /** Forgets the token; unknown tokens are ignored. */
  revoke(token: string): void {
    this.#grants.delete(digest(token));
  }

  /** Forgets every token of the account. */
  revokeAccount(accountId: string): void {
    for (const [key, grant] of this.#grants) if (grant.accountId === accountId) this.#grants.delete(key);
  }

  #sweep(): void {
    const now = this.#options.clock.now();
    if (now - this.#lastSweep < SWEEP_INTERVAL_MS) return;
    this.#lastSweep = now;
    for (const [key, grant] of this.#grants) if (grant.expiresAt <= now) this.#grants.delete(key);
  }
}

function digest(token: string): string {
  return createHash('sha256').update(token).digest('base64url');
}
