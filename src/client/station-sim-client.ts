/**
 * A typed reference client of the `/v1` API, written against spec/service-interface.md only, so it
 * works unchanged against the real service. It follows interface section 5 for tokens (see
 * `TokenSession`) and section 3 for commands: callers should check `status === "online"` first.
 */
import { ApiError } from './api-error.js';
import { CallDeadline, withDeadline, type CallOptions, type DeadlineSettings } from './call-deadline.js';
import { HttpTransport, type FetchLike, type JsonRequest } from './http-transport.js';
import { TokenSession } from './token-session.js';
import type { Station, UnlockResult } from '../service/http/api-schemas.js';

export interface StationSimClientOptions {
  /** Base address of the service, e.g. `http://127.0.0.1:8080`; paths start with `/v1/`. */
  baseUrl: string;
  email: string;
  password: string;
  /** What sends requests; what it throws becomes the `cause` of an `ApiUnreachableError`. @default globalThis.fetch */
  fetch?: FetchLike;
  /** Time used to decide when to refresh. @default real time */
  clock?: { now(): number };
  /**
   * Refresh this long before the access token's `exp` (capped at half the token's lifetime).
   * @default 60
   */
  refreshSkewSeconds?: number;
  /** Receives one line per login, refresh or retry. Never receives a token. @default none */
  logger?: (message: string) => void;
  /**
   * Gives up on a call after this many milliseconds without its answer (the login or refresh it
   * waits for included), with `ApiTimeoutError`; a call's own `timeoutMs` overrides it. `0` or
   * `Infinity` waits for good.
   * @default none: a call waits as long as the connection stays open
   */
  timeoutMs?: number;
  /**
   * Aborts every call of the client, in flight or to come, with `ApiAbortedError` (e.g. the
   * signal of a test's teardown). A call's own `signal` adds to it.
   * @default none
   */
  signal?: AbortSignal;
}

export class StationSimClient {
  readonly #transport: HttpTransport;
  readonly #session: TokenSession;
  readonly #log: (message: string) => void;
  readonly #timeoutMs: number | undefined;
  readonly #signal: AbortSignal | undefined;

  constructor(options: StationSimClientOptions) {
    if (options.timeoutMs !== undefined) checkTimeout('timeoutMs', options.timeoutMs);
    this.#timeoutMs = options.timeoutMs;
    this.#signal = options.signal;
    this.#transport = new HttpTransport(options.baseUrl, options.fetch ?? ((input, init) => globalThis.fetch(input, init)));
    this.#log = options.logger ?? (() => {});
    this.#session = new TokenSession({
      transport: this.#transport,
      email: options.email,
      password: options.password,
      clock: options.clock ?? { now: () => Date.now() },
      refreshSkewSeconds: options.refreshSkewSeconds ?? 60,
      log: this.#log,
      // The client's signal only: a renewal is shared, so one caller's signal must not abort it.
      renewalDeadline: (what, callTimeoutMs) => new CallDeadline({ what, api: this.#transport.shownUrl, signals: [this.#signal], timeoutMs: this.#timeoutMs ?? callTimeoutMs }),
    });
  }

  /** True once a login succeeded and until logout or revokeAll. */
  get loggedIn(): boolean {
    return this.#session.loggedIn;
  }

