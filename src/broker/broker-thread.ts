/**
 * The embedded broker on a thread of its own. Under load aedes is about a third of the CPU of an
 * unlock (bench/README.md); on its own thread it runs beside the `/v1` API and the stations
 * instead of taking turns with them, on a second core.
 *
 * Nothing about the stations' sessions changes: each in-memory connection (a Duplex stream handed
 * to `handle`, or a lean client's `attach` without a stream on this side) becomes a Duplex stream
 * for `aedes.handle` on the broker's side, so every station keeps its own MQTT session, last will
 * and retained state. In between, the bytes of all connections travel in one batch per turn of the
 * event loop (thread-protocol.ts). TCP clients connect to the broker's thread directly.
 *
 * Nothing holds a sender back across the boundary (the broker's writes and the simulator's
 * sends complete at once), as with the in-thread broker's in-memory streams: both sides keep up
 * with each other at the bench's loads, and a flood would show as memory, not as lost messages.
 */
import type { Worker } from 'node:worker_threads';
import type { Duplex } from 'node:stream';
import type { LinkEnd, LinkPeer } from '../mqtt/broker-link.js';
import type { EmbeddedBrokerOptions, RefusalListener, StartedBroker } from './embedded-broker.js';
import type { StationMisdeed, StationWatchSpec } from './station-watch.js';
import type { RefusalCounts } from './refusal-log.js';
import { BatchWriter, DESTROY, END, OPEN, readBatch, type Batch, type BrokerCall, type BrokerThreadData, type FromBroker, type ToBroker } from './thread-protocol.js';
import { SimError, type ErrorCode, ERRORS } from '../errors.js';
import { startModuleWorker } from '../shared/worker-thread.js';
import { callSafely } from '../shared/throw-later.js';

export interface BrokerThreadOptions extends EmbeddedBrokerOptions {
  /** Told when the broker's thread fails; its connections are closed, as if the broker went away. */
  onError?: (error: Error) => void;
}

export async function startBrokerThread(options: BrokerThreadOptions = {}): Promise<StartedBroker> {
  const host = options.host ?? '127.0.0.1';
  const data: BrokerThreadData = {
    port: options.port ?? 1883,
    host,
    fallbackToFreePort: options.fallbackToFreePort ?? false,
    ...(options.security ? { security: options.security } : {}),
    ...(options.maxPacketBytes === undefined ? {} : { maxPacketBytes: options.maxPacketBytes }),
    ...(options.certs === undefined ? {} : { certs: options.certs }),
    ...(options.tlsPort === undefined ? {} : { tlsPort: options.tlsPort }),
    ...(options.wsPort === undefined ? {} : { wsPort: options.wsPort }),
  };
  const worker = startModuleWorker(import.meta.url, 'broker-worker', data);
  const link = new ThreadLink(worker, options.onError);
  const ready = await link.ready;
  return {
    url: ready.url,
    host,
    port: ready.port,
    fellBack: ready.fellBack,
    ...(ready.tlsUrl ? { tlsUrl: ready.tlsUrl } : {}),
    ...(ready.wsUrl ? { wsUrl: ready.wsUrl } : {}),
    auth: ready.auth,
    refusedCounts: () => ({ ...link.refusedCounts }),
    onRefused: (listener) => link.onRefused(listener),
    handle: (stream) => link.open(stream),
    attach: (peer) => link.attach(peer),
    tap: (filters, listener) => link.tap(filters, listener),
    watchStations: (spec, listener) => link.watchStations(spec, listener),
    retainedCount: () => link.call({ method: 'retainedCount' }) as Promise<number>,
    threadHeapUsed: ({ collect = false } = {}) => link.call({ method: 'heapUsed', collect }) as Promise<number>,
    sync: async () => {
      await link.call({ method: 'sync' });
    },
    stop: () => link.stop(),
  };
}

type TapListener = (topic: string, payload: Buffer) => void;

/** How long a stopping broker thread may take to end before it is terminated (closing 100,000 connections takes seconds). */
const STOP_TIMEOUT_MS = 10_000;

/** What the broker's records do to one connection's client side. */
interface ClientSide {
  receive(bytes: Buffer): void;
  /** The broker ended its side. */
  ended(): void;
  /** The broker dropped the connection, or (with a reason) can no longer be reached. */
  destroyed(reason?: Error): void;
}
type Ready = { url: string; port: number; fellBack: boolean; auth: boolean; tlsUrl?: string; wsUrl?: string };

/**
 * This side of the link: the connections handed to `handle` and `attach`, the taps, and calls
 * waiting for replies. Exported for tests, which run it against a stand-in worker.
 */
