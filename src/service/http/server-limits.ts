/**
 * What one client can hold of the HTTP server, and the answers Node's HTTP server would otherwise
 * give on its own (issue 15, items 2 and 3; docs/api.md, "Limits"):
 * - a request must arrive whole within `requestTimeoutMs` (its headers within `headersTimeoutMs`),
 *   or it is answered 408: a client that sends less than its Content-Length no longer holds a
 *   connection (and a file descriptor, which the embedded broker's TCP clients share) for good;
 * - one client address holds at most `maxConnectionsPerClient` connections, the server at most
 *   `maxConnections`;
 * - a body the server will not read (413, say) is drained, up to a bound, rather than the
 *   connection closed under it, so the client reads the answer instead of failing on EPIPE while
 *   it still writes.
 */
import { STATUS_CODES, type IncomingMessage, type Server } from 'node:http';
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
  server.maxConnections = limits.maxConnections;
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
  // unseen and unbounded (a 1,000 MiB body was read whole, issue 29), so a count started after
  // that never saw a byte.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (hasUnreadBody(request.raw) && !answered.has(request.raw.socket)) {
      if (reply.getHeader('connection') === 'close') reply.removeHeader('connection');
      drainUnreadBody(request.raw);
    }
    done(null, payload);
  });
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

