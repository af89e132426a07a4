/**
 * The client rules (docs/judge.md): the `/v1` API shows the judge every request it has answered, as
 * a plain object (`ClientObservation`) with what the API knew of it: the route and status, the
 * client's address, the account once known, a keyed fingerprint of the access token (never the
 * token), what a refresh did with its refresh token, where a token showed in the query string, the
 * station's status the answer showed. The judge says which rules the client broke; the answer was
 * given before it looked, and is not changed. The one rule with a consequence,
 * `client.refresh-token-reused`, has it in the auth service, which revokes the token family.
 *
 * Pure and fed only serialisable observations, so a run can be judged again offline from a record
 * of them. Its memory is bounded: every map is capped, the oldest entries forgotten first (a judge
 * that forgets may miss a finding; it never invents one).
 *
 * "After", observably: the API numbers requests as they arrive (`arrival`) and notes, when it sends
 * an answer, how many had arrived (`arrivalsAtAnswer`). A request whose `arrival` is above that
 * number reached the API after the answer went out. For an unlock after an offline read that is
 * enough. For a token sent again after its 401 it is not: arrival order says nothing of when a
 * client started a request, on one connection or several (four reads sent in parallel reach the
 * API one after another, a client's pool sending queued ones on a connection just after its 401).
 * So a request with a refused token is a repeat only when the client could not have started it
 * before the 401: it arrived more than `inFlightMs` after the 401 was sent (`receivedAt`), or it is
 * the very call (method, route, station, lock) that was already answered 401 with that token, a
 * retry. Observations without `receivedAt` (older transcripts) are judged by arrival order alone.
 */
import type { ClientRuleId, JudgeSettings } from '../fixture/judge-schema.js';
import type { JudgeFinding } from './judge-log.js';

/** Where a token showed in a query string: a parameter named like one, or a value shaped like one. */
export type QueryToken = { parameter: string } | { shape: 'jwt' | 'refresh-token' | 'bearer' };

/** One `/v1` request the API answered, as the client judge sees it. Never a token. */
export interface ClientObservation {
  /** When the answer was sent, ms since the epoch on the API's clock. */
  time: number;
  /** The API's id of the request, as its log shows it. */
  requestId: string;
  /** 1 for the first request the API received, then 2, 3 … */
  arrival: number;
  /** How many requests had arrived when the answer was sent. */
  arrivalsAtAnswer: number;
  /** When the request arrived, ms since the epoch on the API's clock (absent in older transcripts). */
  receivedAt?: number;
  method: string;
  /** The route pattern, `/v1/stations/:station_token`; undefined when no route matched. */
  route?: string;
  status: number;
  /** The client's address (the socket's peer). */
  client: string;
  /** The account's id, once the API knew it (a valid access token, a login, a refresh). */
  account?: string;
  /** A keyed, truncated hash of the bearer access token the request carried: links requests, cannot be reversed. */
  accessToken?: string;
  /** What a refresh or revoke found of its refresh token: `reused` when it had been used up before. */
  refreshToken?: 'rotated' | 'reused';
  /** Where a token showed in the query string, if one did. */
  queryToken?: QueryToken;
  /** The station the route names (`:station_token`). */
  station?: string;
  /** The lock the route names (`:lock_id`). */
  lockId?: string;
  /** The station's status the answer showed (a station read answered 200). */
  stationStatus?: string;
}

export const LOGIN_ROUTE = '/v1/auth/login';
export const REFRESH_ROUTE = '/v1/auth/refresh';
export const STATION_ROUTE = '/v1/stations/:station_token';
export const UNLOCK_ROUTE = '/v1/stations/:station_token/locks/:lock_id/unlock';

/** Entries each of the judge's maps holds at most; the oldest are forgotten first. */
export const CLIENT_JUDGE_CAPACITY = 10_000;

/** Rules that count per client address, whatever the account: their findings name the address, not an account. */
const PER_ADDRESS_RULES: ReadonlySet<ClientRuleId> = new Set(['client.login-burst', 'client.unlock-burst']);

export interface ClientJudgeOptions {
  /** The fixture's `judge` section. */
  settings: JudgeSettings;
  /** Each finding, as it is found. */
  onFinding: (finding: JudgeFinding) => void;
  /** Entries per map (refused tokens, accounts, client addresses, offline reads). @default 10000 */
  capacity?: number;
}

