/**
 * The authentication of interface section 5: login, refresh, revoke, revoke-all, and checking the
 * bearer token of protected requests. Every failure is a `SimError` of the catalogue, so the HTTP
 * layer only translates; no failure says which check failed.
 */
import type { AccountSpec, LoginThrottleSettings, PasswordHashingSettings } from '../../fixture/fixture-schema.js';
import { RetryLaterError, SimError } from '../../errors.js';
import type { TokenPair } from '../http/api-schemas.js';
import type { ServiceClock } from '../service-clock.js';
import { AccessTokens } from './access-tokens.js';
import { AccountDirectory, normaliseEmail, type Account } from './account-directory.js';
import { HashLimiter } from './hash-limiter.js';
import { LoginThrottle, addressKey } from './login-throttle.js';
import { RefreshTokens } from './refresh-tokens.js';

export type { Account } from './account-directory.js';

export interface AuthServiceOptions {
  accounts: readonly AccountSpec[];
  /** HMAC key of access tokens (see `resolveJwtSecret`). */
  secret: Uint8Array;
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  clock: ServiceClock;
  /** Failed-login limits per client address and per email (login-throttle.ts). */
  loginThrottle: LoginThrottleSettings;
  /** How many login password checks run at once, and wait (hash-limiter.ts). */
  passwordHashing: PasswordHashingSettings;
}

export class AuthService {
  readonly #accounts: AccountDirectory;
  readonly #access: AccessTokens;
  readonly #refresh: RefreshTokens;
  readonly #clock: ServiceClock;
  readonly #throttle: LoginThrottle;
  readonly #hashing: HashLimiter;
  /**
   * Logins in flight per client address (its throttle key), for the order of the password checks.
   * An entry lives only while its logins do, so it holds at most concurrency + maxQueued addresses
   * beyond those being refused.
   */
  readonly #inFlight = new Map<string, number>();
  /**
   * Revoke-all (interface section 5.7) per account: a counter stamped into every token at issue
   * (`gen`) and bumped by revoke-all, so every token issued before it fails, and a token issued
   * right after it works even within the same second (a `revokedBefore` compared with the
   * whole-second `iat` could not tell the two apart). `revokedAt` keeps the time, for inspection.
   */
  readonly #revocations = new Map<string, { gen: number; revokedAt: number }>();

  private constructor(accounts: AccountDirectory, options: AuthServiceOptions) {
    this.#accounts = accounts;
    this.#clock = options.clock;
    this.#access = new AccessTokens({ secret: options.secret, ttlSeconds: options.accessTokenTtlSeconds, clock: options.clock });
    this.#refresh = new RefreshTokens({ ttlSeconds: options.refreshTokenTtlSeconds, clock: options.clock });
    this.#throttle = new LoginThrottle(options.loginThrottle, options.clock);
    this.#hashing = new HashLimiter(options.passwordHashing);
  }

  /** Hashes the fixture's passwords, then is ready. */
  static async create(options: AuthServiceOptions): Promise<AuthService> {
    return new AuthService(await AccountDirectory.create(options.accounts), options);
  }

  /**
   * Interface section 5.2. Wrong email and wrong password are the same `INVALID_CREDENTIALS`.
   * `clientAddress` is the address the throttle counts failures against. A throttled login is
   * `LOGIN_THROTTLED` (429) and a login that finds the password checks full is `LOGIN_BUSY` (503),
   * both before any scrypt work and with the seconds to wait.
   */
  async login(email: string, password: string, clientAddress: string): Promise<TokenPair> {
    const accountKey = normaliseEmail(email);
    const verdict = this.#throttle.check(accountKey, clientAddress);
    if (!verdict.allowed) throw new RetryLaterError('LOGIN_THROTTLED', verdict.retryAfterSeconds);
    const account = await this.#checkPassword(email, password, clientAddress);
    if (!account) {
      this.#throttle.recordFailure(accountKey, clientAddress);
      throw new SimError('INVALID_CREDENTIALS');
    }
    this.#throttle.recordSuccess(accountKey);
    return this.#issue(account.id);
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
   * Interface section 5.5: a new pair for a valid refresh token, which is used up (rotation).
   * An unknown, used, revoked or expired token is `TOKEN_INVALID` (401).
   */
  async refresh(refreshToken: string): Promise<TokenPair> {
    const grant = this.#refresh.consume(refreshToken);
    if (!grant || grant.gen !== this.#generation(grant.accountId) || !this.#accounts.get(grant.accountId)) {
      throw new SimError('TOKEN_INVALID');
    }
    return this.#issue(grant.accountId);
  }

  /** Interface section 5.6. Unknown tokens are ignored, so the answer reveals nothing about them. */
  revoke(refreshToken: string): void {
    this.#refresh.revoke(refreshToken);
  }

  /** Interface section 5.7: every access and refresh token of the account issued so far stops working. */
  revokeAll(accountId: string): void {
    this.#revocations.set(accountId, { gen: this.#generation(accountId) + 1, revokedAt: this.#clock.now() });
    this.#refresh.revokeAccount(accountId);
  }

  /** When revoke-all last ran for the account, in ms since the epoch; undefined if never. */
  revokedAt(accountId: string): number | undefined {
    return this.#revocations.get(accountId)?.revokedAt;
  }

  /** The account of a valid access token; `TOKEN_INVALID` for a missing, bad, expired or revoked one. */
  async authenticate(accessToken: string | undefined): Promise<Account> {
    const claims = accessToken === undefined ? undefined : await this.#access.verify(accessToken);
    const account = claims && claims.gen === this.#generation(claims.sub) ? this.#accounts.get(claims.sub) : undefined;
    if (!account) throw new SimError('TOKEN_INVALID');
    return account;
  }

  async #issue(accountId: string): Promise<TokenPair> {
    const gen = this.#generation(accountId);
    return {
      accessToken: await this.#access.issue({ sub: accountId, gen }),
      refreshToken: this.#refresh.issue({ accountId, gen }),
    };
  }

  #generation(accountId: string): number {
    return this.#revocations.get(accountId)?.gen ?? 0;
  }
}