export class ThreadLink {
  readonly ready: Promise<Ready>;
  readonly #worker: Worker;
  readonly #onError: ((error: Error) => void) | undefined;
  /** The client side of every open connection: what to do with the broker's bytes and its closing. */
  readonly #clients = new Map<number, ClientSide>();
  readonly #taps = new Map<number, TapListener>();
  readonly #watches = new Map<number, (misdeed: StationMisdeed) => void>();
  readonly #refusalListeners = new Set<RefusalListener>();
  /** Refusals counted on the broker's thread, as of its last report. */
  refusedCounts: RefusalCounts = { connect: 0, publish: 0, subscribe: 0, 'packet-too-large': 0 };
  readonly #calls = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  readonly #out = new BatchWriter();
  #flushScheduled = false;
  #nextId = 0;
  /** Why the broker can no longer be reached, once it cannot. */
  #gone: Error | undefined;
  /** Resolves when the thread has ended, however it ended. */
  readonly #exited: Promise<void>;
  #stopping: Promise<void> | undefined;

  constructor(worker: Worker, onError: ((error: Error) => void) | undefined) {
    this.#worker = worker;
    this.#onError = onError;
    let settleReady: { resolve: (ready: Ready) => void; reject: (error: Error) => void };
    this.ready = new Promise((resolve, reject) => {
      settleReady = { resolve, reject };
    });
    worker.on('message', (message: FromBroker) => {
      switch (message.type) {
        case 'batch':
          this.#receive(message.batch);
          return;
        case 'reply': {
          const call = this.#calls.get(message.id);
          this.#calls.delete(message.id);
          if (message.error) call?.reject(toSimError(message.error));
          else call?.resolve(message.value);
          return;
        }
        case 'ready':
          settleReady.resolve(message);
          return;
        case 'refused':
          this.refusedCounts = message.counts;
          for (const listener of this.#refusalListeners) callSafely(() => listener(message.refusal, message.counts));
          return;
        case 'failed':
          settleReady.reject(toSimError(message));
          return;
        case 'misdeed': {
          const listener = this.#watches.get(message.watchId);
          const { payload } = message.misdeed;
          if (listener) callSafely(() => listener({ ...message.misdeed, payload: Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength) }));
          return;
        }
      }
    });
    let started = false;
    void this.ready.then(
      () => (started = true),
      () => undefined,
    );
    worker.on('error', (error) => {
      settleReady.reject(error);
      this.#lose(error);
      // A thread that never started is reported by the rejection alone.
      if (started && !this.#stopping) this.#onError?.(error);
    });
    this.#exited = new Promise((resolve) => {
      worker.once('exit', (code) => {
        const reason = new Error(code === 0 ? 'the broker thread stopped' : `the broker thread exited with code ${code}`);
        settleReady.reject(reason);
        if (!this.#gone && started && code !== 0 && !this.#stopping) this.#onError?.(reason);
        this.#lose(reason);
        resolve();
      });
    });
  }