/** The station and lock a finding names, when it names them. */
type FindingTarget = { token?: string; lockId?: string };

/** Times of the last events in a window, at most `max + 1`, and whether the burst was told. */
interface Burst {
  times: number[];
  told: boolean;
}

/** A token answered 401 to a client address: when, and how often it came back since. */
interface Refusal {
  arrivalsAtAnswer: number;
  /** When the first 401 was sent. */
  time: number;
  /** The calls (`callKey`) answered 401 with this token: the same call again is a retry, whenever it came. */
  calls: Set<string>;
  requestId: string;
  repeats: number;
  told: boolean;
}

export class ClientJudge {
  readonly #rules: NonNullable<JudgeSettings['rules']>;
  readonly #enabled: boolean;
  readonly #onFinding: ClientJudgeOptions['onFinding'];
  readonly #refused: BoundedMap<Refusal>;
  readonly #loginsPerAccount: BoundedMap<Burst>;
  readonly #loginsPerClient: BoundedMap<Burst>;
  /** `account\nclient\nstation` → when the answer that showed the station offline was sent. */
  readonly #offlineReads: BoundedMap<number>;
  /** Client addresses whose last refresh was refused (401): their next login is what section 5.5 asks for. */
  readonly #refreshRefused: BoundedMap<true>;
  /** `client\nstation` → the unlocks it sent lately. */
  readonly #unlocks: BoundedMap<Burst>;

  constructor(options: ClientJudgeOptions) {
    this.#rules = options.settings.rules ?? {};
    this.#enabled = options.settings.enabled !== false;
    this.#onFinding = options.onFinding;
    const capacity = options.capacity ?? CLIENT_JUDGE_CAPACITY;
    this.#refused = new BoundedMap(capacity);
    this.#loginsPerAccount = new BoundedMap(capacity);
    this.#loginsPerClient = new BoundedMap(capacity);
    this.#offlineReads = new BoundedMap(capacity);
    this.#refreshRefused = new BoundedMap(capacity);
    this.#unlocks = new BoundedMap(capacity);
  }

  /** False when the fixture says `judge.enabled: false`: `observe` then does nothing at all. */
  get enabled(): boolean {
    return this.#enabled;
  }

  /**
   * After `POST /sim/v1/reset` (a test suite's reset between tests): the stations are back to the
   * fixture, so what a client last read of them no longer holds, and a new test's login is not one
   * a refresh would do. Login counts and reads are forgotten; tokens refused with 401 are not (a
   * reset revokes no token, and sending one again after its 401 is still wrong). Findings stay.
   */
  forgetAfterReset(): void {
    this.#loginsPerAccount.clear();
    this.#loginsPerClient.clear();
    this.#offlineReads.clear();
    this.#refreshRefused.clear();
    this.#unlocks.clear();
  }

  /** Entries held per map, for the tests of the bounds. */
  get sizes(): { refused: number; accounts: number; clients: number; offlineReads: number; refreshRefused: number } {
    return {
      refused: this.#refused.size,
      accounts: this.#loginsPerAccount.size,
      clients: this.#loginsPerClient.size,
      offlineReads: this.#offlineReads.size,
      refreshRefused: this.#refreshRefused.size,
    };
  }

