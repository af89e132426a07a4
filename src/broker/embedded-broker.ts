/**
 * The embedded MQTT broker: aedes behind a TCP server with TCP_NODELAY on every accepted socket,
 * plus `handle(stream)` so in-process stations connect without a socket each. This runs it on the
 * calling thread; `startBrokerThread` (broker-thread.ts) runs this same broker on a thread of its
 * own, which is what the simulator does by default.
 */
import net from 'node:net';
import tls from 'node:tls';
import http from 'node:http';
import https from 'node:https';
import { existsSync, readFileSync, unwatchFile, watchFile, type Stats } from 'node:fs';
import path from 'node:path';
import type { Duplex } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import { Aedes } from 'aedes';
import { WebSocketServer, createWebSocketStream } from 'ws';
import { BrokerGuard } from './broker-guard.js';
import type { BrokerSecurity } from './broker-security.js';
import { DEFAULT_MAX_PACKET_BYTES, PacketSizeGuard } from './packet-size-guard.js';
import { RefusalLog, type BrokerRefusal, type RefusalCounts } from './refusal-log.js';
import { callSafely } from '../shared/throw-later.js';
import { listen } from '../shared/listen.js';
import { SimError } from '../errors.js';
import { indexedMemoryPersistence } from './retained-index.js';
import type { BrokerTap, StreamAcceptor } from '../mqtt/broker-link.js';
import { watchStationTopics, type StationMisdeed, type StationWatchSpec } from './station-watch.js';

export interface EmbeddedBrokerOptions {
  /** TCP port; 0 picks a free one. @default 1883 */
  port?: number;
  /** @default "127.0.0.1" */
  host?: string;
  /** Take a free port when `port` is taken (the CLI does this for its default port only). @default false */
  fallbackToFreePort?: boolean;
  /** Authentication and ACLs (`brokerSecurity(fixture)`, broker-security.ts); without it, or with `auth` false, the broker is open. */
  security?: BrokerSecurity;
  /** Largest MQTT packet read; a larger one closes the connection. @default 65536 */
  maxPacketBytes?: number;
  /** A folder made by `station-sim certs`: server.crt, server.key, ca.crt and (optional) crl.pem, for the TLS and wss listeners. */
  certs?: string;
  /** Port of an MQTT-over-TLS listener (needs `certs`); 0 picks a free one. */
  tlsPort?: number;
  /** Port of an MQTT-over-WebSocket listener (wss with `certs`); 0 picks a free one. */
  wsPort?: number;
}

/** Told of refusals (rate-limited, at most 20 a second; `refusedCounts` counts them all). */
export type RefusalListener = (refusal: BrokerRefusal, counts: RefusalCounts) => void;

