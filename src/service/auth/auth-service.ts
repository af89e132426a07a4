/**
 * The authentication of interface section 5: login, refresh, revoke, revoke-all, and checking the
 * bearer token of protected requests. Every failure is a `SimError` of the catalogue, so the HTTP
 * layer only translates; no failure says which check failed.
 *
 * Sessions are token families (RFC 9700, section 4.14.2): a login starts one, each refresh rotates
 * its refresh token within it, and every access token names it (`sid`). Replaying a refresh token
 * that was already rotated revokes the whole family, since either the client or an attacker holds
 * a stolen copy and the server cannot tell which; a family also has an absolute end, however often
 * it is refreshed. The records live in a `SessionStore` (memory, or Redis shared by processes).
 */
import { randomUUID } from 'node:crypto';
import type { AccountSpec, LoginThrottleSettings, PasswordHashingSettings } from '../../fixture/fixture-schema.js';
import { RetryLaterError, SimError } from '../../errors.js';
import type { TokenPair } from '../http/api-schemas.js';
import type { ServiceClock } from '../service-clock.js';
import { AccessTokens } from './access-tokens.js';
import { AccountDirectory, normaliseEmail, type Account } from './account-directory.js';
import { HashLimiter } from './hash-limiter.js';
import { LoginThrottle, addressKey } from './login-throttle.js';
import { newRefreshToken, refreshTokenHash } from './refresh-tokens.js';
import type { SessionStore } from './session-store.js';

export type { Account } from './account-directory.js';

/**
 * What authenticating a request showed, for the judge of the client (src/judge/client-judge.ts):
 * filled in by the methods that take it, when given. Never a token.
 */
export interface AuthFacts {
  /** The account's id, once known: a valid access token, a login, a refresh or a replayed refresh token. */
  account?: string;
  /** What a refresh or revoke found of its refresh token. */
  refreshToken?: 'rotated' | 'reused';
}

export interface AuthServiceOptions {
  accounts: readonly AccountSpec[];
  /** HMAC key of access tokens (see `resolveJwtSecret`). */
  secret: Uint8Array;
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  /** Absolute lifetime of a session (token family) from its login; at least `refreshTokenTtlSeconds`. */
  sessionMaxLifetimeSeconds: number;
  /** Where refresh tokens, families and revocation generations live. */
  store: SessionStore;
  clock: ServiceClock;
  /** Failed-login limits per client address and per email (login-throttle.ts). */
  loginThrottle: LoginThrottleSettings;
  /** How many login password checks run at once, and wait (hash-limiter.ts). */
  passwordHashing: PasswordHashingSettings;
  /** Told when a replayed refresh token revoked its family (the account id, never the token). */
  onReuse?: (accountId: string) => void;
}

export class AuthService {
  readonly #accounts: AccountDirectory;
  readonly #access: AccessTokens;
  readonly #store: SessionStore;
  readonly #clock: ServiceClock;
  readonly #throttle: LoginThrottle;
  readonly #hashing: HashLimiter;
  /**
   * Logins in flight per client address (its throttle key), for the order of the password checks.
   * An entry lives only while its logins do, so it holds at most concurrency + maxQueued addresses
   * beyond those being refused.
   */
  readonly #inFlight = new Map<string, number>();
  readonly #options: AuthServiceOptions;

  private constructor(accounts: AccountDirectory, options: AuthServiceOptions) {
    this.#accounts = accounts;
    this.#clock = options.clock;
    this.#store = options.store;
    this.#options = options;
    this.#access = new AccessTokens({ secret: options.secret, ttlSeconds: options.accessTokenTtlSeconds, clock: options.clock });
    this.#throttle = new LoginThrottle(options.loginThrottle, options.clock);
    this.#hashing = new HashLimiter(options.passwordHashing);
  }

  /** Checks the lifetimes, hashes the fixture's passwords, then is ready. */
  static async create(options: AuthServiceOptions): Promise<AuthService> {
    checkLifetimes(options);
    return new AuthService(await AccountDirectory.create(options.accounts), options);
  }