  observe(request: ClientObservation): void {
    if (!this.#enabled) return;
    if (request.queryToken) this.#report(request, 'client.token-in-query', describeQueryToken(request.queryToken));
    if (request.refreshToken === 'reused') {
      this.#report(request, 'client.refresh-token-reused', 'a refresh token that had been used up was sent again: its token family is revoked, every token of that login with it');
    }
    if (request.accessToken !== undefined) this.#checkTokenAfter401(request, request.accessToken);
    if (request.method === 'POST' && request.route === REFRESH_ROUTE) {
      if (request.status === 401) this.#refreshRefused.set(request.client, true);
      else if (request.status === 200) this.#refreshRefused.delete(request.client);
    }
    if (request.method === 'POST' && request.route === LOGIN_ROUTE) this.#checkLogins(request);
    if (request.route === STATION_ROUTE || request.route === UNLOCK_ROUTE) this.#checkStation(request);
  }

  #report(request: ClientObservation, rule: ClientRuleId, detail: string, extra: FindingTarget = {}): void {
    if (this.#rules[rule]?.enabled === false) return;
    this.#onFinding({
      time: new Date(request.time).toISOString(),
      rule,
      party: 'client',
      ...extra,
      // A rule that counts per address names no account: the burst is many accounts' as much as this one's.
      ...(request.account === undefined || PER_ADDRESS_RULES.has(rule) ? {} : { account: request.account }),
      requestId: request.requestId,
      client: request.client,
      route: `${request.method} ${request.route ?? '(no route)'}`,
      detail,
    });
  }

  #checkTokenAfter401(request: ClientObservation, fingerprint: string): void {
    const key = `${fingerprint}\n${request.client}`;
    const refusal = this.#refused.get(key);
    const settings = this.#rules['client.token-after-401'];
    if (refusal && this.#repeats(request, refusal, settings?.inFlightMs ?? IN_FLIGHT_MS)) {
      refusal.repeats += 1;
      const allowed = settings?.maxRepeats ?? 0;
      if (refusal.repeats > allowed && !refusal.told) {
        refusal.told = true;
        this.#report(
          request,
          'client.token-after-401',
          `an access token answered 401 (request ${refusal.requestId}) was sent again ${refusal.repeats} time${refusal.repeats === 1 ? '' : 's'}${allowed > 0 ? `; at most ${allowed} allowed` : ''}: refresh it, and log in if the refresh is refused`,
        );
      }
    }
    if (request.status !== 401) return;
    if (!refusal) this.#refused.set(key, { arrivalsAtAnswer: request.arrivalsAtAnswer, time: request.time, calls: new Set([callKey(request)]), requestId: request.requestId, repeats: 0, told: false });
    else if (refusal.calls.size < MAX_CALLS_PER_REFUSAL) refusal.calls.add(callKey(request));
  }

  /** Whether `request` repeats a refused token rather than being in flight when the 401 went out (module comment, "After"). */
  #repeats(request: ClientObservation, refusal: Refusal, inFlightMs: number): boolean {
    if (request.arrival <= refusal.arrivalsAtAnswer) return false;
    if (request.receivedAt === undefined) return true;
    return request.receivedAt - refusal.time > inFlightMs || refusal.calls.has(callKey(request));
  }

  #checkLogins(request: ClientObservation): void {
    const burst = this.#rules['client.login-burst'];
    const burstMax = burst?.maxLogins ?? 10;
    const burstWindow = burst?.windowMs ?? 10_000;
    const perClient = this.#loginsPerClient.upsert(request.client, newBurst);
    if (countBurst(perClient, request.time, burstMax, burstWindow)) {
      this.#report(request, 'client.login-burst', `${perClient.times.length} login attempts from ${request.client} within ${burstWindow} ms; at most ${burstMax} allowed`);
    }
    if (request.status !== 200 || request.account === undefined) return;
    // A login after a refused refresh is the one interface section 5.5 asks for: no refresh would do.
    const excused = this.#refreshRefused.get(request.client) === true;
    this.#refreshRefused.delete(request.client);
    if (excused) return;
    const logins = this.#rules['client.login-instead-of-refresh'];
    const max = logins?.maxLogins ?? 5;
    const windowMs = logins?.windowMs ?? 60_000;
    const perAccount = this.#loginsPerAccount.upsert(request.account, newBurst);
    if (countBurst(perAccount, request.time, max, windowMs)) {
      this.#report(
        request,
        'client.login-instead-of-refresh',
        `${perAccount.times.length} logins of the account within ${windowMs} ms; at most ${max} allowed: keep the refresh token and refresh instead`,
      );
    }
  }

  #checkStation(request: ClientObservation): void {
    // Only what an authenticated client did with a station it may reach: a 401 or 404 told it nothing.
    if (request.account === undefined || request.station === undefined) return;
    if (request.route === STATION_ROUTE) {
      if (request.status !== 200 || request.stationStatus === undefined) return;
      if (request.stationStatus === 'offline') this.#offlineReads.set(readKey(request), request.arrivalsAtAnswer);
      else if (this.#offlineReads.size > 0) this.#offlineReads.delete(readKey(request));
      return;
    }
    if (request.method !== 'POST' || request.status === 401 || request.status === 404) return;
    const burst = this.#rules['client.unlock-burst'];
    const burstMax = burst?.maxUnlocks ?? 10;
    const burstWindow = burst?.windowMs ?? 1000;
    const unlocks = this.#unlocks.upsert(`${request.client}\n${request.station}`, newBurst);
    if (countBurst(unlocks, request.time, burstMax, burstWindow)) {
      this.#report(
        request,
        'client.unlock-burst',
        `${unlocks.times.length} unlocks of ${request.station} from ${request.client} within ${burstWindow} ms; at most ${burstMax} allowed: each one is a command to the station`,
        { token: request.station, ...(request.lockId === undefined ? {} : { lockId: request.lockId }) },
      );
    }
    // Nearly always empty: no key is built for it then.
    const readAnswered = this.#offlineReads.size === 0 ? undefined : this.#offlineReads.get(readKey(request));
    if (readAnswered === undefined || request.arrival <= readAnswered) return;
    this.#report(request, 'client.unlock-offline-station', `unlock of a station whose status was offline when this client last read it; read it again until it is online`, {
      token: request.station,
      ...(request.lockId === undefined ? {} : { lockId: request.lockId }),
    });
  }
}