/** A running broker, on this thread or its own. `stop()` disconnects every client and closes the server. */
export interface StartedBroker extends StreamAcceptor {
  readonly url: string;
  readonly host: string;
  readonly port: number;
  /** True when the requested port was taken and another one was chosen. */
  readonly fellBack: boolean;
  /** The MQTT-over-TLS listener (`mqtts://host:port`), when one was asked for. */
  readonly tlsUrl?: string;
  /** The MQTT-over-WebSocket listener (`ws://…` or `wss://…`), when one was asked for. */
  readonly wsUrl?: string;
  /** Whether network clients must authenticate (and are held to their topics). */
  readonly auth: boolean;
  /** Refusals so far, by kind. */
  refusedCounts(): RefusalCounts;
  /** Listens to refusals (at most 20 a second reach it); returns a function that stops listening. */
  onRefused(listener: RefusalListener): () => void;
  /** Listens to routed messages inside the broker (see `BrokerTap`). */
  readonly tap: BrokerTap;
  /**
   * Watches every PUBLISH for what only the broker sees of the fixture's stations (station-watch.ts,
   * docs/judge.md): a command to a station the fixture does not have, a command published retained,
   * a station's message published by another client. `spec` is handed over once; `listener` hears
   * misdeeds only (on the broker's own thread, nothing else crosses). Resolves to the function that
   * stops the watch.
   */
  watchStations(spec: StationWatchSpec, listener: (misdeed: StationMisdeed) => void): Promise<() => Promise<void>>;
  /** How many retained messages the broker holds. */
  retainedCount(): Promise<number>;
  /**
   * Resolves once what was handed to the broker so far has been processed and its answers handed
   * back (a round trip to the broker's thread; on this thread, a turn of the event loop). A
   * function property: the simulator's clock is handed it detached.
   */
  sync: () => Promise<void>;
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

/** What the TLS and WebSocket listeners share with the broker's TCP listener. */
interface ListenerContext {
  host: string;
  /** `host` as a URL writes it (an IPv6 address in brackets). */
  urlHost: string;
  secure: tls.TlsOptions | undefined;
  /** The TLS listeners, told of a new CRL (or certificates) when `station-sim certs` rewrites them. */
  secured: { setSecureContext(options: tls.SecureContextOptions): void }[];
  servers: { close(callback: () => void): void }[];
  maxPacketBytes: number;
  track: (socket: Duplex) => void;
  accept: (connection: Duplex, request?: IncomingMessage) => void;
}

/** The MQTT-over-TLS listener on `port`; returns its URL. */
async function listenTls(port: number, { host, urlHost, secure, secured, servers, track, accept }: ListenerContext): Promise<string> {
  if (!secure) throw new SimError('BAD_REQUEST', 'the embedded broker\'s TLS listener needs certificates: give mqtt.certs (a folder made by `station-sim certs`)');
  const tlsServer = tls.createServer(secure, (socket) => {
    socket.setNoDelay(true);
    accept(socket);
  });
  tlsServer.on('secureConnection', track);
  secured.push(tlsServer);
  const tlsBound = await listen(tlsServer, { port, host, fallbackToFreePort: false, label: 'MQTT TLS' });
  servers.push(tlsServer);
  return `mqtts://${urlHost}:${tlsBound.port}`;
}

/** The MQTT-over-WebSocket listener on `port` (wss with certificates); returns its URL. */
async function listenWebSocket(port: number, { host, urlHost, secure, secured, servers, maxPacketBytes, track, accept }: ListenerContext): Promise<string> {
  const httpServer = secure ? https.createServer(secure) : http.createServer();
  if (secure) secured.push(httpServer as https.Server);
  const wss = new WebSocketServer({
    server: httpServer,
    // Bounds what one WebSocket message may hold (it may carry several MQTT packets); the MQTT limit is the parser's guard.
    maxPayload: Math.max(2 * maxPacketBytes, 1 << 20),
    handleProtocols: (protocols) => (protocols.has('mqtt') ? 'mqtt' : protocols.has('mqttv3.1') ? 'mqttv3.1' : false),
  });
  wss.on('connection', (ws, request) => {
    const stream = createWebSocketStream(ws);
    stream.on('error', () => undefined); // aedes hears of it as a closed connection
    track(stream);
    accept(stream, request);
  });
  httpServer.on('connection', (socket: net.Socket) => track(socket));
  const wsBound = await listen(httpServer, { port, host, fallbackToFreePort: false, label: 'MQTT WebSocket' });
  servers.push({ close: (callback) => wss.close(() => httpServer.close(() => callback())) });
  return `${secure ? 'wss' : 'ws'}://${urlHost}:${wsBound.port}`;
}

export async function startEmbeddedBroker(options: EmbeddedBrokerOptions = {}): Promise<InThreadBroker> {
  const host = options.host ?? '127.0.0.1';
  const persistence = indexedMemoryPersistence();
  const listeners = new Set<RefusalListener>();
  const refusals = new RefusalLog((refusal, counts) => {
    for (const listener of listeners) callSafely(() => listener(refusal, counts));
  });
  const guard = options.security ? new BrokerGuard(options.security, refusals) : undefined;
  const aedes = await createAedes(persistence, guard);
  const maxPacketBytes = options.maxPacketBytes ?? DEFAULT_MAX_PACKET_BYTES;
  const sockets = new Set<Duplex>();
  /** Every connection goes in here: its packets are held to the size limit. */
  const accept = (connection: Duplex, request?: IncomingMessage): void => {
    const client = aedes.handle(connection, request);
    limitPacketSize(client, connection, maxPacketBytes, refusals);
  };
  const track = (socket: Duplex): void => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  };
  const server = net.createServer({ noDelay: true }, (socket) => accept(socket));
  server.on('connection', track);
  const servers: { close(callback: () => void): void }[] = [];
  const stopAll = async (): Promise<void> => {
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  };
  let bound: { port: number; fellBack: boolean };
  let tlsUrl: string | undefined;
  let wsUrl: string | undefined;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  try {
    bound = await listen(server, { port: options.port ?? 1883, host, fallbackToFreePort: options.fallbackToFreePort ?? false, label: 'MQTT' });
    servers.push(server);
    const secure = options.certs === undefined ? undefined : tlsOptions(options.certs);
    /** The TLS listeners, told of a new CRL (or certificates) when `station-sim certs` rewrites them. */
    const secured: { setSecureContext(options: tls.SecureContextOptions): void }[] = [];
    const more: ListenerContext = { host, urlHost, secure, secured, servers, maxPacketBytes, track, accept };
    if (options.tlsPort !== undefined) tlsUrl = await listenTls(options.tlsPort, more);
    if (options.wsPort !== undefined) wsUrl = await listenWebSocket(options.wsPort, more);
    if (options.certs !== undefined && secured.length > 0) servers.push(watchCrl(options.certs, secured));
  } catch (error) {
    await stopAll();
    await new Promise<void>((resolve) => aedes.close(() => resolve()));
    throw error;
  }
  /** In-memory connections: `aedes.close()` closes only clients past CONNECT, `stop` closes the rest. */
  const streams = new Set<Duplex>();
  return {
    url: `mqtt://${urlHost}:${bound.port}`,
    host,
    port: bound.port,
    fellBack: bound.fellBack,
    ...(tlsUrl ? { tlsUrl } : {}),
    ...(wsUrl ? { wsUrl } : {}),
    auth: guard?.security.auth ?? false,
    aedes,
    handle: (stream: Duplex) => {
      streams.add(stream);
      stream.once('close', () => streams.delete(stream));
      guard?.trust(stream);
      accept(stream);
    },
    tap: (filters, listener) => tap(aedes, filters, listener),
    watchStations: (spec, listener) => watchStations(aedes, spec, listener),
    retainedCount: async () => persistence.retainedCount,
    refusedCounts: () => ({ ...refusals.counts }),
    onRefused: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    sync: () => new Promise((resolve) => setImmediate(resolve)),
    stop: async () => {
      const closed = stopAll();
      await settle(aedes);
      await new Promise<void>((resolve) => aedes.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      for (const stream of streams) stream.destroy();
      refusals.stop();
      await closed;
    },
  };
}

/**
 * Re-reads the folder when its `crl.pem` changes (`station-sim certs --revoke`), so a revoked
 * station is refused from its next connection on, without a restart; as with Mosquitto's reload,
 * a connection already open stays open. Checked every second; a folder that cannot be read then
 * keeps the context in force.
 */
function watchCrl(certs: string, listeners: { setSecureContext(options: tls.SecureContextOptions): void }[]): { close(callback: () => void): void } {
  const crl = path.join(certs, 'crl.pem');
  const onChange = (now: Stats, before: Stats): void => {
    if (now.mtimeMs === before.mtimeMs && now.size === before.size) return;
    let options: tls.TlsOptions;
    try {
      options = tlsOptions(certs);
    } catch {
      return;
    }
    for (const listener of listeners) listener.setSecureContext(options);
  };
  watchFile(crl, { interval: 1000, persistent: false }, onChange);
  return {
    close: (callback) => {
      unwatchFile(crl, onChange);
      callback();
    },
  };
}

/** The TLS options of the broker's listeners, from a `station-sim certs` folder. A client certificate, when given, must verify. */
function tlsOptions(certs: string): tls.TlsOptions {
  const read = (name: string): Buffer => {
    try {
      return readFileSync(path.join(certs, name));
    } catch {
      throw new SimError('BAD_REQUEST', `the embedded broker's TLS listener needs ${path.join(certs, name)}, which cannot be read: make the folder with \`station-sim certs\``);
    }
  };
  const crl = path.join(certs, 'crl.pem');
  return {
    cert: read('server.crt'),
    key: read('server.key'),
    ca: read('ca.crt'),
    ...(existsSync(crl) ? { crl: readFileSync(crl) } : {}),
    // Asked for, not required: clients with a password use TLS too. A certificate that is presented must verify (broker-guard.ts).
    requestCert: true,
    rejectUnauthorized: false,
  };
}

interface SizedClient {
  id: string | undefined;
  _parser?: { parse(bytes: Buffer): unknown };
}

/**
 * Holds a connection's packets to `max` bytes: aedes has no such option, so the parser it made for
 * the connection reads through a `PacketSizeGuard` first, which looks only at fixed headers.
 */
function limitPacketSize(client: SizedClient, connection: Duplex, max: number, refusals: RefusalLog): void {
  const parser = client._parser;
  if (!parser) throw new Error('aedes changed: a client has no _parser to hold to the packet size limit');
  const parse = parser.parse.bind(parser);
  const sizes = new PacketSizeGuard(max);
  let refused = false;
  parser.parse = (bytes: Buffer) => {
    if (refused) return 0;
    if (sizes.feed(bytes)) return parse(bytes);
    refused = true;
    refusals.add({ kind: 'packet-too-large', ...(client.id ? { clientId: client.id } : {}), reason: `a packet larger than ${max} bytes` });
    connection.destroy();
    return 0;
  };
}

/**
 * aedes over `persistence`, answering as MQTT 3.1.1 says where aedes alone would not.
 * [MQTT-3.1.3-8]: a zero-byte client id with CleanSession 0 is answered with CONNACK return code
 * 2 (identifier rejected) and the connection closed, as Mosquitto does; aedes would make up an id
 * for a session nobody can resume. preConnect sees the CONNECT as sent, and authenticate is where
 * aedes takes a return code (an error's `returnCode`) before it answers and closes.
 */
function createAedes(persistence: ReturnType<typeof indexedMemoryPersistence>, guard: BrokerGuard | undefined): Promise<Aedes> {
  const emptyIdPersistent = new WeakSet<object>();
  return Aedes.createBroker({
    persistence,
    preConnect: (client, packet, callback) => {
      if (packet.clientId === '' && !packet.clean) emptyIdPersistent.add(client);
      callback(null, true);
    },
    authenticate: (client, username, password, callback) => {
      if (emptyIdPersistent.has(client)) return callback(Object.assign(new Error('identifier rejected'), { returnCode: 2 as const }), false);
      if (!guard) return callback(null, true);
      guard.authenticate(client, username, password, (error, ok) => callback(error, ok));
    },
    ...(guard?.security.auth
      ? {
          authorizePublish: (client, packet, callback) => guard.authorizePublish(client, packet, callback),
          authorizeSubscribe: (client, sub, callback) => guard.authorizeSubscribe(client, sub, callback as never),
          authorizeForward: (client, packet) => guard.authorizeForward(client, packet),
        }
      : {}),
  });
}

/** `StartedBroker.watchStations` on `aedes`: misdeeds on the station topics to `listener`, until the returned function is called. */
async function watchStations(aedes: Aedes, spec: StationWatchSpec, listener: (misdeed: StationMisdeed) => void): Promise<() => Promise<void>> {
  const unwatch = watchStationTopics(aedes, spec, listener);
  return async () => unwatch();
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
