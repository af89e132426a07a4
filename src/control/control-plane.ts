/**
 * The `/sim/v1` control plane and its WebSocket event stream (docs/control-plane.md), as routes on
 * the API's fastify instance. Every action goes to the fleet over MQTT through the
 * `ControlChannel`, so it reaches stations in any process.
 */
import { timingSafeEqual, createHash } from 'node:crypto';
import websocket from '@fastify/websocket';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { WebSocket } from 'ws';
import type { ApiInstance } from '../service/build-api.js';
import { bearerToken } from '../service/http/bearer-token.js';
import { SimError } from '../errors.js';
import type { Fixture } from '../fixture/fixture-schema.js';
import type { ControlChannel, ControlAction } from './control-channel.js';
import type { EventHub } from './event-hub.js';
import { checkUpgradeRequest, refuseUpgradesElsewhere, selectProtocol, subprotocolToken } from './event-stream-upgrade.js';
import { DEFAULT_REBOOT_DOWN_MS } from '../fixture/station-actions.js';
import {
  BatteryBodySchema,
  ClockAdvanceBodySchema,
  ClockReplySchema,
  ConnectionBodySchema,
  FaultSchema,
  FaultSpecSchema,
  HealthReplySchema,
  PhysicalBodySchema,
  RebootBodySchema,
  ResetReplySchema,
  SimStationSchema,
  StationListReplySchema,
  type SimStreamEvent,
} from './wire-schemas.js';

export interface ControlPlaneOptions {
  channel: ControlChannel;
  hub: EventHub;
  fixture: Fixture;
  /** When set, every `/sim/v1` request must carry `Authorization: Bearer <controlToken>`. */
  controlToken?: string;
  /**
   * A WebSocket client with more than this many bytes waiting is closed with 1013 instead of
   * being buffered without bound.
   * @default 1048576
   */
  maxBufferedBytes?: number;
  /** Reports whether the broker connection of the simulator is up. @default always up */
  brokerUp?: () => boolean;
  /** Simulated time; `advance` exists on a manual clock. @default none: the clock routes answer 409 */
  clock?: AdvanceableClock;
}

/** A clock that `POST /sim/v1/clock/advance` can move. */
export interface AdvanceableClock {
  readonly manual: boolean;
  now(): number;
  advance(ms: number): Promise<void>;
}

const TokenParams = Type.Object({ token: Type.String() }, { additionalProperties: false });
const LockParams = Type.Object({ token: Type.String(), lockId: Type.String() }, { additionalProperties: false });
const FaultParams = Type.Object({ token: Type.String(), id: Type.String() }, { additionalProperties: false });
/** The reply of every route that answers with the station as it now is. */
const stationReply = { 200: SimStationSchema };

