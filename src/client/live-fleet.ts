/**
 * The fleet's station and lock states as the event stream tells them, kept up to date by one
 * long-lived subscription, and the waits built on it (`waitForStation`, `waitForLock`).
 *
 * Why one stream kept open rather than one per wait: a wait that opened its own stream would see
 * only what happens once the server has subscribed it and gathered a snapshot, which takes a round
 * trip or more. A test that unlocks and then waits for `unlocked` would miss a lock that opened and
 * closed again meanwhile (the `ci` fixture relocks fast; a loaded machine is slow). Opened before
 * the test acts (`ControlClient.watch()`, which the test helper calls at start), the stream has
 * every event from then on, in order: a wait checks the state as this stream last saw it, then
 * each event after, so a state that lasted a moment is still caught.
 */
import type { Clock } from '../shared/clock.js';
import type { EventStreamHandlers, EventSubscription } from './event-stream-types.js';
import type { LockStatus, SimEvent, StationStatus } from './sim-types.js';

interface StationState {
  status: StationStatus;
  locks: Map<string, LockStatus>;
}

export interface WaitOptions {
  /** How long to wait before failing with what was seen last. @default 5000 */
  timeoutMs?: number;
}

const DEFAULT_WAIT_MS = 5000;

export class LiveFleet {
  readonly #stations = new Map<string, StationState>();
  readonly #listeners = new Set<(event: SimEvent) => void>();
  readonly #subscription: EventSubscription;
  readonly #ready: Promise<void>;
  readonly #rejectReady: (error: Error) => void;
  readonly #clock: Clock;
  #closed = false;

  constructor(subscribe: (handlers: EventStreamHandlers) => EventSubscription, clock: Clock) {
    this.#clock = clock;
    let resolveReady!: () => void;
    let rejectReady!: (error: Error) => void;
    this.#ready = new Promise<void>((resolve, reject) => {
      resolveReady = resolve;
      rejectReady = reject;
    });
    this.#ready.catch(() => {});
    this.#rejectReady = rejectReady;
    this.#subscription = subscribe({
      onEvent: (event) => {
        this.#apply(event);
        if (event.type === 'snapshot') resolveReady();
        for (const listener of [...this.#listeners]) listener(event);
      },
      // A dropped stream reconnects and starts again from a snapshot, which brings the states up
      // to date; only a refusal ends it.
      onState: (state) => {
        if (state.phase === 'refused') rejectReady(new Error(`the event stream was refused: ${state.reason}`));
      },
    });
  }

  /** Resolves once the first snapshot is in: from then on no event is missed. */
  ready(): Promise<void> {
    return this.#ready;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#subscription.close();
    // Waits that began before the first snapshot wait on `#ready`; the others are listeners.
    // Either way they end now, not at their timeout. (Rejecting a settled promise does nothing.)
    const closed = new Error('the control client was closed while waiting');
    this.#rejectReady(closed);
    for (const listener of [...this.#listeners]) listener({ type: 'control', action: 'closed', time: '', seq: 0 });
    this.#listeners.clear();
  }

  #apply(event: SimEvent): void {
    if (event.type === 'snapshot') {
      this.#stations.clear();
      for (const station of event.stations) {
        this.#stations.set(station.token, { status: station.status, locks: new Map(station.locks.map((lock) => [lock.lockId, lock.status])) });
      }
    } else if (event.type === 'station.status') {
      const station = this.#stations.get(event.token);
      if (station) station.status = event.status;
    } else if (event.type === 'lock.state') {
      this.#stations.get(event.token)?.locks.set(event.lockId, event.status);
    }
  }

  /**
   * Resolves once the station is `status`, as this stream sees it now or later. On timeout:
   * `station CI-2 did not become "online" within 2000 ms; last seen "offline"`.
   */
  waitForStation(token: string, status: StationStatus, options: WaitOptions = {}): Promise<void> {
    const timeoutMs = checkTimeout(options.timeoutMs);
    let last = 'nothing yet';
    return this.#waitUntil(timeoutMs, () => {
      const station = this.#stations.get(token);
      if (!station) throw new Error(`the simulator has no station ${token}`);
      last = `"${station.status}"`;
      return station.status === status;
    }, () => new Error(`station ${token} did not become "${status}" within ${timeoutMs} ms; last seen ${last}`));
  }

  /**
   * Resolves once the lock is `status`, as `waitForStation`. On timeout:
   * `lock CI-1/1 did not become "unlocked" within 2000 ms; last seen "locked" (station online)`.
   */
  waitForLock(token: string, lockId: string, status: LockStatus, options: WaitOptions = {}): Promise<void> {
    const timeoutMs = checkTimeout(options.timeoutMs);
    let last = 'nothing yet';
    return this.#waitUntil(timeoutMs, () => {
      const station = this.#stations.get(token);
      if (!station) throw new Error(`the simulator has no station ${token}`);
      const lock = station.locks.get(lockId);
      if (lock === undefined) throw new Error(`station ${token} has no lock ${lockId}`);
      last = `"${lock}" (station ${station.status})`;
      return lock === status;
    }, () => new Error(`lock ${token}/${lockId} did not become "${status}" within ${timeoutMs} ms; last seen ${last}`));
  }

  /** Checks `reached` once the stream is ready and after every event, until it holds or time runs out. */
  #waitUntil(timeoutMs: number, reached: () => boolean, timeout: () => Error): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let done = false;
      const finish = (error?: Error): void => {
        if (done) return;
        done = true;
        this.#clock.clearTimeout(timer);
        this.#listeners.delete(check);
        if (error) reject(error);
        else resolve();
      };
      // Each event is applied before listeners hear of it, so the check sees the state it made.
      const check = (): void => {
        if (this.#closed) return finish(new Error('the control client was closed while waiting'));
        try {
          if (reached()) finish();
        } catch (error) {
          finish(error as Error);
        }
      };
      const timer = this.#clock.setTimeout(() => finish(timeout()), timeoutMs);
      this.#ready.then(
        () => {
          if (done) return;
          this.#listeners.add(check);
          check();
        },
        (error: Error) => finish(error),
      );
    });
  }
}

function checkTimeout(timeoutMs: number | undefined): number {
  const ms = timeoutMs ?? DEFAULT_WAIT_MS;
  if (!(Number.isFinite(ms) && ms >= 0)) throw new TypeError(`timeoutMs must be a number of at least 0, not ${String(timeoutMs)}`);
  return ms;
}
