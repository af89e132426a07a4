/**
 * The dashboard's data layer: the `/sim/v1` control plane over HTTP and its event stream over
 * WebSocket (docs/control-plane.md). It knows nothing about the screen, so it can be driven from a
 * test or another tool.
 */
import WebSocket from 'ws';
import { systemClock, type Clock, type TimerHandle } from '../shared/clock.js';
import { redactUrlsIn } from '../shared/redact-url.js';
import type { LinkSpec } from '../fixture/link-schema.js';
import type { ApiFault, ApiFaultListReply, ApiFaultSpec, JournalClearReply, JournalEntry, JournalReply, JudgeReply } from '../control/wire-schemas.js';
import type { ControlJournalQuery, ControlVerifyExpectation, ControlVerifyQuery } from './journal-query.js';
import type { EventStreamHandlers, EventSubscription, StreamState } from './event-stream-types.js';
import { iterateEvents, type EventFilter, type FilteredEvent, type SimEventIterator } from './event-iterator.js';
import { LiveFleet, type WaitOptions } from './live-fleet.js';
import {
  parseSimEvent,
  type ClockReply,
  type Fault,
  type FaultSpec,
  type LockStatus,
  type PhysicalAction,
  type ResetReply,
  type SimEvent,
  type SimEventType,
  type SimHealth,
  type SimStation,
  type SimStationList,
  type StationListReply,
  type StationStatus,
} from './sim-types.js';

export interface ControlClientOptions {
  /**
   * Base URL of the simulator's HTTP server, e.g. `http://127.0.0.1:8080`, to which `/sim/v1` is
   * added; or the control plane's own URL, ending in `/sim/v1`, as `STATION_SIM_CONTROL_URL` holds it.
   */
  url: string;
  /**
   * Sent as `Authorization: Bearer <controlToken>` on every request and on the event stream, for a
   * simulator started with `--control-token`.
   * @default no Authorization header
   */
  controlToken?: string;
  /** @default globalThis.fetch */
  fetch?: typeof fetch;
  /** Timers of the reconnect backoff. @default systemClock */
  clock?: Clock;
  /** Source of the backoff jitter, in [0, 1). @default Math.random */
  random?: () => number;
  /** Delay before the first reconnect; it doubles with each failed attempt. @default 250 */
  reconnectBaseMs?: number;
  /** Longest delay between reconnects. @default 10000 */
  reconnectMaxMs?: number;
  /**
   * A request not answered in this long fails. Longer than the 5 s the control plane itself waits
   * for a station before answering 504, so that answer gets through.
   * @default 10000
   */
  requestTimeoutMs?: number;
  /**
   * How often the event stream is pinged. A connection that died without a word (a network
   * partition, a suspended laptop, a proxy that lost its upstream) otherwise looks open forever,
   * with the screen saying "events live" over stale data.
   * @default 10000
   */
  pingIntervalMs?: number;
  /** A ping not answered in this long ends the connection, and a reconnect follows. @default 5000 */
  pongTimeoutMs?: number;
  /** An event-stream connection whose opening handshake takes longer is given up and retried. @default 10000 */
  handshakeTimeoutMs?: number;
}

export type { EventStreamHandlers, EventSubscription, StreamState } from './event-stream-types.js';

/** A control-plane request that failed; `status` is 0 when the server could not be reached. */
export class ControlPlaneError extends Error {
  readonly status: number;

  constructor(status: number, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ControlPlaneError';
    this.status = status;
  }
}

/** WebSocket close code the control plane uses for a missing or wrong control token. */
const CLOSE_UNAUTHORIZED = 4401;

/**
 * Why a 401 came when no token was sent: the server's own words ("Control token is invalid") read
 * as if a wrong one had been given. Named as `station-sim dashboard` takes it.
 */
export const CONTROL_TOKEN_NEEDED = 'control token needed: pass --control-token or set STATION_SIM_CONTROL_TOKEN';
/** "Try again later": the control plane drops a client with more than 1 MiB waiting. */
const CLOSE_TRY_AGAIN_LATER = 1013;