/** The key of a client's last read of a station (`#offlineReads`): the account, the address and the station. */
function readKey(request: ClientObservation): string {
  return `${request.account}\n${request.client}\n${request.station}`;
}

/** A burst with nothing in it yet (a function made once, not per request). */
function newBurst(): Burst {
  return { times: [], told: false };
}

/** How long after a 401 a request with its token may still have been started before it. @default 1000 */
export const IN_FLIGHT_MS = 1000;

/** Calls remembered per refused token: a client's parallel batch is a handful, never thousands. */
const MAX_CALLS_PER_REFUSAL = 64;

/** One call of the API: the same method, route, station and lock. */
function callKey(request: ClientObservation): string {
  return `${request.method} ${request.route ?? ''} ${request.station ?? ''} ${request.lockId ?? ''}`;
}

/**
 * Adds an event at `now` to a burst and says whether the burst just went over `max` within
 * `windowMs` (told once, until it falls back under). Only the last `max + 1` times are kept.
 */
function countBurst(burst: Burst, now: number, max: number, windowMs: number): boolean {
  burst.times.push(now);
  if (burst.times.length > max + 1) burst.times.shift();
  while (burst.times.length > 0 && burst.times[0]! <= now - windowMs) burst.times.shift();
  if (burst.times.length <= max) {
    burst.told = false;
    return false;
  }
  if (burst.told) return false;
  burst.told = true;
  return true;
}

function describeQueryToken(found: QueryToken): string {
  if ('parameter' in found) return `a query parameter named ${found.parameter}: tokens go in the Authorization header and passwords in the body, never in a URL`;
  const shape = found.shape === 'jwt' ? 'a JWT' : found.shape === 'bearer' ? 'a bearer token ("Bearer …")' : 'a refresh token';
  return `a query value shaped like ${shape}: tokens go in the Authorization header, never in a URL`;
}

/** A Map that holds at most `capacity` entries, forgetting the least recently set first. */
export class BoundedMap<V> {
  readonly #entries = new Map<string, V>();
  readonly #capacity: number;

  constructor(capacity: number) {
    if (!(Number.isInteger(capacity) && capacity >= 1)) throw new RangeError(`capacity must be a whole number of at least 1, not ${capacity}`);
    this.#capacity = capacity;
  }

  get size(): number {
    return this.#entries.size;
  }

  clear(): void {
    this.#entries.clear();
  }

  get(key: string): V | undefined {
    return this.#entries.get(key);
  }

  /** Sets the value as the newest entry; forgets the oldest when over capacity. */
  set(key: string, value: V): void {
    this.#entries.delete(key);
    this.#entries.set(key, value);
    if (this.#entries.size > this.#capacity) this.#entries.delete(this.#entries.keys().next().value as string);
  }

  /**
   * The entry of `key`, as it is; created with `make` (and so the newest) when there is none. An
   * entry found is not moved: that would cost a delete and an insert on every unlock a client sends,
   * and a burst is told within its window, long before 10,000 newer keys could push it out.
   */
  upsert(key: string, make: () => V): V {
    let value = this.#entries.get(key);
    if (value === undefined) {
      value = make();
      this.set(key, value);
    }
    return value;
  }

  delete(key: string): void {
    this.#entries.delete(key);
  }
}
