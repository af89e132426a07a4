/**
 * The broker's thread (started by broker-thread.ts): the embedded broker, with every in-memory
 * connection of the simulator's thread turned back into a Duplex stream for `aedes.handle`. Bytes
 * aedes writes go out in one batch per turn of the event loop (thread-protocol.ts).
 */
import { Duplex } from 'node:stream';
import { endForReader, readerBehind } from '../shared/end-for-reader.js';
import { parentPort, workerData } from 'node:worker_threads';
import { getHeapStatistics } from 'node:v8';
import { startEmbeddedBroker, type InThreadBroker } from './embedded-broker.js';
import { BatchWriter, DESTROY, END, readBatch, type BrokerCall, type BrokerThreadData, type FromBroker, type ToBroker } from './thread-protocol.js';

const port = parentPort!;
const out = new BatchWriter();
let flushScheduled = false;

function post(message: FromBroker, transfer: ArrayBuffer[] = []): void {
  port.postMessage(message, transfer);
}

function flush(): void {
  flushScheduled = false;
  if (out.empty) return;
  const { batch, transfer } = out.take();
  post({ type: 'batch', batch }, transfer);
}

/** Everything produced in this turn goes out together, after aedes has finished with the turn's input. */
function scheduleFlush(): void {
  if (flushScheduled) return;
  flushScheduled = true;
  setImmediate(flush);
}

/** One in-memory connection as aedes sees it. */
class ThreadConnection extends Duplex {
  readonly id: number;
  /** The simulator's side closed first: nothing to tell it. */
  peerClosed = false;

  constructor(id: number) {
    super({ allowHalfOpen: false });
    this.id = id;
  }

  override _read(): void {}

  /**
   * The simulator's side dropped the connection. As with a TCP peer that closes after its data,
   * what it sent before is still read (a last PUBLISH, a CONNECT): aedes reads to the end, takes
   * an end without DISCONNECT for a lost connection (MQTT 3.1.1 §4.6; the last will fires) and
   * closes its side, and nothing goes back. At most DROP_GRACE_MS (end-for-reader.ts) later it goes regardless.
   */
  peerDropped(): void {
    this.peerClosed = true;
    if (readerBehind(this)) endForReader(this, () => this.destroy());
    else this.destroy();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    if (!this.peerClosed) {
      out.data(this.id, chunk);
      scheduleFlush();
    }
    callback();
  }

  override _writev(chunks: { chunk: Buffer }[], callback: (error?: Error | null) => void): void {
    if (!this.peerClosed) {
      for (const { chunk } of chunks) out.data(this.id, chunk);
      scheduleFlush();
    }
    callback();
  }

  override _final(callback: (error?: Error | null) => void): void {
    if (!this.peerClosed) {
      out.mark(END, this.id);
      scheduleFlush();
    }
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    connections.delete(this.id);
    if (!this.peerClosed) {
      out.mark(DESTROY, this.id);
      scheduleFlush();
    }
    callback(error);
  }
}

const connections = new Map<number, ThreadConnection>();
const untaps = new Map<number, () => Promise<void>>();
const unwatches = new Map<number, () => Promise<void>>();
const broker = await startEmbeddedBroker(workerData as BrokerThreadData).catch((error: Error & { code?: string }) => {
  // A port that is taken, say: the simulator's thread reports it, and this thread just ends.
  post({ type: 'failed', code: error.code ?? 'INTERNAL', message: error.message });
  port.close();
  return undefined;
});
if (broker) serve(broker);

function serve(broker: InThreadBroker): void {
  port.on('message', (message: ToBroker) => {
    if (message.type === 'batch') {
      readBatch(message.batch, {
        open: (id) => {
          const connection = new ThreadConnection(id);
          connections.set(id, connection);
          broker.handle(connection);
        },
        // A copy: aedes keeps payloads (retained messages, wills) as views of what it read, and a
        // view of the batch would keep the whole batch alive.
        data: (id, bytes) => connections.get(id)?.push(Buffer.from(bytes)),
        end: (id) => connections.get(id)?.push(null),
        destroy: (id) => connections.get(id)?.peerDropped(),
      });
      return;
    }
    answer(broker, message.id, message.call).then(
      (value) => {
        flush();
        post({ type: 'reply', id: message.id, value });
        if (message.call.method === 'stop') port.close();
      },
      (error: Error & { code?: string }) => {
        flush();
        post({ type: 'reply', id: message.id, error: { message: error.message, ...(error.code ? { code: error.code } : {}) } });
      },
    );
  });
  broker.onRefused((refusal, counts) => post({ type: 'refused', refusal, counts }));
  post({
    type: 'ready',
    url: broker.url,
    port: broker.port,
    fellBack: broker.fellBack,
    auth: broker.auth,
    ...(broker.tlsUrl ? { tlsUrl: broker.tlsUrl } : {}),
    ...(broker.wsUrl ? { wsUrl: broker.wsUrl } : {}),
  });
}

/** Stops and forgets what `id` started (a tap, a station watch); nothing when it is not there. */
async function release(registry: Map<number, () => Promise<void>>, id: number): Promise<undefined> {
  const stop = registry.get(id);
  registry.delete(id);
  await stop?.();
  return undefined;
}

async function answer(broker: InThreadBroker, id: number, call: BrokerCall): Promise<unknown> {
  switch (call.method) {
    case 'tap': {
      const untap = await broker.tap(call.filters, (topic, payload) => {
        out.tap(call.tapId, topic, payload);
        scheduleFlush();
      });
      untaps.set(call.tapId, untap);
      return undefined;
    }
    case 'untap':
      return release(untaps, call.tapId);
    case 'watchStations': {
      // Classified here, on the broker's thread: only a misdeed is posted, at once (they are rare,
      // and a flood of them is the misdeed's cost, not every unlock's).
      const { watchId } = call;
      const unwatch = await broker.watchStations(call.spec, (misdeed) =>
        // A copy of the payload alone: a view would clone the whole buffer it is a view of.
        post({ type: 'misdeed', watchId, misdeed: { ...misdeed, payload: new Uint8Array(misdeed.payload) } }),
      );
      unwatches.set(watchId, unwatch);
      return undefined;
    }
    case 'unwatchStations':
      return release(unwatches, call.watchId);
    case 'retainedCount':
      return broker.retainedCount();
    case 'sync':
      // Two turns: aedes answers some packets a turn after it read them (a PUBACK's callback).
      await broker.sync();
      await broker.sync();
      return undefined;
    case 'heapUsed': {
      // `gc` exists when the process runs with --expose-gc (a worker inherits its options).
      const gc = (globalThis as { gc?: () => void }).gc;
      if (call.collect && gc) {
        gc();
        gc();
      }
      return getHeapStatistics().used_heap_size;
    }
    case 'stop':
      await broker.stop();
      // Whatever aedes did not close (a connection still short of CONNECT) closes too.
      for (const connection of [...connections.values()]) connection.destroy();
      return undefined;
    default:
      throw new Error(`unknown call ${id}`);
  }
}