  /**
   * Logs in now (otherwise the first call does). Throws `ApiError` 401 "Invalid credentials", and
   * (as every call does) `ApiUnreachableError` when the API gives no answer.
   */
  async login(options?: CallOptions): Promise<void> {
    await withDeadline(this.#settings('POST /v1/auth/login', options), (deadline) => deadline.race(this.#session.renew('login', options?.timeoutMs)));
  }

  /** Refreshes the token pair now; logs in again if the refresh token is refused. */
  async refresh(options?: CallOptions): Promise<void> {
    await withDeadline(this.#settings('POST /v1/auth/refresh', options), (deadline) => deadline.race(this.#session.renew('refresh', options?.timeoutMs)));
  }

  /** GET /v1/stations/{station_token}. */
  async getStation(stationToken: string, options?: CallOptions): Promise<Station> {
    return this.#authorized<Station>({ method: 'GET', path: `/v1/stations/${pathSegment('station token', stationToken)}` }, options);
  }

  /**
   * POST /v1/stations/{station_token}/locks/{lock_id}/unlock. A refused command is `{ success: false, message }`, not an error.
   * After an `ApiTimeoutError` or `ApiAbortedError` the station may still carry the command out: read it before sending again.
   */
  async unlock(stationToken: string, lockId: string, options?: CallOptions): Promise<UnlockResult> {
    return this.#authorized<UnlockResult>(
      {
        method: 'POST',
        path: `/v1/stations/${pathSegment('station token', stationToken)}/locks/${pathSegment('lock id', lockId)}/unlock`,
      },
      options,
    );
  }

  /** Ends the session: revokes the refresh token (interface section 5.6) and forgets both tokens. */
  async logout(options?: CallOptions): Promise<void> {
    const request: JsonRequest = { method: 'POST', path: '/v1/auth/revoke' };
    await withDeadline(this.#settings(`${request.method} ${request.path}`, options), async (deadline) => {
      const refreshToken = await deadline.race(this.#session.end());
      if (refreshToken !== undefined) await this.#transport.send({ ...request, body: { refreshToken } }, deadline);
    });
  }

  /** Invalidates every session of the account, this one included (interface section 5.7). */
  async revokeAll(options?: CallOptions): Promise<void> {
    await this.#authorized({ method: 'POST', path: '/v1/auth/revoke-all' }, options);
    await this.#session.end();
  }

  /** Sends with the current token; after a 401, renews once and retries once (interface section 5.5). */
  #authorized<T>(request: { method: 'GET' | 'POST'; path: string }, options: CallOptions | undefined): Promise<T> {
    return withDeadline(this.#settings(`${request.method} ${request.path}`, options), async (deadline) => {
      const accessToken = await deadline.race(this.#session.accessToken(options?.timeoutMs));
      try {
        return await this.#transport.send<T>({ ...request, accessToken }, deadline);
      } catch (error) {
        if (!(error instanceof ApiError) || error.status !== 401) throw error;
        this.#log(`${request.method} ${request.path}: 401, renewing the token and retrying once`);
        const renewed = await deadline.race(this.#session.afterRejected(accessToken, options?.timeoutMs));
        return this.#transport.send<T>({ ...request, accessToken: renewed }, deadline);
      }
    });
  }

  /** The deadline of one call: the client's signal and the call's, the call's timeout or the client's. */
  #settings(what: string, options: CallOptions | undefined): DeadlineSettings {
    if (options?.timeoutMs !== undefined) checkTimeout('timeoutMs', options.timeoutMs);
    return { what, api: this.#transport.shownUrl, signals: [this.#signal, options?.signal], timeoutMs: options?.timeoutMs ?? this.#timeoutMs };
  }
}

/** A timeout is a number of milliseconds, at least 0 (0 and Infinity wait for good). */
function checkTimeout(name: string, value: number): void {
  if (typeof value !== 'number' || Number.isNaN(value) || value < 0) throw new TypeError(`${name} must be a number of milliseconds, at least 0, not ${String(value)}`);
}

/** Creates a client; nothing is sent until the first call. */
export function createClient(options: StationSimClientOptions): StationSimClient {
  return new StationSimClient(options);
}

/**
 * A token or lock id as one path segment. `.` and `..` cannot be sent as names: every URL parser
 * (fetch, curl, browsers) takes them, percent-encoded or not, for steps of the path and removes
 * them, so the request would reach another route.
 */
function pathSegment(what: string, value: string): string {
  if (value === '.' || value === '..') throw new TypeError(`the ${what} "${value}" cannot be sent in a URL path ("." and ".." are removed from URLs as path steps)`);
  return encodeURIComponent(value);
}
