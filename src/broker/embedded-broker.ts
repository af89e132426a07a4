/**
 * The embedded MQTT broker: aedes behind a TCP server with TCP_NODELAY on every accepted socket,
 * plus `handle(stream)` so in-process stations connect without a socket each. This runs it on the
 * calling thread; `startBrokerThread` (broker-thread.ts) runs this same broker on a thread of its
 * own, which is what the simulator does by default.
 */
import net from 'node:net';
import type { Duplex } from 'node:stream';
import { Aedes } from 'aedes';
import { callSafely } from '../shared/throw-later.js';
import { listen } from '../shared/listen.js';
import { indexedMemoryPersistence } from './retained-index.js';
import type { BrokerTap, StreamAcceptor } from '../mqtt/broker-link.js';

export interface EmbeddedBrokerOptions {
  /** TCP port; 0 picks a free one. @default 1883 */
  port?: number;
  /** @default "127.0.0.1" */
  host?: string;
  /** Take a free port when `port` is taken (the CLI does this for its default port only). @default false */
  fallbackToFreePort?: boolean;
}

/** A running broker, on this thread or its own. `stop()` disconnects every client and closes the server. */
export interface StartedBroker extends StreamAcceptor {
  readonly url: string;
  readonly host: string;
  readonly port: number;
  /** True when the requested port was taken and another one was chosen. */
  readonly fellBack: boolean;
  /** Listens to routed messages inside the broker (see `BrokerTap`). */
  readonly tap: BrokerTap;
  /** How many retained messages the broker holds. */
  retainedCount(): Promise<number>;
  /**
   * Resolves once what was handed to the broker so far has been processed and its answers handed
   * back (a round trip to the broker's thread; on this thread, a turn of the event loop).
   */
  sync(): Promise<void>;
  /**
   * The V8 heap in use on the broker's own thread, in bytes, when it has one (broker-thread.ts);
   * with `collect`, after a full GC there when the process runs with `--expose-gc`. For memory
   * figures: `process.memoryUsage().heapUsed` counts only the calling thread's heap.
   */
  threadHeapUsed?(options?: { collect?: boolean }): Promise<number>;
  stop(): Promise<void>;
}

/** The broker on the calling thread, with aedes itself in reach (for hooks such as `authenticate`). */
export interface InThreadBroker extends StartedBroker {
  readonly aedes: Aedes;
}

export async function startEmbeddedBroker(options: EmbeddedBrokerOptions = {}): Promise<InThreadBroker> {
  const host = options.host ?? '127.0.0.1';
  const persistence = indexedMemoryPersistence();
  const aedes = await createAedes(persistence);
  const server = net.createServer({ noDelay: true }, (socket) => aedes.handle(socket));
  let bound: { port: number; fellBack: boolean };
  try {
    bound = await listen(server, { port: options.port ?? 1883, host, fallbackToFreePort: options.fallbackToFreePort ?? false, label: 'MQTT' });
  } catch (error) {
    await new Promise<void>((resolve) => aedes.close(() => resolve()));
    throw error;
  }
  const sockets = new Set<net.Socket>();
  /** In-memory connections: `aedes.close()` closes only clients past CONNECT, `stop` closes the rest. */
  const streams = new Set<Duplex>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  const urlHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `mqtt://${urlHost}:${bound.port}`,
    host,
    port: bound.port,
    fellBack: bound.fellBack,
    aedes,
    handle: (stream: Duplex) => {
      streams.add(stream);
      stream.once('close', () => streams.delete(stream));
      aedes.handle(stream);
    },
    tap: (filters, listener) => tap(aedes, filters, listener),
    retainedCount: async () => persistence.retainedCount,
    sync: () => new Promise((resolve) => setImmediate(resolve)),
    stop: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      await settle(aedes);
      await new Promise<void>((resolve) => aedes.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      for (const stream of streams) stream.destroy();
      await closed;
    },
  };
}

/**
 * aedes over `persistence`, answering as MQTT 3.1.1 says where aedes alone would not.
 * [MQTT-3.1.3-8]: a zero-byte client id with CleanSession 0 is answered with CONNACK return code
 * 2 (identifier rejected) and the connection closed, as Mosquitto does; aedes would make up an id
 * for a session nobody can resume. preConnect sees the CONNECT as sent, and authenticate is where
 * aedes takes a return code (an error's `returnCode`) before it answers and closes.
 */
function createAedes(persistence: ReturnType<typeof indexedMemoryPersistence>): Promise<Aedes> {
  const emptyIdPersistent = new WeakSet<object>();
  return Aedes.createBroker({
    persistence,
    preConnect: (client, packet, callback) => {
      if (packet.clientId === '' && !packet.clean) emptyIdPersistent.add(client);
      callback(null, true);
    },
    authenticate: (client, _username, _password, callback) => {
      if (!emptyIdPersistent.has(client)) return callback(null, true);
      callback(Object.assign(new Error('identifier rejected'), { returnCode: 2 as const }), false);
    },
  });
}

/** `StartedBroker.tap` on `aedes`: every message on `filters` to `listener`, until the returned function is called. */
async function tap(aedes: Aedes, filters: string[], listener: (topic: string, payload: Buffer) => void): Promise<() => Promise<void>> {
  // One aedes subscription per filter: a message matching two of them comes twice, as the same
  // packet object, and is handed over once.
  const seen = filters.length > 1 ? new WeakSet<object>() : undefined;
  const deliver = (packet: { topic: string; payload: Buffer | string }, done: () => void): void => {
    if (seen?.has(packet)) {
      done();
      return;
    }
    seen?.add(packet);
    callSafely(() => listener(packet.topic, Buffer.isBuffer(packet.payload) ? packet.payload : Buffer.from(packet.payload)));
    done();
  };
  const each = (method: 'subscribe' | 'unsubscribe') =>
    Promise.all(filters.map((filter) => new Promise<void>((resolve) => aedes[method](filter, deliver, () => resolve()))));
  await each('subscribe');
  return async () => {
    await each('unsubscribe');
  };
}

/**
 * Lets messages already accepted reach their subscribers before aedes drops every connection: a
 * station's last `offline` status is PUBACKed before aedes has delivered it to subscribers on other
 * sockets, and under load that can take tens of milliseconds. Waits until the broker has been
 * quiet (no publish delivered, no PUBACK received) for 50 ms, at most one second.
 */
async function settle(aedes: Aedes): Promise<void> {
  let lastActivity = Date.now();
  const touch = (): void => {
    lastActivity = Date.now();
  };
  aedes.on('publish', touch);
  aedes.on('ack', touch);
  const deadline = Date.now() + 1000;
  try {
    while (Date.now() - lastActivity < 50 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  } finally {
    aedes.off('publish', touch);
    aedes.off('ack', touch);
  }
}
