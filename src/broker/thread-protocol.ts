/**
 * What crosses between the simulator's thread and the broker's thread (broker-thread.ts): the
 * bytes of every in-memory MQTT connection, their opening and closing, and the messages of broker
 * taps. Posting one message per packet would cost more than the packet itself, so everything
 * produced during one turn of the event loop goes out as one batch: a table of records (four
 * int32 each: kind, connection or tap id, and up to two byte lengths) and one buffer holding the
 * bytes of all records in order. Both are transferred, not copied.
 */

import type { BrokerSecurity } from './broker-security.js';
import type { BrokerRefusal, RefusalCounts } from './refusal-log.js';
import type { StationMisdeed, StationWatchSpec } from './station-watch.js';

/** A connection opened (towards the broker only). */
export const OPEN = 1;
/** Bytes of a connection: `a` bytes. */
export const DATA = 2;
/** The sender ended its side of a connection (after its last bytes). */
export const END = 3;
/** The sender dropped a connection; the receiver forgets it. */
export const DESTROY = 4;
/** A message routed to a broker tap (towards the simulator only): a topic of `a` bytes, a payload of `b`. */
export const TAP = 5;

/** One batch as posted: `ops` holds 4 int32 per record, `data` their bytes back to back. */
export interface Batch {
  ops: Int32Array;
  data: Uint8Array;
}

const FIELDS = 4;

/** Collects records until `take()`; the caller decides when a batch goes out. */
export class BatchWriter {
  #ops: number[] = [];
  #chunks: Uint8Array[] = [];
  #bytes = 0;

  get empty(): boolean {
    return this.#ops.length === 0;
  }

  /** A record without bytes (OPEN, END, DESTROY). */
  mark(kind: typeof OPEN | typeof END | typeof DESTROY, id: number): void {
    this.#ops.push(kind, id, 0, 0);
  }

  /**
   * Bytes of a connection. Bytes that follow bytes of the same connection join their record: aedes
   * writes a packet in several pieces (header, topic, payload), and the reader is better off
   * with whole packets.
   */
  data(id: number, chunk: Uint8Array): void {
    const last = this.#ops.length - FIELDS;
    if (last >= 0 && this.#ops[last] === DATA && this.#ops[last + 1] === id) this.#ops[last + 2] = this.#ops[last + 2]! + chunk.length;
    else this.#ops.push(DATA, id, chunk.length, 0);
    this.#chunks.push(chunk);
    this.#bytes += chunk.length;
  }

  tap(tapId: number, topic: string, payload: Uint8Array): void {
    const topicBytes = Buffer.from(topic);
    this.#ops.push(TAP, tapId, topicBytes.length, payload.length);
    this.#chunks.push(topicBytes, payload);
    this.#bytes += topicBytes.length + payload.length;
  }

  /**
   * The batch so far, and a fresh start. The bytes are copied into a buffer of their own, never a
   * slice of Node's shared pool: transferring a pooled buffer would detach every other slice of it.
   */
  take(): { batch: Batch; transfer: ArrayBuffer[] } {
    const ops = Int32Array.from(this.#ops);
    const data = new Uint8Array(this.#bytes);
    let offset = 0;
    for (const chunk of this.#chunks) {
      data.set(chunk, offset);
      offset += chunk.length;
    }
    this.#ops = [];
    this.#chunks = [];
    this.#bytes = 0;
    return { batch: { ops, data }, transfer: [ops.buffer, data.buffer] };
  }
}

/** What a reader does with each record of a batch; the Buffers are views into the batch's bytes. */
export interface BatchHandlers {
  open?(id: number): void;
  data(id: number, bytes: Buffer): void;
  end(id: number): void;
  destroy(id: number): void;
  tap?(tapId: number, topic: string, payload: Buffer): void;
}

/** Replays a batch's records in order. */
export function readBatch(batch: Batch, handlers: BatchHandlers): void {
  const { ops } = batch;
  const bytes = Buffer.from(batch.data.buffer, batch.data.byteOffset, batch.data.byteLength);
  let offset = 0;
  for (let index = 0; index < ops.length; index += FIELDS) {
    const kind = ops[index]!;
    const id = ops[index + 1]!;
    const a = ops[index + 2]!;
    switch (kind) {
      case OPEN:
        handlers.open?.(id);
        break;
      case DATA:
        handlers.data(id, bytes.subarray(offset, offset + a));
        offset += a;
        break;
      case END:
        handlers.end(id);
        break;
      case DESTROY:
        handlers.destroy(id);
        break;
      case TAP: {
        const b = ops[index + 3]!;
        const topic = bytes.toString('utf8', offset, offset + a);
        handlers.tap?.(id, topic, bytes.subarray(offset + a, offset + a + b));
        offset += a + b;
        break;
      }
      default:
        throw new Error(`unknown batch record kind ${kind}`);
    }
  }
}

/** What the broker's thread is started with. */
export interface BrokerThreadData {
  port: number;
  host: string;
  fallbackToFreePort: boolean;
  security?: BrokerSecurity;
  maxPacketBytes?: number;
  certs?: string;
  tlsPort?: number;
  wsPort?: number;
}

/** Requests of the simulator's thread, each answered by a `reply` with the same id. */
export type BrokerCall =
  | { method: 'tap'; tapId: number; filters: string[] }
  | { method: 'untap'; tapId: number }
  /** Starts a station watch (station-watch.ts): its spec crosses once, and only its misdeeds come back (`misdeed`). */
  | { method: 'watchStations'; watchId: number; spec: StationWatchSpec }
  | { method: 'unwatchStations'; watchId: number }
  | { method: 'retainedCount' }
  | { method: 'sync' }
  /** The broker thread's V8 heap in use, bytes; after a full GC first when `collect` (and `gc` is exposed). */
  | { method: 'heapUsed'; collect: boolean }
  | { method: 'stop' };

export type ToBroker = { type: 'batch'; batch: Batch } | { type: 'call'; id: number; call: BrokerCall };

export type FromBroker =
  | { type: 'ready'; url: string; port: number; fellBack: boolean; auth: boolean; tlsUrl?: string; wsUrl?: string }
  /** A refusal (at most 20 a second are posted), with every refusal counted so far. */
  | { type: 'refused'; refusal: BrokerRefusal; counts: RefusalCounts }
  | { type: 'failed'; code: string; message: string }
  /** A misdeed a station watch saw; its payload arrives as a Uint8Array (structured clone). */
  | { type: 'misdeed'; watchId: number; misdeed: Omit<StationMisdeed, 'payload'> & { payload: Uint8Array } }
  | { type: 'batch'; batch: Batch }
  | { type: 'reply'; id: number; value?: unknown; error?: { code?: string; message: string } };