export class ControlClient {
  readonly #base: string;
  readonly #token: string | undefined;
  readonly #fetch: typeof fetch;
  readonly #clock: Clock;
  readonly #random: () => number;
  readonly #baseDelay: number;
  readonly #maxDelay: number;
  readonly #requestTimeout: number;
  readonly #pingInterval: number;
  readonly #pongTimeout: number;
  readonly #handshakeTimeout: number;
  /** Aborted by `close()`: every request still in flight ends with it. */
  readonly #closing = new AbortController();
  /** The iterators of `events()` still open, closed by `close()`. */
  readonly #iterators = new Set<SimEventIterator<SimEvent>>();
  /** The long-lived stream the waits read (live-fleet.ts), opened by `watch()` or the first wait. */
  #live: LiveFleet | undefined;

  constructor(options: ControlClientOptions) {
    // Keep any path prefix of the base URL (a reverse proxy may mount the simulator under one).
    const url = options.url.replace(/\/+$/, '');
    this.#base = url.endsWith('/sim/v1') ? url : `${url}/sim/v1`;
    this.#token = options.controlToken;
    this.#fetch = options.fetch ?? globalThis.fetch;
    this.#clock = options.clock ?? systemClock;
    this.#random = options.random ?? Math.random;
    this.#baseDelay = options.reconnectBaseMs ?? 250;
    this.#maxDelay = options.reconnectMaxMs ?? 10_000;
    this.#requestTimeout = options.requestTimeoutMs ?? 10_000;
    this.#pingInterval = options.pingIntervalMs ?? 10_000;
    this.#pongTimeout = options.pongTimeoutMs ?? 5_000;
    this.#handshakeTimeout = options.handshakeTimeoutMs ?? 10_000;
  }