export async function registerControlPlane(app: ApiInstance, options: ControlPlaneOptions): Promise<void> {
  const { channel, hub, fixture } = options;
  const maxBuffered = options.maxBufferedBytes ?? 1024 * 1024;
  const maxHeld = HELD_EVENTS_FACTOR * maxBuffered;
  const expected = options.controlToken === undefined ? undefined : digest(options.controlToken);

  await app.register(websocket, { options: { maxPayload: 64 * 1024, handleProtocols: selectProtocol }, preClose: closeEventStreams });
  app.addHook('onRequest', refuseUpgradesElsewhere);

  // Every request of the API is summarised for the event stream: method, route pattern, status,
  // time. The route pattern (`/v1/stations/:station_token`) carries no token of any kind.
  // A callback hook rather than an async one: it runs on every request, and without a listener
  // (the common case under load) it is only this check.
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unknown route';
    if (hub.listening && !route.startsWith('/sim/v1')) {
      hub.emit({
        type: 'api.request',
        method: request.method,
        route,
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime),
        ...(request.commandId ? { commandId: request.commandId } : {}),
      });
    }
    done();
  });

  await app.register(
    async (instance) => {
      const plane = instance.withTypeProvider<TypeBoxTypeProvider>();

      if (expected) {
        // A hook of this plugin's scope runs for every request the router sends here, however its
        // target was spelt (`/%73im/v1/reset`, `/sim/%76%31/…`, an absolute-form
        // `http://host/sim/v1/…`, a WebSocket upgrade): the router decodes and normalises the
        // target, so a check of the raw target could be walked around. Bearer scheme, as /v1.
        plane.addHook('onRequest', async (request: FastifyRequest) => {
          // A browser cannot set a header on a WebSocket: the stream also takes the token as a
          // subprotocol. Never from the URL's query, which ends up in logs and histories.
          const given = bearerToken(request.headers.authorization) ?? subprotocolToken(request) ?? '';
          // Compare digests so the comparison takes the same time whatever the length given.
          if (!timingSafeEqual(digest(given), expected)) throw new SimError('CONTROL_TOKEN_INVALID');
        });
      }
      // Unknown URLs under /sim/v1 are answered in this scope, behind the token: a 404 would tell a
      // caller without the token which routes exist.
      plane.setNotFoundHandler((_request, _reply) => {
        throw new SimError('ROUTE_NOT_FOUND');
      });

      plane.get('/health', { schema: { response: { 200: HealthReplySchema, 503: HealthReplySchema } } }, async (_request, reply: FastifyReply) => {
        let online = 0;
        let offline = 0;
        for (const station of fixture.stations) {
          const status = hub.readiness.statusOf(station.token);
          if (status === 'online') online += 1;
          else if (status === 'offline') offline += 1;
        }
        // Ready once every station that should be online is (the hub latches it as statuses
        // arrive, and re-arms it when the broker connection is lost); a station taken offline or
        // online on purpose later does not undo it.
        const ready = (options.brokerUp?.() ?? true) && hub.readiness.cameUp;
        return reply.code(ready ? 200 : 503).send({ ready, stations: { total: fixture.stations.length, online, offline } });
      });

      // `missing`: fixture stations no fleet process answered for (a shard's process is down, say),
      // so a partial answer is not taken for the whole fleet.
      plane.get('/stations', { schema: { response: { 200: StationListReplySchema } } }, async () => {
        const stations = await channel.fleet('query');
        return { stations, missing: fixture.stations.length - stations.length };
      });

      plane.get('/stations/:token', { schema: { params: TokenParams, response: stationReply } }, async (request) => {
        return (await channel.control(request.params.token, { action: 'snapshot' })).station;
      });

      const act = async (token: string, action: ControlAction, label: string) => {
        const reply = await channel.control(token, action);
        // Health's target for the station is what it was just put in (see FleetReadiness.controlled).
        hub.readiness.controlled(token, action);
        hub.emit({ type: 'control', token, action: label });
        return reply;
      };

      plane.post(
        '/stations/:token/connection',
        { schema: { params: TokenParams, body: ConnectionBodySchema, response: stationReply } },
        async (request) => (await act(request.params.token, { action: 'connection', online: request.body.online }, request.body.online ? 'online' : 'offline')).station,
      );

      plane.post(
        '/stations/:token/battery',
        { schema: { params: TokenParams, body: BatteryBodySchema, response: stationReply } },
        async (request) => (await act(request.params.token, { action: 'battery', voltage: request.body.voltage }, `battery ${request.body.voltage} V`)).station,
      );

      plane.post(
        '/stations/:token/reboot',
        {
          schema: { params: TokenParams, body: RebootBodySchema, response: stationReply },
          // The body is optional: none at all means `{}` (a schema cannot make the whole body optional).
          preValidation: async (request) => {
            request.body ??= {};
          },
        },
        async (request) => {
          const downMs = request.body.downMs ?? DEFAULT_REBOOT_DOWN_MS;
          return (await act(request.params.token, { action: 'reboot', downMs }, `reboot (${downMs} ms down)`)).station;
        },
      );

      plane.post(
        '/stations/:token/locks/:lockId/physical',
        {
          schema: { params: LockParams, body: PhysicalBodySchema, response: stationReply },
        },
        async (request) => {
          const { token, lockId } = request.params;
          return (await act(token, { action: 'physical', lockId, physical: request.body.action }, `${request.body.action} lock ${lockId}`)).station;
        },
      );

      plane.post('/stations/:token/faults', { schema: { params: TokenParams, body: FaultSpecSchema, response: { 201: FaultSchema } } }, async (request, reply) => {
        const answer = await act(request.params.token, { action: 'addFault', fault: request.body }, `fault ${request.body.kind}`);
        // The fleet agent answers an addFault with the fault it added (fleet-agent.ts).
        return reply.code(201).send(answer.fault!);
      });

      plane.delete('/stations/:token/faults', { schema: { params: TokenParams, response: stationReply } }, async (request) => {
        return (await act(request.params.token, { action: 'clearFaults' }, 'clear faults')).station;
      });

      plane.delete('/stations/:token/faults/:id', { schema: { params: FaultParams, response: stationReply } }, async (request) => {
        return (await act(request.params.token, { action: 'removeFault', faultId: request.params.id }, `clear fault ${request.params.id}`)).station;
      });

      plane.get('/clock', { schema: { response: { 200: ClockReplySchema } } }, async () => {
        const clock = options.clock;
        return { now: new Date(clock ? clock.now() : Date.now()).toISOString(), manual: clock?.manual ?? false };
      });

      plane.post(
        '/clock/advance',
        { schema: { body: ClockAdvanceBodySchema, response: { 200: ClockReplySchema } } },
        async (request) => {
          const clock = options.clock;
          if (!clock?.manual) throw new SimError('CLOCK_NOT_MANUAL');
          await clock.advance(request.body.ms);
          hub.emit({ type: 'control', action: `clock advanced ${request.body.ms} ms` });
          return { now: new Date(clock.now()).toISOString(), manual: true };
        },
      );

      plane.post('/reset', { schema: { response: { 200: ResetReplySchema } } }, async () => {
        const stations = await channel.fleet('reset');
        hub.readiness.controlled(undefined, { action: 'reset' });
        hub.emit({ type: 'control', action: 'reset' });
        return { reset: stations.length, missing: fixture.stations.length - stations.length };
      });

      plane.route({
        method: 'GET',
        url: '/events',
        config: { websocketRoute: true },
        schema: { hide: true },
        onRequest: checkUpgradeRequest,
        // Never reached: checkUpgradeRequest answers a request that is no upgrade with 426.
        handler: async () => {
          throw new SimError('UPGRADE_REQUIRED');
        },
        wsHandler: (socket: WebSocket) => {
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
        },
      });
    },
    { prefix: '/sim/v1' },
  );
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
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
function closeEventStreams(this: FastifyInstance, done: () => void): void {
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
