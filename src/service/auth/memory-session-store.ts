/**
 * Sessions in the memory of one API process: the embedded default. A restart forgets them all:
 * every refresh token, and (access tokens being checked against their family) every access token
 * too, even with a fixed `STATION_SIM_JWT_SECRET`. For sessions shared by several processes or
 * kept across restarts, use `RedisSessionStore`.
 */
import type { ServiceClock } from '../service-clock.js';
import type { AccessSession, ConsumeOutcome, FamilyRecord, NewFamily, RefreshRecord, SessionStore } from './session-store.js';

/** How often expired records are swept out, at most. */
const SWEEP_INTERVAL_MS = 60_000;

/**
 * The most used-token hashes remembered. Each is ~100 bytes; a family lasts at most its maximum
 * lifetime, so at one refresh an hour per session 100,000 covers ~40 busy sessions over 90 days or
 * thousands over a week. Past the bound the oldest are forgotten first: a replay of one of those
 * is still refused (the token is gone), only no longer recognised as a replay.
 */
export const MAX_USED_TOKENS = 100_000;

interface StoredFamily extends FamilyRecord {
  keepUntil: number;
}

export interface MemorySessionStoreOptions {
  clock: ServiceClock;
  /** Bound on remembered used-token hashes. @default 100000 */
  maxUsedTokens?: number;
}

export class MemorySessionStore implements SessionStore {
  readonly #clock: ServiceClock;
  readonly #maxUsed: number;
  readonly #refresh = new Map<string, RefreshRecord>();
  /** Hash of a consumed token → its family and until when it is worth remembering. */
  readonly #used = new Map<string, { sid: string; accountId: string; until: number }>();
  readonly #families = new Map<string, StoredFamily>();
  readonly #generations = new Map<string, number>();
  #lastSweep: number;

  constructor(options: MemorySessionStoreOptions) {
    this.#clock = options.clock;
    this.#maxUsed = options.maxUsedTokens ?? MAX_USED_TOKENS;
    this.#lastSweep = options.clock.now();
  }

  /** Records held, for tests of the bounds. */
  get sizes(): { refresh: number; used: number; families: number } {
    return { refresh: this.#refresh.size, used: this.#used.size, families: this.#families.size };
  }

  async generation(accountId: string): Promise<number> {
    return this.#generations.get(accountId) ?? 0;
  }

  async startFamily(sid: string, family: NewFamily, first: { hash: string; record: RefreshRecord }): Promise<void> {
    this.#sweep();
    this.#families.set(sid, { ...family, revoked: false });
    this.#refresh.set(first.hash, first.record);
  }

  async saveRefresh(hash: string, record: RefreshRecord, familyKeepUntil: number): Promise<void> {
    this.#sweep();
    this.#refresh.set(hash, record);
    const family = this.#families.get(record.sid);
    if (family) family.keepUntil = Math.max(family.keepUntil, familyKeepUntil);
  }

  // Synchronous from lookup to delete, so atomic within the process.
  async consumeRefresh(hash: string): Promise<ConsumeOutcome> {
    const record = this.#refresh.get(hash);
    if (!record) {
      const used = this.#used.get(hash);
      return used ? { outcome: 'reused', sid: used.sid, accountId: used.accountId } : { outcome: 'unknown' };
    }
    this.#refresh.delete(hash);
    const family = this.#families.get(record.sid);
    if (family) this.#remember(hash, { sid: record.sid, accountId: record.accountId, until: family.keepUntil });
    return {
      outcome: 'consumed',
      record,
      family: family && { accountId: family.accountId, endsAt: family.endsAt, revoked: family.revoked },
      generation: this.#generations.get(record.accountId) ?? 0,
    };
  }

  async revokeFamily(sid: string): Promise<void> {
    const family = this.#families.get(sid);
    if (family) family.revoked = true;
  }

  async bumpGeneration(accountId: string): Promise<number> {
    const next = (this.#generations.get(accountId) ?? 0) + 1;
    this.#generations.set(accountId, next);
    return next;
  }

  isAccessLive(session: AccessSession): boolean {
    if (session.gen !== (this.#generations.get(session.sub) ?? 0)) return false;
    const family = this.#families.get(session.sid);
    return family !== undefined && !family.revoked && family.accountId === session.sub;
  }

  async close(): Promise<void> {
    this.#refresh.clear();
    this.#used.clear();
    this.#families.clear();
  }

  #remember(hash: string, used: { sid: string; accountId: string; until: number }): void {
    if (this.#used.size >= this.#maxUsed) {
      // Oldest first: Map iteration follows insertion order.
      const oldest = this.#used.keys().next().value;
      if (oldest !== undefined) this.#used.delete(oldest);
    }
    this.#used.set(hash, used);
  }

  #sweep(): void {
    const now = this.#clock.now();
    if (now - this.#lastSweep < SWEEP_INTERVAL_MS) return;
    this.#lastSweep = now;
    for (const [key, record] of this.#refresh) if (record.expiresAt <= now) this.#refresh.delete(key);
    for (const [key, used] of this.#used) if (used.until <= now) this.#used.delete(key);
    for (const [key, family] of this.#families) if (family.keepUntil <= now) this.#families.delete(key);
  }
}
