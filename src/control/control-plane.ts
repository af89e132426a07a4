/**
 * The `/sim/v1` control plane and its WebSocket event stream (docs/control-plane.md), as routes on
 * the API's fastify instance: the control token and the unknown-route answer for the whole scope,
 * the summary of every `/v1` request for the stream, and the route plugins by concern
 * (control-routes.ts, event-stream-route.ts).
 */
import { timingSafeEqual, createHash } from 'node:crypto';
import websocket from '@fastify/websocket';
import type { FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { ApiInstance } from '../service/build-api.js';
import { bearerToken } from '../service/http/bearer-token.js';
import { routeTarget } from '../service/http/route-target.js';
import { SimError } from '../errors.js';
import type { Fixture } from '../fixture/fixture-schema.js';
import { faultRoutes, healthAndClockRoutes, stationRoutes, type ControlRoutesOptions } from './control-routes.js';
import type { EventHub } from './event-hub.js';
import { closeEventStreams, eventStreamRoute } from './event-stream-route.js';
import { journalRoutes } from './journal-routes.js';
import { judgeRoutes } from './judge-routes.js';
import type { JudgeLog } from '../judge/judge-log.js';
import { ApiFaults } from './api-faults.js';
import { installApiFaultHook } from './api-fault-hook.js';
import { apiFaultRoutes } from './api-fault-routes.js';
import { asyncApiRoute } from './asyncapi-route.js';
import type { RequestJournal } from './request-journal.js';
import { refuseUpgradesElsewhere, selectProtocol, subprotocolToken } from './event-stream-upgrade.js';

export type { AdvanceableClock } from './control-routes.js';

export interface ControlPlaneOptions extends ControlRoutesOptions {
  /** What `/sim/v1/journal` answers from (start-control.ts feeds it from the hub). */
  journal: RequestJournal;
  /** What `/sim/v1/judge` answers from (start-control.ts feeds it from the hub). @default nothing found */
  judge?: JudgeLog;
  /** The run's seed: API faults with a probability draw from it. */
  seed: number;
  /** When set, every `/sim/v1` request must carry `Authorization: Bearer <controlToken>`. */
  controlToken?: string;
  /**
   * A WebSocket client with more than this many bytes waiting is closed with 1013 instead of
   * being buffered without bound.
   * @default 1048576
   */
  maxBufferedBytes?: number;
}

export async function registerControlPlane(app: ApiInstance, options: ControlPlaneOptions): Promise<void> {
  await app.register(websocket, { options: { maxPayload: 64 * 1024, handleProtocols: selectProtocol }, preClose: closeEventStreams });
  app.addHook('onRequest', refuseUpgradesElsewhere);
  reportApiRequests(app, options.hub, options.fixture);
  const apiFaults = new ApiFaults({ seed: options.seed, routes: () => app.apiRoutes });
  installApiFaultHook(app, apiFaults, options.hub);

  await app.register(
    async (instance) => {
      const plane = instance.withTypeProvider<TypeBoxTypeProvider>();
      if (options.controlToken !== undefined) requireControlToken(plane, options.controlToken);
      // Unknown URLs under /sim/v1 are answered in this scope, behind the token: a 404 would tell a
      // caller without the token which routes exist.
      plane.setNotFoundHandler((_request, _reply) => {
        throw new SimError('ROUTE_NOT_FOUND');
      });
      await plane.register(healthAndClockRoutes, options);
      await plane.register(stationRoutes, { ...options, apiFaults });
      await plane.register(faultRoutes, options);
      await plane.register(eventStreamRoute, options);
      await plane.register(journalRoutes, options);
      await plane.register(judgeRoutes, options);
      await plane.register(apiFaultRoutes, { ...options, apiFaults });
      await plane.register(asyncApiRoute, options);
    },
    { prefix: '/sim/v1' },
  );
}

/**
 * Every request of the API is summarised for the event stream: method, route pattern, status,
 * time, the station and lock it names and what it came to. Never a bearer token, a password or a
 * body: the route pattern (`/v1/stations/:station_token`) stands for the URL.
 */
function reportApiRequests(app: ApiInstance, hub: EventHub, fixture: Fixture): void {
  // Built on the first request that names a station.
  let stations: ReadonlyMap<string, Fixture['stations'][number]> | undefined;
  const stationOf = (token: string) => (stations ??= new Map(fixture.stations.map((station) => [station.token, station]))).get(token);
  // A callback hook rather than an async one: it runs on every request. The request journal
  // always listens (a test may verify any request since a mark), so every /v1 request builds
  // this event: one small object, measured in the unlock bench.
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unknown route';
    if (hub.wantsRequests && !route.startsWith('/sim/v1')) {
      const { token, lockId } = routeTarget(request.params, stationOf);
      hub.request({
        method: request.method,
        route,
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime),
        ...(token !== undefined ? { token } : {}),
        ...(lockId !== undefined ? { lockId } : {}),
        ...(request.outcome ? { outcome: request.outcome } : {}),
        ...(request.commandId ? { commandId: request.commandId } : {}),
        ...(request.apiFault ? { fault: request.apiFault } : {}),
      });
    }
    done();
  });
}

/**
 * A hook of the control plane's scope runs for every request the router sends there, however its
 * target was spelt (`/%73im/v1/reset`, `/sim/%76%31/…`, an absolute-form `http://host/sim/v1/…`, a
 * WebSocket upgrade): the router decodes and normalises the target, so a check of the raw target
 * could be walked around. Bearer scheme, as /v1.
 */
function requireControlToken(plane: { addHook: ApiInstance['addHook'] }, controlToken: string): void {
  const expected = digest(controlToken);
  plane.addHook('onRequest', async (request: FastifyRequest) => {
    // A browser cannot set a header on a WebSocket: the stream also takes the token as a
    // subprotocol. Never from the URL's query, which ends up in logs and histories.
    const given = bearerToken(request.headers.authorization) ?? subprotocolToken(request) ?? '';
    // Compare digests so the comparison takes the same time whatever the length given.
    if (!timingSafeEqual(digest(given), expected)) throw new SimError('CONTROL_TOKEN_INVALID');
  });
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}