  /** A connection from a Duplex stream (mqtt.js over an in-memory pair, for one). */
  open(stream: Duplex): void {
    stream.on('error', () => undefined); // 'close' follows; the stream's owner heard the error
    if (this.#gone) {
      stream.destroy(this.#gone);
      return;
    }
    const id = this.#openId({ receive: (bytes) => stream.write(bytes), ended: () => stream.end(), destroyed: () => stream.destroy() });
    stream.on('data', (chunk: Buffer) => this.#send(id, chunk));
    // The stream stays until the broker ends its side too, which closes it (its owner waits for that).
    stream.on('end', () => this.#end(id, { forget: false }));
    stream.on('close', () => this.#drop(id));
  }

  /** A connection without a stream on this side (the lean client's `DirectLink`). */
  attach(peer: LinkPeer): LinkEnd {
    if (this.#gone) {
      const reason = this.#gone;
      queueMicrotask(() => peer.closed(reason));
      return { send: () => undefined, end: () => undefined, destroy: () => undefined };
    }
    const id = this.#openId({
      receive: (bytes) => peer.receive(bytes),
      // The broker is done with it: close this side, and let the broker's side go too.
      ended: () => {
        this.#drop(id);
        peer.closed();
      },
      destroyed: (reason) => peer.closed(reason),
    });
    return {
      send: (packet) => this.#send(id, packet),
      // The lean client closes its side at once and needs nothing back.
      end: () => this.#end(id, { forget: true }),
      destroy: () => this.#drop(id),
    };
  }

  #openId(side: ClientSide): number {
    const id = (this.#nextId = (this.#nextId + 1) | 0);
    this.#clients.set(id, side);
    this.#out.mark(OPEN, id);
    this.#schedule();
    return id;
  }

  #send(id: number, bytes: Buffer): void {
    if (!this.#clients.has(id)) return;
    this.#out.data(id, bytes);
    this.#schedule();
  }

  /**
   * This side is done sending (after DISCONNECT): the broker reads to the end and closes its side
   * itself, as it would a socket, so a DISCONNECT that aedes has not read yet is not cut off and
   * taken for a lost connection (which fires the last will).
   */
  #end(id: number, { forget }: { forget: boolean }): void {
    if (!this.#clients.has(id)) return;
    if (forget) this.#clients.delete(id);
    this.#out.mark(END, id);
    this.#schedule();
  }

  /** This side dropped the connection: the broker's side is destroyed too. */
  #drop(id: number): void {
    if (!this.#clients.delete(id)) return;
    this.#out.mark(DESTROY, id);
    this.#schedule();
  }

  onRefused(listener: RefusalListener): () => void {
    this.#refusalListeners.add(listener);
    return () => this.#refusalListeners.delete(listener);
  }

  /** `StartedBroker.tap`: every message on `filters`, routed on the broker's thread, to `listener`. */
  tap(filters: string[], listener: TapListener): Promise<() => Promise<void>> {
    return this.#listen(this.#taps, listener, (tapId) => ({ method: 'tap', tapId, filters }), (tapId) => ({ method: 'untap', tapId }));
  }

  /** `StartedBroker.watchStations`: the misdeeds the broker's thread sees on the station topics, to `listener`. */
  watchStations(spec: StationWatchSpec, listener: (misdeed: StationMisdeed) => void): Promise<() => Promise<void>> {
    return this.#listen(this.#watches, listener, (watchId) => ({ method: 'watchStations', watchId, spec }), (watchId) => ({ method: 'unwatchStations', watchId }));
  }

  /**
   * Registers `listener` in `registry` under a new id, asks the broker's thread to `start` passing it
   * messages, and returns what asks it to `stop` and forgets the listener.
   */
  async #listen<L>(registry: Map<number, L>, listener: L, start: (id: number) => BrokerCall, stop: (id: number) => BrokerCall): Promise<() => Promise<void>> {
    const id = (this.#nextId = (this.#nextId + 1) | 0);
    registry.set(id, listener);
    try {
      await this.call(start(id));
    } catch (error) {
      registry.delete(id);
      throw error;
    }
    return async () => {
      try {
        await this.call(stop(id));
      } catch (error) {
        // A tap or a watch dies with the broker's thread: once that is gone there is nothing to remove.
        if (!this.gone) throw error;
      } finally {
        registry.delete(id);
      }
    };
  }

  /** Sends what is batched, then the call, so the broker sees them in that order. */
  call(call: BrokerCall): Promise<unknown> {
    if (this.#gone) return Promise.reject(this.#gone);
    this.#flush();
    const id = (this.#nextId = (this.#nextId + 1) | 0);
    return new Promise((resolve, reject) => {
      this.#calls.set(id, { resolve, reject });
      this.#post({ type: 'call', id, call });
    });
  }

  /** The broker can no longer be reached (stopped, or its thread ended). */
  get gone(): boolean {
    return this.#gone !== undefined;
  }

  /**
   * Stops the broker, then lets its thread end on its own (so it finishes what it writes, a CPU
   * profile say). A thread that does not end within 10 s is terminated; either way `stop` resolves,
   * once, however often it is called, and a thread that ends while stopping is not a failure.
   */
  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      const timer = setTimeout(() => void this.#worker.terminate(), STOP_TIMEOUT_MS);
      try {
        if (!this.#gone) await this.call({ method: 'stop' }).catch(() => undefined);
      } finally {
        this.#lose(new Error('the broker was stopped'));
        await this.#exited;
        clearTimeout(timer);
      }
    })();
    return this.#stopping;
  }

  #post(message: ToBroker, transfer: ArrayBuffer[] = []): void {
    this.#worker.postMessage(message, transfer);
  }

  #schedule(): void {
    if (this.#flushScheduled) return;
    this.#flushScheduled = true;
    setImmediate(() => this.#flush());
  }

  #flush(): void {
    this.#flushScheduled = false;
    if (this.#out.empty) return;
    const { batch, transfer } = this.#out.take();
    if (this.#gone) return; // nobody to read it
    this.#post({ type: 'batch', batch }, transfer);
  }

  #receive(batch: Batch): void {
    readBatch(batch, {
      data: (id, bytes) => this.#clients.get(id)?.receive(bytes),
      end: (id) => this.#clients.get(id)?.ended(),
      destroy: (id) => {
        const side = this.#clients.get(id);
        if (!side) return;
        this.#clients.delete(id);
        side.destroyed();
      },
      // A listener that throws must not cost the rest of the batch (other connections' bytes).
      tap: (tapId, topic, payload) => {
        const listener = this.#taps.get(tapId);
        if (listener) callSafely(() => listener(topic, payload));
      },
    });
  }

  /** The broker is out of reach: every connection closes, every waiting call fails. */
  #lose(reason: Error): void {
    if (this.#gone) return;
    this.#gone = reason;
    const sides = [...this.#clients.values()];
    this.#clients.clear();
    for (const side of sides) side.destroyed(reason);
    const calls = [...this.#calls.values()];
    this.#calls.clear();
    for (const call of calls) call.reject(reason);
  }
}

function toSimError(error: { code?: string; message: string }): Error {
  return error.code && error.code in ERRORS ? new SimError(error.code as ErrorCode, error.message) : new Error(error.message);
}
