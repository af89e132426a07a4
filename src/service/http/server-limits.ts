/**
 * What one client can hold of the HTTP server, and the answers Node's HTTP server would otherwise
 * give on its own (docs/api.md, "Limits"):
 * - a request must arrive whole within `requestTimeoutMs` (its headers within `headersTimeoutMs`),
 *   or it is answered 408: a client that sends less than its Content-Length no longer holds a
 *   connection (and a file descriptor, which the embedded broker's TCP clients share) for good;
 * - one client address holds at most `maxConnectionsPerClient` connections, the server at most
 *   `maxConnections`: when they are all taken, a new connection makes room by closing the one
 *   that has sent nothing for the longest, among those still sending a request (headers or body)
 *   first, then idle keep-alive ones; one whose request is in and being answered is never closed.
 *   Half-open connections from many addresses filled the table, and every new connection, the
 *   legitimate ones too, was closed on arrival;
 * - a body the server will not read (413, say) is drained, up to a bound, rather than the
 *   connection closed under it, so the client reads the answer instead of failing on EPIPE while
 *   it still writes.
 */
import { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Socket as NetSocket, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { FastifyHttpOptions } from 'fastify';
import { SimError } from '../../errors.js';
import type { HttpLimitSettings } from '../../fixture/fixture-schema.js';
import type { ApiInstance } from './api-instance.js';

/** Limits of the HTTP server, as the fixture's `api.limits` gives them (defaults in its schema). */
export type HttpLimits = HttpLimitSettings;

/**
 * How often Node checks connections against the request and headers timeouts; a late request is
 * answered at most this long after its deadline. Node's default is 30 s.
 */
const TIMEOUT_CHECK_INTERVAL_MS = 500;

/** Of a body the server did not read, this much more is read and thrown away before closing. */
const DRAIN_MAX_BYTES = 16 * 1024 * 1024;
/** ...and for at most this long. */
const DRAIN_MAX_MS = 10_000;

/** A connection over the per-client limit must send its request within this time. */
const REFUSED_CONNECTION_GRACE_MS = 2_000;

/** The fastify options that carry the limits to Node's HTTP server. */
export function serverOptions(limits: HttpLimits): Pick<FastifyHttpOptions<Server>, 'requestTimeout' | 'http'> {
  return {
    requestTimeout: limits.requestTimeoutMs,
    http: {
      headersTimeout: limits.headersTimeoutMs,
      connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS,
      // Node answers a missing Host with an empty 400 of its own; request-rules.ts answers in JSON.
      requireHostHeader: false,
    },
  };
}

/**
 * Connections whose answer is out while their request's body is still being drained: a request
 * timeout that strikes now must not write a second answer (see `clientErrorHandler`).
 */
export const answered = new WeakSet<Socket>();

/** Connections over the per-client limit: their first request is answered 429. */
const overLimit = new WeakSet<Socket>();

/** Installs the limits on the app and on its Node server (before it listens). */
export function installServerLimits(app: ApiInstance, limits: HttpLimits): void {
  const server: Server = app.server;
  // Not server.maxConnections: Node closes the newcomer, which lets half-open connections hold the table.
  limitConnections(server, limits.maxConnections);
  countConnectionsPerClient(server, limits.maxConnectionsPerClient);

  // Callback hooks, not async ones: they run on every request, and an async hook costs a promise
  // each time for what is, nearly always, one check that passes.
  app.addHook('onRequest', (request, reply, done) => {
    if (!overLimit.has(request.raw.socket)) {
      done();
      return;
    }
    void reply.header('retry-after', '1').header('connection', 'close');
    done(new SimError('TOO_MANY_CONNECTIONS', `Too many connections from this address (at most ${limits.maxConnectionsPerClient})`));
  });

  // A body fastify refuses to read (over the limit, malformed) comes with `Connection: close`.
  // Closing at once resets a connection the client is still writing to, and it never reads the
  // answer: keep the connection while the rest of the body is drained, within bounds.
  // The draining starts here, before the answer is finished: once it is, Node's server dumps a
  // body nobody reads (IncomingMessage._dump), which drops every 'data' listener and reads the rest
  // unseen and unbounded (a 1,000 MiB body was read whole), so a count started after
  // that never saw a byte.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (hasUnreadBody(request.raw) && !answered.has(request.raw.socket)) {
      if (reply.getHeader('connection') === 'close') reply.removeHeader('connection');
      drainUnreadBody(request.raw);
    }
    done(null, payload);
  });
}

/** Holds `server` to `max` connections, making room for each newcomer (`ConnectionTable`). */
function limitConnections(server: Server, max: number): void {
  const table = new ConnectionTable(max);
  server.on('connection', (socket: Socket) => table.admit(socket));
  server.on('request', (request: IncomingMessage, response: ServerResponse) => table.requestStarted(request, response));
  server.on('upgrade', (request: IncomingMessage) => table.upgraded(request));
}

/** One connection as the table sees it. */
interface Entry {
  readonly socket: Socket;
  /** `socket.bytesRead` when last looked at, and when it was last seen to grow (or the connection opened). */
  bytesSeen: number;
  progressAt: number;
  /** The request being read or answered; undefined between requests. */
  request: IncomingMessage | undefined;
  /** `socket.bytesRead` when the last answer was sent: nothing more since means idle, not a request begun. */
  bytesAtIdle: number | undefined;
  /** Upgraded to a WebSocket: no longer HTTP, never closed to make room. */
  upgraded: boolean;
}

