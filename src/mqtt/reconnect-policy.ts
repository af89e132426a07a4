/**
 * How long a station waits before it reconnects: exponential backoff with full jitter (the delay
 * is drawn anywhere between 0 and min(longest, first × 2^attempt)), so a fleet does not reconnect
 * in lockstep after a broker restart: the reconnects of 10,000 stations spread evenly over the
 * window instead of arriving as waves. The delay is not reset by a CONNACK, only by a session that
 * lasted (`reset`): a station whose session the broker keeps closing (a twin in another process
 * takes it over) backs off to the longest window instead of reconnecting at once every time.
 *
 * The jitter has a random stream of its own (`reconnectRandom` in src/station/random.ts), never
 * the station model's: a reconnect must not shift the next unlock delay, so the same seed replays
 * the same run whether or not the connection dropped (STYLE.md).
 */
import type { Random } from '../station/random.js';

export interface ReconnectBackoffOptions {
  /** The delay before the first reconnect, and the base the window doubles from. */
  firstMs: number;
  /** The widest window: no delay is longer. */
  maxMs: number;
  /** Where the jitter comes from: a stream only the backoff draws from. */
  random: Random;
}

/** The delay before the next reconnect, drawn on each close and put back by a session that lasted. */
export class ReconnectBackoff {
  readonly #options: ReconnectBackoffOptions;
  #delayMs: number;
  /** Closes since the backoff last started again. */
  #attempt = 0;

  constructor(options: ReconnectBackoffOptions) {
    this.#options = options;
    this.#delayMs = options.firstMs;
  }

  /** What the next reconnect waits. */
  get delayMs(): number {
    return this.#delayMs;
  }

  /** A session that lasted: the backoff starts again from the first delay. */
  reset(): void {
    this.#attempt = 0;
    this.#delayMs = this.#options.firstMs;
  }

  /** A connection closed: the window doubles, up to the longest, and the delay is drawn from all of it. */
  grow(): void {
    this.#attempt = Math.min(this.#attempt + 1, 52);
    const window = Math.min(this.#options.maxMs, this.#options.firstMs * 2 ** this.#attempt);
    this.#delayMs = this.#options.random.int(0, Math.round(window));
  }
}

/**
 * Once the broker answers again after an outage, how soon the rest of the fleet follows. A station
 * that has backed off to the widest window may sleep up to `maxMs` (15 s) after the broker is back,
 * so a fleet of 5 came back 13 s after a 30 s outage. The first station the broker
 * accepts again tells the others (`FleetReconnect.answered`), and each one whose reconnect is
 * further off than a draw from the recovery window reconnects at that draw instead: still jittered,
 * so the returning broker sees the fleet spread over the window, and the window grows with the
 * fleet (`perStationMs` each, from `minWindowMs` up to the backoff's `maxMs`), so a large fleet
 * does not come back as a stampede.
 */
export interface FleetReconnectOptions {
  /** The widest reconnect window of the stations: the recovery window never exceeds it. */
  maxMs: number;
  /** The recovery window for a small fleet. @default 1000 */
  minWindowMs?: number;
  /** Recovery window per station of the process (1 ms: 1,000 reconnects a second). @default 1 */
  perStationMs?: number;
}

/** A station as the fleet's recovery sees it. */
export interface RecoveringStation {
  /** Reconnects within `windowMs` (a draw from its own jitter stream) if it would wait longer. */
  reconnectWithin(windowMs: number): void;
}

/** The stations of one process that reconnect to one broker (see `FleetReconnectOptions`). */
export class FleetReconnect {
  readonly #options: Required<FleetReconnectOptions>;
  readonly #stations = new Set<RecoveringStation>();
  /** A reconnect failed since the broker last accepted one: the next acceptance ends an outage. */
  #outage = false;

  constructor(options: FleetReconnectOptions) {
    this.#options = { minWindowMs: 1000, perStationMs: 1, ...options };
  }

  join(station: RecoveringStation): void {
    this.#stations.add(station);
  }

  leave(station: RecoveringStation): void {
    this.#stations.delete(station);
  }

  /** How long the fleet takes to come back once the broker answers, at most. */
  get windowMs(): number {
    const { minWindowMs, perStationMs, maxMs } = this.#options;
    return Math.min(maxMs, Math.max(minWindowMs, this.#stations.size * perStationMs));
  }

  /** A station's reconnect failed: the broker is away (or refusing). */
  failed(): void {
    this.#outage = true;
  }

  /** The broker accepted a station: once per outage, every other station comes within the window. */
  answered(by: RecoveringStation): void {
    if (!this.#outage) return;
    this.#outage = false;
    const windowMs = this.windowMs;
    for (const station of this.#stations) if (station !== by) station.reconnectWithin(windowMs);
  }
}
