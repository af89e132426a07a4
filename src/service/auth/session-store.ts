/**
 * Where sessions live: refresh tokens (by hash), token families and the revocation generation of
 * each account. `AuthService` holds the policy (what makes a token valid); a store only keeps the
 * records and does the one thing that must be atomic, consuming a refresh token. Two stores:
 * `MemorySessionStore` (the embedded default, one process) and `RedisSessionStore` (shared by
 * several API processes, and kept across restarts).
 *
 * Times are milliseconds on the service clock. Every record carries its own expiry so the store
 * can forget it on its own (a sweep in memory, a TTL in Redis).
 */

/** What a refresh token stands for. Only the SHA-256 hash of the token is the key. */
export interface RefreshRecord {
  /** The family (session) the token belongs to. */
  sid: string;
  accountId: string;
  /** The account's revocation generation at issue. */
  gen: number;
  /** Refreshing with it fails from this time on. */
  expiresAt: number;
}

/** A token family: every token pair descended from one login (RFC 9700, section 4.14.2). */
export interface FamilyRecord {
  accountId: string;
  /** The absolute end of the session: no refresh from this time on, however recent the token. */
  endsAt: number;
  /** Reuse of a rotated token, a logout or an expired family: every token of the family is dead. */
  revoked: boolean;
}

export interface NewFamily extends Omit<FamilyRecord, 'revoked'> {
  keepUntil: number;
}

/** What consuming a refresh token found. */
export type ConsumeOutcome =
  /** The token was live and is now used; `family` is undefined when the family record is gone. */
  | { outcome: 'consumed'; record: RefreshRecord; family: FamilyRecord | undefined; generation: number }
  /** The token had been consumed before: someone replays it. `sid` is its family. */
  | { outcome: 'reused'; sid: string; accountId: string }
  /** Never issued, or forgotten since (expired, or the family is over). */
  | { outcome: 'unknown' };

/** What the hot path asks about an access token's claims. */
export interface AccessSession {
  /** Account id (`sub`). */
  sub: string;
  /** Revocation generation stamped in at issue (`gen`). */
  gen: number;
  /** Family id (`sid`). */
  sid: string;
}

export interface SessionStore {
  /** The account's current revocation generation (0 until its first revoke-all). */
  generation(accountId: string): Promise<number>;
  /**
   * Records a new family and its first refresh token, together. The family is kept until
   * `keepUntil`: while its newest refresh token may be used, and an access token lifetime after
   * (the last access token issued in it lives that long, and is checked against it).
   */
  startFamily(sid: string, family: NewFamily, first: { hash: string; record: RefreshRecord }): Promise<void>;
  /**
   * Records a refresh token of an existing family (after a rotation) and keeps the family until
   * `familyKeepUntil` (later than before: the new token expires later). A family already
   * forgotten is not brought back.
   */
  saveRefresh(hash: string, record: RefreshRecord, familyKeepUntil: number): Promise<void>;
  /**
   * Marks the token used and returns what it stood for, atomically: of two callers (in one process
   * or in two) consuming the same token, exactly one gets `consumed`, the other `reused`. The used
   * token's hash is remembered until its family ends, so a replay is recognised as such.
   */
  consumeRefresh(hash: string): Promise<ConsumeOutcome>;
  /** Marks the family revoked; unknown families are ignored. */
  revokeFamily(sid: string): Promise<void>;
  /** Increments the account's revocation generation and returns the new one (revoke-all). */
  bumpGeneration(accountId: string): Promise<number>;
  /**
   * Whether an access token with these claims is still alive: its generation is the account's
   * current one and its family exists and is not revoked. This runs on every authenticated
   * request; a store answers synchronously whenever it can (a Map lookup).
   */
  isAccessLive(session: AccessSession): boolean | Promise<boolean>;
  /** Releases connections and timers. */
  close(): Promise<void>;
}
