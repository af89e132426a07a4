/**
 * The WebSocket upgrade of `/sim/v1/events` (docs/control-plane.md, "Event stream"): what a
 * request must carry to be upgraded, answered in JSON as every other error (interface section 7)
 * rather than by `ws`'s own text/html 400, and how a browser, which cannot set an Authorization
 * header on a WebSocket, presents the control token: as a subprotocol, never in the URL's query.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { SimError } from '../errors.js';

/** The subprotocol of the event stream; a client that offers it gets it back. */
export const EVENTS_PROTOCOL = 'station-sim.events';

/**
 * A subprotocol that carries the control token, base64url-encoded (a subprotocol is an RFC 9110
 * token, which a control token need not be): `station-sim.bearer.<base64url(token)>`. The server
 * never selects it, so the token is not echoed in the answer.
 */
export const BEARER_PROTOCOL_PREFIX = 'station-sim.bearer.';

/** RFC 9110, section 5.6.2: the characters of a token. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** RFC 6455, section 4.1: the key is 16 random bytes in base64. */
const KEY = /^[+/0-9A-Za-z]{22}==$/;

/** The subprotocols offered, or undefined when the header is not a list of distinct tokens. */
function offeredProtocols(header: string | undefined): Set<string> | undefined {
  const offered = new Set<string>();
  if (header === undefined) return offered;
  for (const part of header.split(',')) {
    const protocol = part.trim();
    if (!TOKEN.test(protocol) || offered.has(protocol)) return undefined;
    offered.add(protocol);
  }
  return offered;
}

/** The control token a WebSocket upgrade carries in its subprotocols, if any. */
export function subprotocolToken(request: FastifyRequest): string | undefined {
  if (!request.ws) return undefined;
  for (const protocol of offeredProtocols(request.headers['sec-websocket-protocol']) ?? []) {
    if (protocol.startsWith(BEARER_PROTOCOL_PREFIX)) return Buffer.from(protocol.slice(BEARER_PROTOCOL_PREFIX.length), 'base64url').toString('utf8');
  }
  return undefined;
}

/** `ws`'s `handleProtocols`: the event stream's own subprotocol when offered, else none. */
export function selectProtocol(protocols: Set<string>): string | false {
  return protocols.has(EVENTS_PROTOCOL) ? EVENTS_PROTOCOL : false;
}

/**
 * A hook of the event stream's route: a plain GET is told to upgrade (426), and an upgrade that
 * `ws` would refuse is refused here first, with a message that names the header at fault.
 */
export async function checkUpgradeRequest(request: FastifyRequest): Promise<void> {
  if (!request.ws) throw new SimError('UPGRADE_REQUIRED');
  const { headers } = request;
  if (headers.upgrade?.toLowerCase() !== 'websocket') throw new SimError('BAD_REQUEST', 'The Upgrade header must be "websocket"');
  if (headers['sec-websocket-key'] === undefined || !KEY.test(headers['sec-websocket-key'])) {
    throw new SimError('BAD_REQUEST', 'Sec-WebSocket-Key must be 16 bytes in base64 (RFC 6455, section 4.1)');
  }
  const version = headers['sec-websocket-version'];
  if (version !== '13' && version !== '8') throw new SimError('BAD_REQUEST', 'Sec-WebSocket-Version must be 13');
  if (offeredProtocols(headers['sec-websocket-protocol']) === undefined) {
    throw new SimError('BAD_REQUEST', 'Sec-WebSocket-Protocol must be a comma-separated list of distinct tokens');
  }
}

/**
 * A root hook: an upgrade request to a route that is not a WebSocket would be upgraded and then
 * closed without a word by @fastify/websocket (or refused by `ws` in text/html); it is refused here.
 */
export function refuseUpgradesElsewhere(request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void): void {
  // A callback hook: it runs on every request of the API, and nearly always only checks a flag.
  if (request.ws && request.routeOptions.config.websocketRoute !== true) done(new SimError('BAD_REQUEST', 'This route does not take a WebSocket upgrade'));
  else done();
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Set on routes that take a WebSocket upgrade (`/sim/v1/events`). */
    websocketRoute?: boolean;
  }
}
