/**
 * The timers of a station's MQTT session, with its pending reconnect brought forward on request
 * (`FleetReconnect` in reconnect-policy.ts). The lean client sets its reconnect timer on the clock
 * it is given, right after asking `reconnectDelay` for the delay (lean-client/client.ts, `reconnectDelay`:
 * "asked when the reconnect is scheduled"): `markNext()`, called from there, says that the next
 * timer is the reconnect. Every other timer (CONNACK deadline, keepalive) passes through untouched.
 */
import type { Clock, TimerHandle } from '../shared/clock.js';

let ids = 0;

/** The reconnect timer as the lean client holds it; what runs under it may be replaced. */
class ReconnectHandle {
  readonly id = ++ids;
  inner: TimerHandle;
  dueAt: number;
  readonly callback: () => void;
  #reffed = false;

  constructor(inner: TimerHandle, dueAt: number, callback: () => void) {
    this.inner = inner;
    this.dueAt = dueAt;
    this.callback = callback;
  }

  /** As a Node timer's: the lean client keeps the process alive while a reconnect is due. */
  ref(): this {
    this.#reffed = true;
    if ('ref' in this.inner) this.inner.ref();
    return this;
  }

  get reffed(): boolean {
    return this.#reffed;
  }
}

export class ReconnectTimers implements Clock {
  readonly #clock: Clock;
  #nextIsReconnect = false;
  #pending: ReconnectHandle | undefined;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  now(): number {
    return this.#clock.now();
  }

  /** The next timer set is the reconnect. */
  markNext(): void {
    this.#nextIsReconnect = true;
  }

  setTimeout(callback: () => void, ms: number): TimerHandle {
    if (!this.#nextIsReconnect) return this.#clock.setTimeout(callback, ms);
    this.#nextIsReconnect = false;
    const handle: ReconnectHandle = new ReconnectHandle(this.#clock.setTimeout(() => this.#fire(handle), ms), this.now() + Math.max(0, ms), callback);
    this.#pending = handle;
    return handle;
  }

  clearTimeout(handle: TimerHandle): void {
    if (handle instanceof ReconnectHandle) {
      this.#clock.clearTimeout(handle.inner);
      if (this.#pending === handle) this.#pending = undefined;
      return;
    }
    this.#clock.clearTimeout(handle);
  }

  /** How long until the pending reconnect; undefined when none is pending. */
  get reconnectInMs(): number | undefined {
    return this.#pending === undefined ? undefined : Math.max(0, this.#pending.dueAt - this.now());
  }

  /** Brings the pending reconnect forward to `ms` from now, if it is due later. True if it did. */
  reconnectWithin(ms: number): boolean {
    const pending = this.#pending;
    if (!pending || pending.dueAt - this.now() <= ms) return false;
    this.#clock.clearTimeout(pending.inner);
    pending.inner = this.#clock.setTimeout(() => this.#fire(pending), ms);
    pending.dueAt = this.now() + ms;
    if (pending.reffed && 'ref' in pending.inner) pending.inner.ref();
    return true;
  }

  #fire(handle: ReconnectHandle): void {
    if (this.#pending === handle) this.#pending = undefined;
    handle.callback();
  }
}
