/**
 * The event stream as an async iterator (`for await (const event of control.events())`). It goes
 * over the WebSocket of `GET /sim/v1/events`, so it works the same against a simulator in this
 * process and one elsewhere.
 *
 * Unlike the dashboard's `subscribe`, an iterator does not reconnect: a reconnect starts from a new
 * snapshot and may have missed events in between, which a test waiting for one must not take for
 * "it never happened". A dropped stream ends the iteration with an error instead. (The waits,
 * which need only the latest state, keep a reconnecting stream: live-fleet.ts.)
 */
import type { EventStreamHandlers, EventSubscription } from './event-stream-types.js';
import type { SimEvent, SimEventType, SimStation } from './sim-types.js';

/** Which events an iterator yields; every condition given must hold. */
export interface EventFilter<T extends SimEventType = SimEventType> {
  /**
   * Only events of this type, or of these types. The `snapshot` the stream starts with is yielded
   * only when asked for here; otherwise it is what `ready` resolves with.
   * @default every type but `snapshot`
   */
  type?: T | readonly T[];
  /** Only events of this station (events that name no station, such as a fleet-wide `control`, are left out). */
  token?: string;
  /** Only events of this lock (events with no lock are left out). */
  lockId?: string;
  /**
   * How many events may wait unread. A consumer slower than the simulator would otherwise hold
   * every event in memory; past this the iterator fails with an error that says so.
   * @default 10000
   */
  maxBuffered?: number;
}

/** The events a filter of types `T` lets through. */
export type FilteredEvent<T extends SimEventType> = Extract<SimEvent, { type: T }>;

/** An open event stream, read with `for await`; `break` or `return` closes its socket. */
export interface SimEventIterator<E extends SimEvent = SimEvent> extends AsyncIterableIterator<E> {
  /**
   * Resolves with the fleet as it was when the server subscribed this stream: from then on no
   * event is missed. Await it before acting when the event you wait for follows the action.
   */
  readonly ready: Promise<SimStation[]>;
  /** Closes the stream; a `next()` waiting ends with `done`. Also what `break` does. */
  close(): void;
}

/** How many unread events an iterator holds at most, unless told otherwise. */
export const DEFAULT_MAX_BUFFERED_EVENTS = 10_000;

/** Opens `subscribe` and yields the events `filter` lets through. */
export function iterateEvents<T extends SimEventType>(
  subscribe: (handlers: EventStreamHandlers) => EventSubscription,
  filter: EventFilter<T> = {},
  onEnd?: () => void,
): SimEventIterator<FilteredEvent<T>> {
  const maxBuffered = filter.maxBuffered ?? DEFAULT_MAX_BUFFERED_EVENTS;
  if (!(Number.isInteger(maxBuffered) && maxBuffered >= 1)) throw new TypeError(`maxBuffered must be a whole number of at least 1, not ${String(maxBuffered)}`);
  const accept = acceptor(filter);
  const buffer = new EventBuffer<FilteredEvent<T>>();
  let snapshotSeen = false;
  let subscription: EventSubscription | undefined;
  let resolveReady!: (stations: SimStation[]) => void;
  let rejectReady!: (error: Error) => void;
  const ready = new Promise<SimStation[]>((resolve, reject) => {
    resolveReady = resolve;
    rejectReady = reject;
  });
  // Nobody need await `ready`: a stream that fails before its snapshot must not be an unhandled rejection.
  ready.catch(() => {});

  const end = (error?: Error): void => {
    if (buffer.ended) return;
    buffer.finish(error);
    rejectReady(error ?? new Error('the event stream was closed before its snapshot came'));
    subscription?.close();
    onEnd?.();
    buffer.release(error);
  };

  subscription = subscribe({
    onEvent: (event) => {
      if (buffer.ended) return;
      if (event.type === 'snapshot' && !snapshotSeen) {
        snapshotSeen = true;
        resolveReady(event.stations);
      }
      if (!accept(event)) return;
      if (!buffer.offer(event as FilteredEvent<T>, maxBuffered)) {
        end(new Error(`events(): more than ${maxBuffered} events waited unread, so the stream was closed; read faster, filter by type, token or lock, or raise maxBuffered`));
      }
    },
    onState: (state) => {
      if (state.phase === 'waiting') end(new Error(`the event stream ended: ${state.reason}; events after that may be missed, so the iteration ends`));
      else if (state.phase === 'refused') end(new Error(`the event stream was refused: ${state.reason}`));
    },
  });
  // A URL the WebSocket cannot use is refused before subscribe returns.
  if (buffer.ended) subscription.close();

  const iterator: SimEventIterator<FilteredEvent<T>> = {
    ready,
    close: () => end(),
    next: () => buffer.next(),
    return: () => {
      end();
      return Promise.resolve({ done: true, value: undefined });
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };
  return iterator;
}

function acceptor(filter: EventFilter<SimEventType>): (event: SimEvent) => boolean {
  const types = filter.type === undefined ? undefined : new Set<string>(typeof filter.type === 'string' ? [filter.type] : filter.type);
  return (event) => {
    if (types ? !types.has(event.type) : event.type === 'snapshot') return false;
    if (filter.token !== undefined && (event as { token?: unknown }).token !== filter.token) return false;
    if (filter.lockId !== undefined && (event as { lockId?: unknown }).lockId !== filter.lockId) return false;
    return true;
  };
}

/** The events read and not yet taken, the one `next()` waiting for them, and how the iteration ended. */
class EventBuffer<V> {
  readonly #queue: V[] = [];
  #waiting: { resolve: (result: IteratorResult<V>) => void; reject: (error: Error) => void } | undefined;
  /** The error that ended the iteration, until a `next()` has been given it. */
  #failure: Error | undefined;
  #finished = false;

  get ended(): boolean {
    return this.#finished || this.#failure !== undefined;
  }

  /**
   * Hands `value` to the waiting `next()`, or holds it. False when `max` events wait unread
   * already: then the ones held are dropped too, as a consumer that read on would see a gap.
   */
  offer(value: V, max: number): boolean {
    if (this.#waiting) {
      const pending = this.#waiting;
      this.#waiting = undefined;
      pending.resolve({ done: false, value });
    } else if (this.#queue.length >= max) {
      this.#queue.length = 0;
      return false;
    } else this.#queue.push(value);
    return true;
  }

  /** Ends: with `error`, the next `next()` rejects with it; without, the events held are dropped. */
  finish(error: Error | undefined): void {
    if (error) this.#failure = error;
    else {
      this.#finished = true;
      this.#queue.length = 0;
    }
  }

  /** After `finish`: the `next()` waiting, if any, rejects with `error` or ends done. */
  release(error: Error | undefined): void {
    const pending = this.#waiting;
    this.#waiting = undefined;
    if (!pending) return;
    if (error) {
      this.#failure = undefined;
      this.#finished = true;
      pending.reject(error);
    } else pending.resolve({ done: true, value: undefined });
  }

  next(): Promise<IteratorResult<V>> {
    const value = this.#queue.shift();
    if (value !== undefined) return Promise.resolve({ done: false, value });
    if (this.#failure) {
      const error = this.#failure;
      this.#failure = undefined;
      this.#finished = true;
      return Promise.reject(error);
    }
    if (this.#finished) return Promise.resolve({ done: true, value: undefined });
    if (this.#waiting) return Promise.reject(new Error('events(): next() called again before the last one resolved'));
    return new Promise((resolve, reject) => {
      this.#waiting = { resolve, reject };
    });
  }
}
