/**
 * A typed reference client of the `/v1` API, written against spec/service-interface.md only, so it
 * works unchanged against the real service. It follows interface section 5 for tokens (see
 * `TokenSession`) and section 3 for commands: callers should check `status === "online"` first.
 */
import { ApiError } from './api-error.js';
import { HttpTransport, type FetchLike } from './http-transport.js';
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
}

export class StationSimClient {
  readonly #transport: HttpTransport;
  readonly #session: TokenSession;
  readonly #log: (message: string) => void;

  constructor(options: StationSimClientOptions) {
    this.#transport = new HttpTransport(options.baseUrl, options.fetch ?? ((input, init) => globalThis.fetch(input, init)));
    this.#log = options.logger ?? (() => {});
    this.#session = new TokenSession({
      transport: this.#transport,
      email: options.email,
      password: options.password,
      clock: options.clock ?? { now: () => Date.now() },
      refreshSkewSeconds: options.refreshSkewSeconds ?? 60,
      log: this.#log,
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
  async login(): Promise<void> {
    await this.#session.renew('login');
  }

  /** Refreshes the token pair now; logs in again if the refresh token is refused. */
  async refresh(): Promise<void> {
    await this.#session.renew('refresh');
  }

  /** GET /v1/stations/{station_token}. */
  async getStation(stationToken: string): Promise<Station> {
    return this.#authorized<Station>({ method: 'GET', path: `/v1/stations/${pathSegment('station token', stationToken)}` });
  }

  /** POST /v1/stations/{station_token}/locks/{lock_id}/unlock. A refused command is `{ success: false, message }`, not an error. */
  async unlock(stationToken: string, lockId: string): Promise<UnlockResult> {
    return this.#authorized<UnlockResult>({
      method: 'POST',
      path: `/v1/stations/${pathSegment('station token', stationToken)}/locks/${pathSegment('lock id', lockId)}/unlock`,
    });
  }

  /** Ends the session: revokes the refresh token (interface section 5.6) and forgets both tokens. */
  async logout(): Promise<void> {
    const refreshToken = await this.#session.end();
    if (refreshToken !== undefined) await this.#transport.send({ method: 'POST', path: '/v1/auth/revoke', body: { refreshToken } });
  }

  /** Invalidates every session of the account, this one included (interface section 5.7). */
  async revokeAll(): Promise<void> {
    await this.#authorized({ method: 'POST', path: '/v1/auth/revoke-all' });
    await this.#session.end();
  }

  /** Sends with the current token; after a 401, renews once and retries once (interface section 5.5). */
  async #authorized<T>(request: { method: 'GET' | 'POST'; path: string }): Promise<T> {
    const accessToken = await this.#session.accessToken();
    try {
      return await this.#transport.send<T>({ ...request, accessToken });
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 401) throw error;
      this.#log(`${request.method} ${request.path}: 401, renewing the token and retrying once`);
      const renewed = await this.#session.afterRejected(accessToken);
      return this.#transport.send<T>({ ...request, accessToken: renewed });
    }
  }
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
