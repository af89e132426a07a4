/**
 * The token handling of interface section 5, on the client side:
 * - log in lazily, on the first call that needs a token (5.2);
 * - refresh shortly before the access token's `exp` (5.4), read with jose's `decodeJwt`;
 * - after a 401, refresh and let the caller retry once; if the refresh is refused, log in again (5.5);
 * - one renewal at a time: concurrent callers that need a new token share the one in flight,
 *   so a burst of requests costs one refresh, not one each (and, with rotating refresh tokens,
 *   does not race itself into 401s).
 * Tokens live only in this object's private fields and are never logged.
 */
import { decodeJwt } from 'jose';
import { isApiError } from './api-error.js';
import type { CallDeadline } from './call-deadline.js';
import type { HttpTransport } from './http-transport.js';
import type { TokenPair } from '../service/http/api-schemas.js';

export interface TokenSessionOptions {
  transport: HttpTransport;
  email: string;
  password: string;
  clock: { now(): number };
  refreshSkewSeconds: number;
  log: (message: string) => void;
  /**
   * The deadline of a login or refresh request. A renewal is shared by every call waiting for a
   * token, so no single caller's signal aborts it (each caller stops waiting on its own deadline);
   * `callTimeoutMs` is the timeout of the call that started it, for a client without one.
   */
  renewalDeadline: (what: string, callTimeoutMs: number | undefined) => CallDeadline;
}

interface AccessToken {
  value: string;
  /** When to refresh, in ms since the epoch; Infinity when the token carries no usable `exp`. */
  refreshAt: number;
  /** When it expires (`exp`), in ms since the epoch; Infinity without a usable `exp`. */
  expiresAt: number;
  /** The server answered it with a 401: never fall back to it. */
  rejected?: boolean;
}

export class TokenSession {
  readonly #options: TokenSessionOptions;
  #access: AccessToken | undefined;
  #refreshToken: string | undefined;
  #renewal: Promise<string> | undefined;

  constructor(options: TokenSessionOptions) {
    this.#options = options;
  }

  get loggedIn(): boolean {
    return this.#access !== undefined;
  }

  /**
   * A token to send now: the current one, or a fresh one when it is due for refresh or missing.
   * A refresh ahead of `exp` that fails (the network, a 5xx) does not fail the call while the
   * current token is still valid: the call goes out with it, and the next call tries again.
   */
  async accessToken(callTimeoutMs?: number): Promise<string> {
    const current = this.#access;
    // A token the server has refused (401) is never sent again: the next call renews first.
    if (!this.#renewal && current && !current.rejected && this.#options.clock.now() < current.refreshAt) return current.value;
    const renewal = this.#renewal ?? this.renew(current ? 'refresh' : 'login', callTimeoutMs);
    if (!current || current.rejected) return renewal;
    try {
      return await renewal;
    } catch (error) {
      if (current.rejected || this.#options.clock.now() >= current.expiresAt) throw error;
      this.#options.log('early refresh failed; using the current access token until it expires');
      return current.value;
    }
  }

  /**
   * The token to retry with after `rejected` got a 401. When another caller has renewed since
   * `rejected` was handed out, its token is used; otherwise this renews.
   */
  async afterRejected(rejected: string, callTimeoutMs?: number): Promise<string> {
    if (this.#access?.value === rejected) this.#access.rejected = true;
    if (this.#renewal) return this.#renewal;
    if (this.#access && this.#access.value !== rejected) return this.#access.value;
    return this.renew('refresh', callTimeoutMs);
  }

  /** Starts a renewal, or joins the one in flight. `refresh` falls back to login on 401. */
  renew(kind: 'login' | 'refresh', callTimeoutMs?: number): Promise<string> {
    if (!this.#renewal) {
      const renewal = this.#renew(kind, callTimeoutMs);
      this.#renewal = renewal;
      const clear = (): void => {
        if (this.#renewal === renewal) this.#renewal = undefined;
      };
      renewal.then(clear, clear);
    }
    return this.#renewal;
  }

  /** Forgets the tokens and returns the refresh token, for revoking. Waits for a renewal in flight. */
  async end(): Promise<string | undefined> {
    await this.#renewal?.catch(() => undefined);
    const refreshToken = this.#refreshToken;
    this.#access = undefined;
    this.#refreshToken = undefined;
    return refreshToken;
  }

  async #renew(kind: 'login' | 'refresh', callTimeoutMs: number | undefined): Promise<string> {
    const { log } = this.#options;
    const send = async (path: string, body: unknown): Promise<TokenPair> => {
      const deadline = this.#options.renewalDeadline(`POST ${path}`, callTimeoutMs);
      try {
        return await this.#options.transport.send<TokenPair>({ method: 'POST', path, body }, deadline);
      } finally {
        deadline.dispose();
      }
    };
    if (kind === 'refresh' && this.#refreshToken !== undefined) {
      try {
        log('refreshing the access token');
        return this.#store(await send('/v1/auth/refresh', { refreshToken: this.#refreshToken }));
      } catch (error) {
        if (!isApiError(error, 401)) throw error;
        log('refresh token refused; logging in again');
      }
    }
    log('logging in');
    this.#access = undefined;
    this.#refreshToken = undefined;
    const { email, password } = this.#options;
    return this.#store(await send('/v1/auth/login', { email, password }));
  }

  #store(pair: TokenPair): string {
    this.#access = { value: pair.accessToken, ...this.#timesOf(pair.accessToken) };
    this.#refreshToken = pair.refreshToken;
    return pair.accessToken;
  }

  /**
   * `exp`, and `exp` minus the skew for the refresh. The skew is capped at half the token's
   * lifetime, so a short-lived token (tests use seconds) is not refreshed on every call.
   */
  #timesOf(accessToken: string): { refreshAt: number; expiresAt: number } {
    let claims: ReturnType<typeof decodeJwt>;
    try {
      claims = decodeJwt(accessToken);
    } catch {
      return { refreshAt: Infinity, expiresAt: Infinity };
    }
    if (typeof claims.exp !== 'number') return { refreshAt: Infinity, expiresAt: Infinity };
    const expMs = claims.exp * 1000;
    const lifetimeMs = typeof claims.iat === 'number' ? expMs - claims.iat * 1000 : Infinity;
    return { refreshAt: expMs - Math.min(this.#options.refreshSkewSeconds * 1000, lifetimeMs / 2), expiresAt: expMs };
  }
}