  /**
   * Aborts every request still waiting for an answer, and refuses new ones. Without it a server
   * that hangs keeps the process alive for up to `requestTimeoutMs` after the dashboard is gone.
   * The iterators of `events()` (and so the waits) still open end too. (Subscriptions of
   * `subscribe()` are closed by their own `close()`.)
   */
  close(): void {
    this.#closing.abort();
    for (const iterator of [...this.#iterators]) iterator.close();
    this.#live?.close();
  }

  /** `GET /sim/v1/health`. A 503 is an answer too (`ready: false`), not an error. */
  health(): Promise<SimHealth> {
    return this.#request<SimHealth>('GET', '/health', undefined, [503]);
  }

  /** `GET /sim/v1/judge`: what the judge found in the code under test, per rule and with evidence (docs/judge.md). */
  judge(): Promise<JudgeReply> {
    return this.#request<JudgeReply>('GET', '/judge');
  }

  /**
   * `GET /sim/v1/stations`: every station, as an array that also carries the reply's `missing`,
   * the fixture's stations no fleet process answered for (a shard's process is down, say). Check
   * it before taking the list for the whole fleet (docs/control-plane.md).
   */
  async stations(): Promise<SimStationList> {
    const reply = await this.#request<StationListReply>('GET', '/stations');
    return Object.assign(reply.stations, { missing: reply.missing });
  }

  station(token: string): Promise<SimStation> {
    return this.#request('GET', `/stations/${encodeURIComponent(token)}`);
  }

  /** Offline is a real disconnect (the last will fires); online a real reconnect. */
  setConnection(token: string, online: boolean): Promise<SimStation> {
    return this.#request('POST', `/stations/${encodeURIComponent(token)}/connection`, { online });
  }

  /**
   * Changes a station's link to its broker (docs/links.md): a profile name (`'nb-iot'`,
   * `'half-open'`, `'perfect'`) or figures. Only a station whose fixture gives it a link has one.
   */
  setLink(token: string, link: LinkSpec): Promise<SimStation> {
    return this.#request('PUT', `/stations/${encodeURIComponent(token)}/link`, typeof link === 'string' ? { profile: link } : link);
  }

  setBattery(token: string, voltage: number): Promise<SimStation> {
    return this.#request('POST', `/stations/${encodeURIComponent(token)}/battery`, { voltage });
  }

  /** The station drops its connection, stays down `downMs` (server default 2000), reconnects. */
  reboot(token: string, downMs?: number): Promise<SimStation> {
    return this.#request('POST', `/stations/${encodeURIComponent(token)}/reboot`, downMs === undefined ? {} : { downMs });
  }

  physical(token: string, lockId: string, action: PhysicalAction): Promise<SimStation> {
    return this.#request('POST', `/stations/${encodeURIComponent(token)}/locks/${encodeURIComponent(lockId)}/physical`, { action });
  }

  addFault(token: string, fault: FaultSpec): Promise<Fault> {
    return this.#request('POST', `/stations/${encodeURIComponent(token)}/faults`, fault);
  }

  clearFaults(token: string): Promise<SimStation> {
    return this.#request('DELETE', `/stations/${encodeURIComponent(token)}/faults`);
  }

  removeFault(token: string, faultId: string): Promise<SimStation> {
    return this.#request('DELETE', `/stations/${encodeURIComponent(token)}/faults/${encodeURIComponent(faultId)}`);
  }

  /** `GET /sim/v1/clock`: the simulator's time, and whether it moves only when told (`--clock manual`). */
  simulatorClock(): Promise<ClockReply> {
    return this.#request('GET', '/clock');
  }

  /** Every station back to the fixture's starting state. */
  reset(): Promise<ResetReply> {
    return this.#request('POST', '/reset');
  }

  /**
   * `POST /sim/v1/clock/advance`: moves the manual clock `ms` forward and answers once the timers
   * due on the way have fired and their messages have flowed. A simulator not started with
   * `--clock manual` answers 409 (`CLOCK_NOT_MANUAL`).
   */
  advanceClock(ms: number): Promise<ClockReply> {
    return this.#request('POST', '/clock/advance', { ms });
  }

  /**
   * The event stream as an async iterator: `for await (const event of control.events({ type:
   * 'lock.state', token: 'CI-1' }))`. `break` closes its socket. It does not reconnect: a dropped
   * stream, or more than `maxBuffered` events left unread, ends it with an error. The stream's first
   * message, the fleet's snapshot, is what `ready` resolves with.
   */
  events<T extends SimEventType = Exclude<SimEventType, 'snapshot'>>(filter: EventFilter<T> = {}): SimEventIterator<FilteredEvent<T>> {
    // It can end before it is returned (a URL the WebSocket refuses): then it is never held.
    let ended = false;
    // Undefined until iterateEvents returns: the end callback may run before it does.
    let iterator: SimEventIterator<FilteredEvent<T>> | undefined = undefined;
    iterator = iterateEvents((handlers) => this.subscribe(handlers), filter, () => {
      ended = true;
      if (iterator) this.#iterators.delete(iterator);
    });
    if (!ended) this.#iterators.add(iterator);
    return iterator;
  }

  /**
   * Opens the event stream the waits read, and resolves once its snapshot is in. Call it before
   * acting (the test helper does, at start): a wait then sees every state from that moment on,
   * however short, where a stream opened by the wait itself could miss a lock that opened and
   * closed while it connected. It stays open, reconnecting if it drops, until `close()`.
   */
  watch(): Promise<void> {
    return this.#liveFleet().ready();
  }

  /**
   * Resolves once the station is `status`: now, as the watched stream last saw it, or at an event
   * after. On timeout it rejects with what it saw last:
   * `station CI-2 did not become "online" within 2000 ms; last seen "offline"`.
   */
  waitForStation(token: string, status: StationStatus, options?: WaitOptions): Promise<void> {
    return this.#liveFleet().waitForStation(token, status, options);
  }

  /**
   * Resolves once the lock is `status`, as `waitForStation`. On timeout:
   * `lock CI-1/1 did not become "unlocked" within 2000 ms; last seen "locked" (station online)`.
   */
  waitForLock(token: string, lockId: string, status: LockStatus, options?: WaitOptions): Promise<void> {
    return this.#liveFleet().waitForLock(token, lockId, status, options);
  }

  #liveFleet(): LiveFleet {
    if (this.#closing.signal.aborted) throw new ControlPlaneError(0, 'the control client is closed');
    this.#live ??= new LiveFleet((handlers) => this.subscribe(handlers), this.#clock);
    return this.#live;
  }

  /**
   * Pings `current` every interval once scheduled (again on each pong); with no pong within the
   * timeout it tells `onSilent` why and terminates the connection.
   */
  #heartbeat(current: WebSocket, onSilent: (failure: string) => void): { schedule: () => void; stop: () => void } {
    let timer: TimerHandle | undefined;
    const stop = (): void => {
      if (timer !== undefined) this.#clock.clearTimeout(timer);
      timer = undefined;
    };
    const schedule = (): void => {
      stop();
      timer = this.#clock.setTimeout(() => {
        current.ping();
        timer = this.#clock.setTimeout(() => {
          timer = undefined;
          onSilent(`no answer to a ping in ${formatSeconds(this.#pongTimeout)}`);
          current.terminate();
        }, this.#pongTimeout);
      }, this.#pingInterval);
    };
    return { schedule, stop };
  }

  /**
   * Subscribes to `GET /sim/v1/events`. When the stream drops it reconnects with exponential
   * backoff and jitter, and the new connection starts with a fresh snapshot; a refused control
   * token stops it, since retrying cannot help.
   */
  subscribe(handlers: EventStreamHandlers): EventSubscription {
    const url = `${this.#base.replace(/^http/, 'ws')}/events`;
    const headers: Record<string, string> = this.#token === undefined ? {} : { authorization: `Bearer ${this.#token}` };
    let socket: WebSocket | undefined;
    let retryTimer: TimerHandle | undefined;
    let attempt = 0;
    let stopped = false;
    const report = (state: StreamState): void => {
      if (!stopped) handlers.onState?.(state);
    };

    const connect = (): void => {
      retryTimer = undefined;
      attempt += 1;
      report({ phase: 'connecting', attempt });
      let failure = 'connection closed';
      let refused = false;
      let current: WebSocket;
      try {
        current = new WebSocket(url, { headers, handshakeTimeout: this.#handshakeTimeout });
      } catch (error) {
        // A URL ws cannot use ("localhost:8080", no scheme): no retry can help. The message may
        // quote the URL, so any credentials in it are taken out.
        report({ phase: 'refused', reason: redactUrlsIn((error as Error).message) });
        return;
      }
      socket = current;
      // A missing pong ends the connection (the 'close' below reconnects).
      const heartbeat = this.#heartbeat(current, (reason) => {
        failure = reason;
      });
      current.on('open', () => {
        report({ phase: 'open' });
        heartbeat.schedule();
      });
      current.on('pong', heartbeat.schedule);
      current.on('message', (data) => {
        // A connection only counts as good once it delivers: one that opens and closes at once
        // (a proxy with nothing behind it) must keep backing off, not reconnect in a tight loop.
        attempt = 0;
        if (stopped) return;
        const event = parseSimEvent(data.toString());
        if (event) handlers.onEvent(event);
      });
      current.on('error', (error) => {
        failure = error.message;
        if (/Unexpected server response: 401\b/.test(error.message)) refused = true;
      });
      current.on('close', (code, reason) => {
        heartbeat.stop();
        if (socket === current) socket = undefined;
        if (stopped) return;
        if (code === CLOSE_UNAUTHORIZED) refused = true;
        // 1013: the server found this client too slow. Coming straight back (with another full
        // snapshot) would only repeat that, so wait as if a few attempts had failed.
        if (code === CLOSE_TRY_AGAIN_LATER) attempt = Math.max(attempt, 3);
        if (code !== 1006 || reason.length > 0) failure = `closed (${code}${reason.length > 0 ? ` ${reason.toString()}` : ''})`;
        if (refused) {
          report({ phase: 'refused', reason: this.#token === undefined ? CONTROL_TOKEN_NEEDED : 'Control token is invalid' });
          return;
        }
        const retryInMs = this.#backoff(attempt);
        report({ phase: 'waiting', attempt, retryInMs, retryAt: this.#clock.now() + retryInMs, reason: failure });
        retryTimer = this.#clock.setTimeout(connect, retryInMs);
      });
    };

    connect();
    return {
      close: () => {
        if (stopped) return;
        report({ phase: 'closed' });
        stopped = true;
        if (retryTimer !== undefined) this.#clock.clearTimeout(retryTimer);
        // terminate() rather than close(): on the way out there is no point waiting for the close handshake.
        socket?.terminate();
      },
    };
  }

  #backoff(attempt: number): number {
    const ceiling = Math.min(this.#maxDelay, this.#baseDelay * 2 ** Math.max(0, attempt - 1));
    // "Equal jitter": at least half the ceiling, so many dashboards do not reconnect in step.
    return Math.round(ceiling / 2 + (this.#random() * ceiling) / 2);
  }

  async #request<T>(method: string, path: string, body?: unknown, alsoOk: readonly number[] = []): Promise<T> {
    const headers: Record<string, string> = {};
    if (this.#token !== undefined) headers['authorization'] = `Bearer ${this.#token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    // An own controller and timer, not `AbortSignal.any([…, AbortSignal.timeout(ms)])`: on Node 20
    // the timeout signal inside `any` can be garbage-collected and never fire (nodejs/node#57736),
    // and one request left waiting for good stopped the clock poll for good. The timer is held here
    // and cleared once the answer (body included) is in.
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(new DOMException('The request got no answer in time', 'TimeoutError')), this.#requestTimeout);
    const onClosing = (): void => abort.abort(this.#closing.signal.reason);
    if (this.#closing.signal.aborted) onClosing();
    else this.#closing.signal.addEventListener('abort', onClosing, { once: true });
    let response: Response;
    let text: string;
    try {
      try {
        response = await this.#fetch(`${this.#base}${path}`, {
          method,
          headers,
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          signal: abort.signal,
        });
      } catch (error) {
        throw new ControlPlaneError(0, `cannot reach the control plane: ${describeFetchError(error)}`, { cause: error });
      }
      text = await response.text();
    } finally {
      clearTimeout(timer);
      this.#closing.signal.removeEventListener('abort', onClosing);
    }
    let json: unknown;
    try {
      json = text.length === 0 ? undefined : JSON.parse(text);
    } catch {
      json = undefined;
    }
    if (response.ok || alsoOk.includes(response.status)) {
      if (json === undefined) throw new ControlPlaneError(response.status, `${method} ${path}: the answer is not JSON`);
      return json as T;
    }
    // Errors are `{"message": "…"}` (docs/control-plane.md); anything else is named by its status.
    const message = typeof json === 'object' && json !== null && typeof (json as { message?: unknown }).message === 'string'
      ? (json as { message: string }).message
      : `HTTP ${response.status}`;
    throw new ControlPlaneError(response.status, response.status === 401 && this.#token === undefined ? CONTROL_TOKEN_NEEDED : message);
  }

  // ── Request journal, API faults (docs/control-plane.md, "Request journal" and "API faults") ──────

  /** `GET /sim/v1/journal`: the entries after `since` (default all), oldest first, and the mark to pass next time. */
  journal(query: ControlJournalQuery = {}): Promise<JournalReply> {
    const params = new URLSearchParams();
    for (const key of ['since', 'kind', 'token', 'limit'] as const) if (query[key] !== undefined) params.set(key, String(query[key]));
    const search = params.toString();
    return this.#request('GET', `/journal${search === '' ? '' : `?${search}`}`);
  }

  /** The journal's mark now: pass it as `since` to see only what comes after. */
  async mark(): Promise<number> {
    return (await this.#request<JournalReply>('GET', '/journal?since=9007199254740991')).mark;
  }

  /** `DELETE /sim/v1/journal`: forgets every entry; marks keep increasing, so one taken before still works. */
  clearJournal(): Promise<JournalClearReply> {
    return this.#request('DELETE', '/journal');
  }

  /**
   * Checks what reached the simulator since `query.since` (default: all the journal holds), as
   * WireMock's `verify`: the entries matching every field given must number `count`, or at least
   * `atLeast` (default 1) and at most `atMost`. Returns the matching entries; otherwise throws an
   * Error that says what was expected and lists, one line each, the matching entries and the others.
   */
  async verify(query: ControlVerifyQuery, expectation: ControlVerifyExpectation = {}): Promise<JournalEntry[]> {
    const { entries, truncated } = await this.journal({ ...(query.since === undefined ? {} : { since: query.since }), ...(query.kind === undefined ? {} : { kind: query.kind }) });
    const matching = entries.filter((entry) => ControlClient.#journalMatches(entry, query));
    const { count } = expectation;
    const atLeast = count ?? expectation.atLeast ?? (expectation.atMost === undefined ? 1 : 0);
    const atMost = count ?? expectation.atMost ?? Number.POSITIVE_INFINITY;
    if (matching.length >= atLeast && matching.length <= atMost) return matching;
    const wanted = count !== undefined ? `exactly ${count}` : atMost === Number.POSITIVE_INFINITY ? `at least ${atLeast}` : atLeast === 0 ? `at most ${atMost}` : `${atLeast} to ${atMost}`;
    const filters = Object.entries(query).filter(([, value]) => value !== undefined).map(([key, value]) => `${key}=${String(value)}`).join(' ');
    const matched = new Set(matching);
    const others = entries.filter((entry) => !matched.has(entry));
    const lines = (list: typeof entries): string => (list.length === 0 ? '\n  (none)' : list.slice(-50).map((entry) => `\n  ${ControlClient.#journalLine(entry)}`).join('') + (list.length > 50 ? `\n  (${list.length - 50} earlier not shown)` : ''));
    throw new Error(
      `expected ${wanted} journal ${wanted.endsWith(' 1') ? 'entry' : 'entries'} matching ${filters === '' ? 'anything' : filters}, found ${matching.length}` +
        `${truncated ? ' (the journal dropped entries after the mark: it keeps the last 10000)' : ''}\nmatching:${lines(matching)}\nothers seen:${lines(others)}`,
    );
  }

  /** `POST /sim/v1/api-faults`: answers the `/v1` requests it matches as `spec` says. */
  addApiFault(spec: ApiFaultSpec): Promise<ApiFault> {
    return this.#request('POST', '/api-faults', spec);
  }

  async apiFaults(): Promise<ApiFault[]> {
    return (await this.#request<ApiFaultListReply>('GET', '/api-faults')).faults;
  }

  async removeApiFault(id: string): Promise<void> {
    await this.#request('DELETE', `/api-faults/${encodeURIComponent(id)}`);
  }

  /** Removes every API fault; `reset()` does too. */
  async clearApiFaults(): Promise<void> {
    await this.#request('DELETE', '/api-faults');
  }

  static #journalMatches(entry: JournalEntry, query: ControlVerifyQuery): boolean {
    const fields = entry as Partial<Record<'method' | 'route' | 'token' | 'lockId' | 'status', unknown>>;
    if (query.kind !== undefined && entry.kind !== query.kind) return false;
    // `route` may carry its method, as an API fault's does: 'POST /v1/auth/refresh'.
    const [routeMethod, routePattern] = query.route?.includes(' ') ? query.route.split(' ', 2) : [undefined, query.route];
    const method = query.method ?? routeMethod;
    if (method !== undefined && fields.method !== method.toUpperCase()) return false;
    if (routePattern !== undefined && fields.route !== routePattern) return false;
    if (query.token !== undefined && fields.token !== query.token) return false;
    if (query.lockId !== undefined && fields.lockId !== query.lockId) return false;
    if (query.status !== undefined && fields.status !== query.status) return false;
    return true;
  }

  /** One entry in a line: `#12 api GET /v1/stations/:station_token 401 3 ms fault=f1`; never a token of a session (entries carry none). */
  static #journalLine(entry: JournalEntry): string {
    if (entry.kind === 'command') {
      return `#${entry.seq} command ${entry.token} lock ${entry.lockId} ${entry.commandId} ${entry.outcome}${entry.reason === undefined ? '' : ` (${entry.reason})`}`;
    }
    const { seq, at: _at, kind: _kind, method, route, status, ms, ...rest } = entry;
    const extra = Object.entries(rest).map(([key, value]) => ` ${key}=${String(value)}`).join('');
    return `#${seq} api ${method} ${route} ${status} ${ms} ms${extra}`;
  }
}

function formatSeconds(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(ms % 1000 === 0 ? 0 : 1)} s` : `${ms} ms`;
}

/**
 * Why a request got no answer, in a word where there is one: `ECONNREFUSED`, not fetch's bare
 * "fetch failed". undici hides the socket's error in `cause`, and a client that wraps fetch's error
 * (the reference client's `ApiUnreachableError`) one level further down; `undefined` when no cause
 * in the chain has a code.
 */
export function networkErrorCode(error: unknown): string | undefined {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = current.cause;
  }
  return undefined;
}

export function describeFetchError(error: unknown): string {
  if (error instanceof Error) {
    if (error.name === 'TimeoutError') return 'no answer in time';
    if (error.name === 'AbortError') return 'the connection was closed';
    const code = networkErrorCode(error);
    if (code !== undefined) return code;
    const cause = error.cause as { message?: unknown } | undefined;
    if (typeof cause?.message === 'string') return cause.message;
    return error.message;
  }
  return String(error);
}

/** What the dashboard uses of the control plane; tests can hand in a stand-in. */
export type DashboardControl = Pick<
  ControlClient,
  'health' | 'station' | 'setConnection' | 'setBattery' | 'setLink' | 'reboot' | 'physical' | 'subscribe' | 'addFault' | 'clearFaults' | 'addApiFault' | 'apiFaults' | 'clearApiFaults'
>;