/**
 * The server's connections, at most `max`. A newcomer over the cap closes the connection that has
 * sent the least for the longest: Node's server consumes sockets in native code, so progress is read
 * from `bytesRead`, compared each time room is needed (a few microseconds for 2,048 connections,
 * and only while the table is full). A connection that just opened has made progress now and is
 * the last to go, so a client that connects and sends its request at once is served.
 */
class ConnectionTable {
  readonly #entries = new Map<Socket, Entry>();
  readonly #max: number;

  constructor(max: number) {
    this.#max = max;
  }

  requestStarted(request: IncomingMessage, response: ServerResponse): void {
    const entry = this.#entries.get(request.socket);
    if (!entry) return;
    entry.request = request;
    entry.bytesAtIdle = undefined;
    response.once('finish', () => {
      if (entry.request !== request) return;
      entry.request = undefined;
      entry.bytesAtIdle = entry.socket.bytesRead;
    });
  }

  upgraded(request: IncomingMessage): void {
    const entry = this.#entries.get(request.socket);
    if (entry) entry.upgraded = true;
  }

  admit(socket: Socket): void {
    if (this.#entries.size >= this.#max) {
      const victim = this.#victim();
      if (!victim) {
        socket.destroy();
        return;
      }
      this.#entries.delete(victim);
      victim.destroy();
    }
    const now = Date.now();
    this.#entries.set(socket, { socket, bytesSeen: socket.bytesRead, progressAt: now, request: undefined, bytesAtIdle: undefined, upgraded: false });
    socket.once('close', () => this.#entries.delete(socket));
  }

  /** The connection to close: still sending a request before idle, and within each, the longest without progress. */
  #victim(): Socket | undefined {
    const now = Date.now();
    let best: Entry | undefined;
    let bestRank = -1;
    let bestStill = -1;
    for (const entry of this.#entries.values()) {
      const read = entry.socket.bytesRead;
      if (read !== entry.bytesSeen) {
        entry.bytesSeen = read;
        entry.progressAt = now;
      }
      const rank = closeRank(entry);
      if (rank === 0) continue;
      const still = now - entry.progressAt;
      if (rank > bestRank || (rank === bestRank && still > bestStill)) {
        best = entry;
        bestRank = rank;
        bestStill = still;
      }
    }
    return best?.socket;
  }
}

/** 2: still sending a request (headers or body), 1: idle between requests, 0: never closed (being answered, upgraded). */
function closeRank(entry: Entry): 0 | 1 | 2 {
  if (entry.upgraded || entry.socket.destroyed) return 0;
  const request = entry.request;
  if (request) return request.complete ? 0 : 2;
  return entry.bytesAtIdle !== undefined && entry.socket.bytesRead === entry.bytesAtIdle ? 1 : 2;
}

/** Keeps count of each client address's connections; those over the limit get 429. */
function countConnectionsPerClient(server: Server, max: number): void {
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress;
    if (address === undefined) return;
    const count = (open.get(address) ?? 0) + 1;
    open.set(address, count);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left === 0) open.delete(address);
      else open.set(address, left);
    });
    if (count > max) {
      overLimit.add(socket);
      // A connection refused for the limit gets its answer only once it sends a request: one
      // that sends nothing is cut off soon, not after the headers timeout.
      socket.setTimeout(REFUSED_CONNECTION_GRACE_MS, () => socket.destroy());
    }
  });
}

/**
 * A request that came over a real connection and whose body is not all read. Requests made with
 * `inject()` have a stand-in socket, nothing to drain and no connection to cut.
 */
function hasUnreadBody(request: IncomingMessage): boolean {
  return !request.complete && request.socket instanceof NetSocket;
}

/**
 * Reads and discards what is left of the request's body (Node's HTTP server does, on a
 * connection it keeps). A client that sends more than `DRAIN_MAX_BYTES`, or takes longer than
 * `DRAIN_MAX_MS`, is cut off.
 */
function drainUnreadBody(request: IncomingMessage): void {
  const socket = request.socket;
  answered.add(socket);
  let drained = 0;
  const stop = (): void => {
    clearTimeout(timer);
    request.removeListener('data', count);
  };
  const count = (chunk: Buffer): void => {
    drained += chunk.length;
    if (drained > DRAIN_MAX_BYTES) {
      stop();
      socket.destroy();
    }
  };
  const timer = setTimeout(() => {
    stop();
    socket.destroy();
  }, DRAIN_MAX_MS);
  timer.unref();
  request.on('data', count);
  // Once the body is read the connection is as good as any other: Content-Length or chunked
  // framing tells where the next request starts. Closing it here would race the client's next
  // request on a connection it was told to keep.
  request.once('end', () => {
    stop();
    answered.delete(socket);
  });
  request.resume();
}

/** An answer written straight to a socket that has no response object (CONNECT). */
export function writeRawError(socket: Duplex, status: number, message: string): void {
  if (socket.destroyed || !socket.writable) return;
  const body = JSON.stringify({ message });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