  /**
   * Interface section 5.2. Wrong email and wrong password are the same `INVALID_CREDENTIALS`.
   * `clientAddress` is the address the throttle counts failures against. A throttled login is
   * `LOGIN_THROTTLED` (429) and a login that finds the password checks full is `LOGIN_BUSY` (503),
   * both before any scrypt work and with the seconds to wait.
   */
  async login(email: string, password: string, clientAddress: string, facts?: AuthFacts): Promise<TokenPair> {
    const accountKey = normaliseEmail(email);
    const verdict = this.#throttle.check(accountKey, clientAddress);
    if (!verdict.allowed) throw new RetryLaterError('LOGIN_THROTTLED', verdict.retryAfterSeconds);
    const account = await this.#checkPassword(email, password, clientAddress);
    if (!account) {
      this.#throttle.recordFailure(accountKey, clientAddress);
      throw new SimError('INVALID_CREDENTIALS');
    }
    this.#throttle.recordSuccess(accountKey);
    if (facts) facts.account = account.id;
    return this.#startSession(account);
  }

  /** A new session (token family) of the account, and its first token pair. */
  async #startSession(account: Account): Promise<TokenPair> {
    const gen = await this.#store.generation(account.id);
    const now = this.#clock.now();
    const sid = randomUUID();
    const endsAt = now + this.#options.sessionMaxLifetimeSeconds * 1000;
    const refresh = newRefreshToken();
    const record = { sid, accountId: account.id, gen, expiresAt: this.#refreshExpiry(now, endsAt) };
    await this.#store.startFamily(sid, { accountId: account.id, endsAt, keepUntil: this.#keepUntil(record.expiresAt) }, { hash: refresh.hash, record });
    return { accessToken: await this.#access.issue({ sub: account.id, gen, sid }), refreshToken: refresh.token };
  }

  /**
   * The password check. A client address with a failure in the last window or another login in flight is
   * "suspect" and waits behind the rest, so during a flood a client that has not been failing (a
   * real user) is checked next rather than behind the flood, or refused.
   */
  async #checkPassword(email: string, password: string, clientAddress: string): Promise<Account | undefined> {
    const key = addressKey(clientAddress);
    const inFlight = this.#inFlight.get(key) ?? 0;
    this.#inFlight.set(key, inFlight + 1);
    try {
      const suspect = inFlight > 0 || this.#throttle.failedRecently(clientAddress);
      return await this.#hashing.run(() => this.#accounts.verify(email, password), suspect);
    } finally {
      const left = (this.#inFlight.get(key) ?? 1) - 1;
      if (left > 0) this.#inFlight.set(key, left);
      else this.#inFlight.delete(key);
    }
  }

  /** The login throttle and the password checks, for tests and measurements. */
  get loginGuards(): { readonly throttle: LoginThrottle; readonly hashing: HashLimiter } {
    return { throttle: this.#throttle, hashing: this.#hashing };
  }

  /**
   * Interface section 5.5: a new pair for a valid refresh token, which is used up (rotation). An
   * unknown, used, revoked or expired token, or one of a family past its end, is `TOKEN_INVALID`
   * (401). A token used before revokes its family: the pair issued from it stops working too.
   */
  async refresh(refreshToken: string, facts?: AuthFacts): Promise<TokenPair> {
    const found = await this.#store.consumeRefresh(refreshTokenHash(refreshToken));
    if (found.outcome === 'reused') {
      if (facts) Object.assign(facts, { account: found.accountId, refreshToken: 'reused' });
      await this.#store.revokeFamily(found.sid);
      this.#options.onReuse?.(found.accountId);
      throw new SimError('TOKEN_INVALID');
    }
    if (found.outcome === 'unknown') throw new SimError('TOKEN_INVALID');
    const { record, family, generation } = found;
    const now = this.#clock.now();
    const valid =
      family !== undefined &&
      !family.revoked &&
      now < family.endsAt &&
      now < record.expiresAt &&
      record.gen === generation &&
      this.#accounts.get(record.accountId) !== undefined;
    if (!valid || family === undefined) throw new SimError('TOKEN_INVALID');
    const refresh = newRefreshToken();
    const expiresAt = this.#refreshExpiry(now, family.endsAt);
    await this.#store.saveRefresh(refresh.hash, { ...record, expiresAt }, this.#keepUntil(expiresAt));
    if (facts) Object.assign(facts, { account: record.accountId, refreshToken: 'rotated' });
    return { accessToken: await this.#access.issue({ sub: record.accountId, gen: record.gen, sid: record.sid }), refreshToken: refresh.token };
  }

  /**
   * Interface section 5.6 (logout): the refresh token is used up and its whole family ends, so the
   * access tokens of the session stop working too; other sessions of the account are untouched.
   * Unknown tokens are ignored, so the answer reveals nothing about them.
   */
  async revoke(refreshToken: string, facts?: AuthFacts): Promise<void> {
    const found = await this.#store.consumeRefresh(refreshTokenHash(refreshToken));
    if (found.outcome === 'consumed') {
      if (facts) facts.account = found.record.accountId;
      await this.#store.revokeFamily(found.record.sid);
    } else if (found.outcome === 'reused') {
      if (facts) Object.assign(facts, { account: found.accountId, refreshToken: 'reused' });
      await this.#store.revokeFamily(found.sid);
    }
  }

  /**
   * Interface section 5.7: every access and refresh token of the account issued so far stops
   * working. A counter stamped into every token at issue (`gen`) is bumped, so a token issued right
   * after it works even within the same second (a "revoked before" time compared with the
   * whole-second `iat` could not tell the two apart).
   */
  async revokeAll(accountId: string): Promise<void> {
    await this.#store.bumpGeneration(accountId);
  }

  /** The account of a valid access token; `TOKEN_INVALID` for a missing, bad, expired or revoked one. */
  async authenticate(accessToken: string | undefined, facts?: AuthFacts): Promise<Account> {
    const claims = accessToken === undefined ? undefined : await this.#access.verify(accessToken);
    // A Map lookup for the memory store, and for Redis while its revocation feed is up.
    const live = claims !== undefined && (await this.#store.isAccessLive(claims));
    const account = live ? this.#accounts.get(claims.sub) : undefined;
    if (!account) throw new SimError('TOKEN_INVALID');
    if (facts) facts.account = account.id;
    return account;
  }

  /** Closes the session store. */
  close(): Promise<void> {
    return this.#store.close();
  }

  /**
   * How long a family must be remembered once its newest refresh token expires at `refreshExpiry`:
   * an access token lifetime more, for the last access token issued in it. A session left idle is
   * forgotten after one refresh lifetime, not kept to its absolute end.
   */
  #keepUntil(refreshExpiry: number): number {
    return refreshExpiry + this.#options.accessTokenTtlSeconds * 1000;
  }

  /** A refresh token lives its lifetime, but never past the end of its family. */
  #refreshExpiry(now: number, familyEndsAt: number): number {
    return Math.min(now + this.#options.refreshTokenTtlSeconds * 1000, familyEndsAt);
  }
}

/**
 * A session shorter than one refresh token would end every refresh token early, and the refresh
 * lifetime would mean nothing: refused, naming both settings.
 */
export function checkLifetimes(options: Pick<AuthServiceOptions, 'refreshTokenTtlSeconds' | 'sessionMaxLifetimeSeconds'>): void {
  if (options.sessionMaxLifetimeSeconds < options.refreshTokenTtlSeconds) {
    throw new SimError(
      'BAD_REQUEST',
      `the session's maximum lifetime (sessionMaxLifetimeSeconds, ${options.sessionMaxLifetimeSeconds} s) must be at least the refresh token lifetime (refreshTokenTtlSeconds, ${options.refreshTokenTtlSeconds} s)`,
    );
  }
}
