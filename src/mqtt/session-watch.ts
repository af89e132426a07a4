/**
 * What a station's MQTT sessions do, told to whoever listens (`StationLinkEvent`): sessions coming
 * up and going down, reconnects that fail, and a session taken over again and again by another
 * process that runs the same station. One `SessionWatch` lives as long as its station; each
 * connection the station opens is watched by its own `ConnectionWatch`.
 */
import { refusalCause } from './transport.js';

/**
 * What happens to a station's MQTT session, for notices (`onLinkEvent`):
 * - `up`: the broker accepted a connection (CONNACK 0);
 * - `down`: a session that was up closed; `deliberate` when the station ended it itself (offline,
 *   reboot, stop);
 * - `retryFailed`: a reconnect attempt failed before CONNACK (the broker is unreachable, refused
 *   the connection, or did not answer), with the reason (no credentials in it);
 * - `refused`: besides `retryFailed`, when the broker would not have the connection (a refused
 *   CONNACK, a client certificate refused at the TLS handshake, a failed handshake): `cause` says
 *   why in a few words (`refusalCause` in transport.ts);
 * - `takenOver`: the broker closed the session soon after accepting it, and the next reconnect was
 *   accepted at once, `TAKEN_OVER_AFTER` times in a row. That is what a broker does to the older of
 *   two sessions with one client id (MQTT 3.1.1, section 3.1.4): another process almost certainly
 *   runs this station too (overlapping `--shard` values). Said once per run of such closes.
 */
export type StationLinkEvent =
  | { kind: 'up' }
  | { kind: 'down'; deliberate: boolean }
  | { kind: 'retryFailed'; reason: string }
  | { kind: 'refused'; token: string; clientId: string; cause: string }
  | { kind: 'takenOver'; token: string; clientId: string; closes: number };

/** Sessions that close this soon after their CONNACK count as closed "soon" (at least twice the longest reconnect delay). */
export const SHORT_SESSION_MS = 30_000;
/** Closes soon after CONNACK, each followed by an accepted reconnect, before `takenOver` is said. */
export const TAKEN_OVER_AFTER = 3;

export interface SessionWatchOptions {
  token: string;
  clientId: string;
  /** The longest reconnect delay: a session closed within twice this still counts as closed soon. */
  maxReconnectMs: number;
  /** Real time in milliseconds, for how long a session lasted. */
  wallClock: () => number;
}

/** The sessions of one station, over all the connections it opens. */
export class SessionWatch {
  readonly #options: SessionWatchOptions;
  /** Long enough that a station kicked out by a twin that reconnects at the longest delay still counts. */
  readonly #shortSessionMs: number;
  /** Made on the first `onLinkEvent`: a fleet of 100,000 stations with nobody listening pays no Set each. */
  #listeners: Set<(event: StationLinkEvent) => void> | undefined;
  #sessionUp = false;
  /** Sessions in a row that the broker closed soon after accepting them (see `StationLinkEvent`). */
  #closedSoon = 0;
  /** Why the broker refused the last attempt, until it accepts one. */
  #refusal: string | undefined;

  constructor(options: SessionWatchOptions) {
    this.#options = options;
    this.#shortSessionMs = Math.max(SHORT_SESSION_MS, 2 * options.maxReconnectMs);
  }

  /** True between an `up` and the next `down`. */
  get sessionUp(): boolean {
    return this.#sessionUp;
  }

  /** Why the broker refused the station's last attempt to connect; undefined once it accepts one. */
  get refusal(): string | undefined {
    return this.#refusal;
  }

  /** As `StationClient.onLinkEvent`. */
  onLinkEvent(listener: (event: StationLinkEvent) => void): () => void {
    const listeners = (this.#listeners ??= new Set());
    listeners.add(listener);
    if (this.#closedSoon >= TAKEN_OVER_AFTER) listener(this.#takenOverEvent());
    return () => listeners.delete(listener);
  }

  /** Watches a new connection of the station, from before its first CONNECT. */
  connection(): ConnectionWatch {
    return new ConnectionWatch(this);
  }

  /** @internal A CONNACK came after a session closed soon (or not). */
  sessionStarted(afterShortSession: boolean): void {
    this.#sessionUp = true;
    this.#refusal = undefined;
    this.#link({ kind: 'up' });
    if (!afterShortSession) return;
    this.#closedSoon += 1;
    if (this.#closedSoon === TAKEN_OVER_AFTER) this.#link(this.#takenOverEvent());
  }

  /** @internal A session that was up closed; true if it counts as closed soon by the broker. */
  sessionEnded(deliberate: boolean, lastedMs: number): boolean {
    this.#sessionUp = false;
    this.#link({ kind: 'down', deliberate });
    const soon = !deliberate && lastedMs < this.#shortSessionMs;
    if (!soon) this.#closedSoon = 0;
    return soon;
  }

  /** @internal A reconnect failed before its CONNACK: the broker is away, not closing a session it took. */
  retryFailed(reason: string, refusal: string | undefined): void {
    this.#closedSoon = 0;
    this.#refusal = refusal;
    this.#link({ kind: 'retryFailed', reason });
    if (refusal !== undefined) this.#link({ kind: 'refused', token: this.#options.token, clientId: this.#options.clientId, cause: refusal });
  }

  /** @internal */
  now(): number {
    return this.#options.wallClock();
  }

  #link(event: StationLinkEvent): void {
    if (!this.#listeners) return;
    for (const listener of this.#listeners) listener(event);
  }

  #takenOverEvent(): StationLinkEvent {
    return { kind: 'takenOver', token: this.#options.token, clientId: this.#options.clientId, closes: this.#closedSoon };
  }
}

/** The sessions of one connection (the first CONNECT and every automatic reconnect). */
export class ConnectionWatch {
  readonly #station: SessionWatch;
  /** When the current session's CONNACK came, while it is up. */
  #startedAt: number | undefined;
  /** The last session closed soon after it began, not by us: the next CONNACK counts it. */
  #closedSoon = false;
  #lastError: Error | undefined;

  constructor(station: SessionWatch) {
    this.#station = station;
  }

  /** The broker accepted the connection. */
  connected(): void {
    this.#startedAt = this.#station.now();
    const afterShortSession = this.#closedSoon;
    this.#closedSoon = false;
    this.#station.sessionStarted(afterShortSession);
  }

  /** The client reported `error`; a close that follows before a CONNACK gives it as the reason. */
  failed(error: Error): void {
    this.#lastError = error;
  }

  /**
   * The connection closed: `deliberate` when the station ended it, `retrying` when it had been up
   * once (so the client reconnects by itself). True when a session that was up lasted, or was
   * ended by the station: the reconnect backoff starts again.
   */
  closed(deliberate: boolean, retrying: boolean): boolean {
    const startedAt = this.#startedAt;
    const error = this.#lastError;
    this.#startedAt = undefined;
    this.#lastError = undefined;
    if (startedAt !== undefined) {
      this.#closedSoon = this.#station.sessionEnded(deliberate, this.#station.now() - startedAt);
      return !this.#closedSoon;
    }
    if (!deliberate && retrying) {
      this.#closedSoon = false;
      this.#station.retryFailed(error?.message ?? 'connection closed', error ? refusalCause(error) : undefined);
    }
    return false;
  }
}
