/**
 * `GET /sim/v1/events`, the WebSocket event stream (docs/control-plane.md, "Event stream"): a
 * snapshot of the fleet, then every event of the hub, with a per-connection `seq`; slow clients
 * are dropped rather than buffered without bound. Registered by control-plane.ts under `/sim/v1`.
 */
import type { FastifyInstance } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { WebSocket } from 'ws';
import { SimError } from '../errors.js';
import type { ControlChannel } from './control-channel.js';
import type { EventHub } from './event-hub.js';
import { BEARER_PROTOCOL_PREFIX, EVENTS_PROTOCOL, checkUpgradeRequest } from './event-stream-upgrade.js';
import { errorResponses } from '../service/http/route-docs.js';
import type { SimStreamEvent } from './wire-schemas.js';

export interface EventStreamOptions {
  channel: ControlChannel;
  hub: EventHub;
  /** See `ControlPlaneOptions.maxBufferedBytes`. @default 1048576 */
  maxBufferedBytes?: number;
}

/**
 * The route in the OpenAPI document: OpenAPI has no words for a WebSocket, so the operation is the
 * GET that asks for the upgrade, its 101 and the errors of a request that is no good upgrade, and
 * `x-websocket` says what flows once upgraded (its messages: docs/control-plane.md).
 */
const EVENT_STREAM_DOC = {
  tags: ['control'],
  operationId: 'openEventStream',
  summary: 'The event stream (WebSocket): a snapshot of the fleet, then every event',
  description:
    'A WebSocket upgrade (RFC 6455). Each message is one JSON event, `{"seq":1,"time":"<ISO UTC>","type":"snapshot","stations":[…]}` first, then every event of the simulator; the types and their fields are in docs/control-plane.md, "Event stream". ' +
    `A browser, which cannot set an Authorization header on a WebSocket, offers the control token as the subprotocol \`${BEARER_PROTOCOL_PREFIX}<base64url(token)>\`; ` +
    `the server selects \`${EVENTS_PROTOCOL}\` when it is offered. A plain GET is answered 426.`,
  'x-websocket': {
    subprotocols: [EVENTS_PROTOCOL, `${BEARER_PROTOCOL_PREFIX}{base64url(control token)}`],
    messages: 'docs/control-plane.md, "Event stream": one JSON event per message, with seq and type',
  },
  response: {
    101: { type: 'null', description: 'Switching Protocols: the stream of events starts.' },
    ...errorResponses(400, 426),
  },
} as const;

export const eventStreamRoute: FastifyPluginAsyncTypebox<EventStreamOptions> = async (plane, options) => {
  const maxBuffered = options.maxBufferedBytes ?? 1024 * 1024;
  const limits = { maxBuffered, maxHeld: HELD_EVENTS_FACTOR * maxBuffered };
  plane.route({
    method: 'GET',
    url: '/events',
    config: { websocketRoute: true },
    schema: EVENT_STREAM_DOC,
    onRequest: checkUpgradeRequest,
    // Never reached: checkUpgradeRequest answers a request that is no upgrade with 426.
    handler: async () => {
      throw new SimError('UPGRADE_REQUIRED');
    },
    wsHandler: (socket: WebSocket) => serveEventStream(socket, options, limits),
  });
};

/** One client of the stream: the snapshot first, events that come meanwhile held and sent after it. */
function serveEventStream(socket: WebSocket, { channel, hub }: EventStreamOptions, { maxBuffered, maxHeld }: { maxBuffered: number; maxHeld: number }): void {
  let seq = 0;
  let closed = false;
  // The snapshot of a large fleet is megabytes on its own: until it has been written out, it
  // does not count against the limit, so a client that reads normally is not taken for slow.
  let allowance = 0;
  const send = (event: Record<string, unknown>, isSnapshot = false): void => {
    if (closed) return;
    if (socket.bufferedAmount > maxBuffered + allowance) {
      closed = true;
      // 1013 "try again later": the client is too slow; dropping it beats unbounded memory.
      socket.close(1013, 'client too slow');
      return;
    }
    seq += 1;
    const text = JSON.stringify({ seq, ...event });
    if (!isSnapshot) {
      socket.send(text);
      return;
    }
    allowance = Buffer.byteLength(text);
    socket.send(text, () => {
      allowance = 0;
    });
  };
  // Events that happen while the snapshot is gathered are held and sent after it, in order.
  // Gathering a large fleet's snapshot takes seconds, and a busy fleet makes thousands of
  // events a second: past a bound the client is dropped as a slow one is, not held for.
  const held: SimStreamEvent[] = [];
  let heldBytes = 0;
  let snapshotSent = false;
  const hold = (event: SimStreamEvent): void => {
    if (closed) return;
    heldBytes += estimateBytes(event);
    if (heldBytes > maxHeld) {
      closed = true;
      held.length = 0;
      socket.close(1013, 'too many events while the snapshot was gathered');
      return;
    }
    held.push(event);
  };
  const unsubscribe = hub.subscribe((event) => (snapshotSent ? send(event) : hold(event)));
  socket.on('close', () => {
    closed = true;
    unsubscribe();
  });
  channel.fleet('query').then(
    (stations) => {
      // Simulated time, as every other event's `time`.
      send({ type: 'snapshot', time: hub.time(), stations }, true);
      snapshotSent = true;
      for (const event of held.splice(0)) send(event);
    },
    (error: Error) => {
      // No snapshot to start from (no fleet process answered): the client reconnects later.
      closed = true;
      socket.close(1011, error.message.slice(0, 120));
    },
  );
}

/** Events held for a stream client while its snapshot is gathered: at most this many times `maxBufferedBytes`. */
const HELD_EVENTS_FACTOR = 32;

/** About what an event takes once sent (only events held during a snapshot are measured). */
function estimateBytes(event: SimStreamEvent): number {
  return JSON.stringify(event).length;
}

/** How long a stream client has to answer the close frame when the server stops. */
const CLOSE_GRACE_MS = 250;

/**
 * @fastify/websocket's `preClose`: says goodbye to every stream client (1001, going away) and cuts
 * off any that has not answered within a moment. The default waits for each client's close frame
 * until ws gives up after 30 s, so one hung dashboard held up `stop()` that long.
 */
export function closeEventStreams(this: FastifyInstance, done: () => void): void {
  const clients = [...this.websocketServer.clients];
  if (clients.length === 0) {
    done();
    return;
  }
  let open = clients.length;
  const timer = setTimeout(() => {
    for (const client of clients) client.terminate();
  }, CLOSE_GRACE_MS);
  for (const client of clients) {
    client.once('close', () => {
      open -= 1;
      if (open === 0) {
        clearTimeout(timer);
        done();
      }
    });
    client.close(1001, 'the simulator is stopping');
  }
}
