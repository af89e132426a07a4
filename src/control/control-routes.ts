/**
 * The routes of the `/sim/v1` control plane by concern (docs/control-plane.md, "Endpoints"), each a
 * fastify plugin that control-plane.ts registers under `/sim/v1`, behind the control token: health
 * and the clock, stations and what can be done to them, faults. Bodies and replies are the wire
 * schemas (wire-schemas.ts), so `/v1/openapi.json` documents them. Every action goes to the fleet
 * over MQTT through the `ControlChannel`, so it reaches stations in any process.
 */
import { Type } from '@sinclair/typebox';
import { LinkFiguresSchema } from '../fixture/link-schema.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { SimError } from '../errors.js';
import { BODY_OPTIONAL, described, errorResponses } from '../service/http/route-docs.js';
import type { Fixture } from '../fixture/fixture-schema.js';
import { DEFAULT_REBOOT_DOWN_MS } from '../contract/station-actions.js';
import type { ControlAction, ControlChannel } from './control-channel.js';
import type { EventHub } from './event-hub.js';
import type { FleetReadiness } from './fleet-readiness.js';
import type { ApiFaults } from './api-faults.js';
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
} from './wire-schemas.js';
import type { SimHealth } from './wire-schemas.js';

type SimHealthRefused = NonNullable<SimHealth['broker']>['refused'];

/** What the route plugins work with. */
export interface ControlRoutesOptions {
  channel: ControlChannel;
  hub: EventHub;
  fixture: Fixture;
  /** Reports whether the broker connection of the simulator is up. @default always up */
  brokerUp?: () => boolean;
  /** What the embedded broker refused so far, for health (absent with an external broker). */
  brokerRefused?: () => SimHealthRefused;
  /**
   * Messages the `/v1` gateway in this process refused as implausible, by reason
   * (src/service/gateway/plausibility.ts); health shows the reasons counted so far.
   * @default none: health has no `gateway` field
   */
  gatewayRefused?: () => Readonly<Record<string, number>>;
  /** What the broker refused the in-process `/v1` gateway over MQTT 5, by packet and reason code (`"PUBACK 0x87"`). */
  gatewayBrokerRefused?: () => Readonly<Record<string, number>>;
  /**
   * How many stations of this process the broker refuses now (their last attempt to connect was
   * refused); health shows it once there is one.
   * @default none: health has no `stations.refused`
   */
  stationsRefused?: () => number;
  /** Simulated time; `advance` exists on a manual clock. @default none: the clock routes answer 409 */
  clock?: AdvanceableClock;
  /** The `/v1` API's faults, which a reset clears. @default none */
  apiFaults?: ApiFaults;
  /** The broker the stations use, credentials redacted: in health, and the server of `/sim/v1/asyncapi.json`. @default none */
  mqttUrl?: string;
}

/** A clock that `POST /sim/v1/clock/advance` can move. */
export interface AdvanceableClock {
  readonly manual: boolean;
  now(): number;
  advance(ms: number): Promise<void>;
}

const TokenParams = Type.Object({ token: Type.String({ description: "The station's token (`CI-1`)." }) }, { additionalProperties: false });
const LockParams = Type.Object({ token: Type.String({ description: "The station's token." }), lockId: Type.String() }, { additionalProperties: false });
const FaultParams = Type.Object({ token: Type.String({ description: "The station's token." }), id: Type.String({ description: 'The id the station gave the fault.' }) }, { additionalProperties: false });

/**
 * The errors of a route that asks the fleet over MQTT (control-channel.ts): the station is not in
 * the fixture or has no such lock or fault (404), the control plane has lost the broker (503), no
 * fleet process answered in time (504). 400, 401 and the other answers around the routes are
 * added to every operation by openapi-document.ts.
 */
const FLEET_ERRORS = errorResponses(503, 504);
const STATION_ERRORS = { ...errorResponses(404), ...FLEET_ERRORS };
/** The fault schema (src/contract/fault-schema.ts) named for the OpenAPI document. */
const FaultSpecBody = { ...FaultSpecSchema, title: 'FaultSpec' };
/** The reply of every route that answers with the station as it now is. */
const stationReply = { 200: described(SimStationSchema, 'The station as it now is.'), ...STATION_ERRORS };

/** Why health is not ready, or undefined when it is. */
function notReadyReason(brokerUp: boolean, readiness: FleetReadiness): string | undefined {
  if (!brokerUp) return 'the control plane is not connected to the MQTT broker';
  if (!readiness.cameUp) return 'waiting for the stations expected online to report online';
  // Came up, then lost every station it expects online (their wills): the fleet process is gone.
  const gone = readiness.expectedOnlineAllOffline();
  if (gone > 0) return `${gone === 1 ? 'the one station' : `all ${gone} stations`} expected online ${gone === 1 ? 'is' : 'are'} offline: is the stations process running?`;
  return undefined;
}

/** The reasons counted at least once, or undefined when nothing was refused (health then has no `gateway` field). */
function gatewayRefusals(counts: Readonly<Record<string, number>> | undefined): Record<string, number> | undefined {
  if (!counts) return undefined;
  const counted = Object.entries(counts).filter(([, count]) => count > 0);
  return counted.length === 0 ? undefined : Object.fromEntries(counted);
}

/** `GET /health`, `GET /clock`, `POST /clock/advance`. */
export const healthAndClockRoutes: FastifyPluginAsyncTypebox<ControlRoutesOptions> = async (plane, options) => {
  const { hub, fixture } = options;

  const healthSchema = {
    tags: ['control'],
    operationId: 'getSimHealth',
    summary: 'Is the simulator ready?',
    response: { 200: described(HealthReplySchema, 'Ready.'), 503: described(HealthReplySchema, 'Not ready: `reason` says why.') },
  };
  plane.get('/health', { schema: healthSchema }, async (_request, reply: FastifyReply) => {
    const { online, offline } = hub.readiness.counts();
    // Ready once every station that should be online is (the hub latches it as statuses
    // arrive, and re-arms it when the broker connection is lost); a station taken offline or
    // online on purpose later does not undo it.
    const reason = notReadyReason(options.brokerUp?.() ?? true, hub.readiness);
    const ready = reason === undefined;
    const brokerRefused = options.brokerRefused?.();
    const gatewayRefused = gatewayRefusals(options.gatewayRefused?.());
    const gatewayBrokerRefused = gatewayRefusals(options.gatewayBrokerRefused?.());
    const refused = options.stationsRefused?.() ?? 0;
    return reply.code(ready ? 200 : 503).send({
      ready,
      ...(reason === undefined ? {} : { reason }),
      stations: { total: fixture.stations.length, online, offline, ...(refused > 0 ? { refused } : {}) },
      ...(brokerRefused ? { broker: { refused: brokerRefused } } : {}),
      // Only the embedded broker counts refusals (start-control.ts passes them exactly then).
      ...(options.mqttUrl === undefined ? {} : { mqtt: { url: options.mqttUrl, embedded: options.brokerRefused !== undefined } }),
      ...(gatewayRefused || gatewayBrokerRefused
        ? { gateway: { ...(gatewayRefused ? { refused: gatewayRefused } : {}), ...(gatewayBrokerRefused ? { brokerRefused: gatewayBrokerRefused } : {}) } }
        : {}),
    });
  });

  plane.get('/clock', { schema: { tags: ['control'], operationId: 'getSimClock', summary: 'Simulated time', response: { 200: ClockReplySchema } } }, async () => {
    const clock = options.clock;
    return { now: new Date(clock ? clock.now() : Date.now()).toISOString(), manual: clock?.manual ?? false };
  });

  plane.post(
    '/clock/advance',
    { schema: { tags: ['control'], operationId: 'advanceSimClock', summary: 'Move a manual clock on', body: ClockAdvanceBodySchema, response: { 200: ClockReplySchema, ...errorResponses(409) } } },
    async (request) => {
      const clock = options.clock;
      if (!clock?.manual) throw new SimError('CLOCK_NOT_MANUAL');
      await clock.advance(request.body.ms);
      hub.emit({ type: 'control', action: `clock advanced ${request.body.ms} ms` });
      return { now: new Date(clock.now()).toISOString(), manual: true };
    },
  );
};

/** The fleet and one station: list, show, connection, battery, reboot, physical lock actions, reset. */
export const stationRoutes: FastifyPluginAsyncTypebox<ControlRoutesOptions> = async (plane, options) => {
  const { channel, hub, fixture } = options;
  const act = actOn(options);

  // `missing`: fixture stations no fleet process answered for (a shard's process is down, say),
  // so a partial answer is not taken for the whole fleet.
  plane.get('/stations', { schema: { tags: ['control'], operationId: 'listSimStations', summary: 'Every station', response: { 200: StationListReplySchema, ...FLEET_ERRORS } } }, async () => {
    const stations = await channel.fleet('query');
    return { stations, missing: fixture.stations.length - stations.length };
  });

  plane.get('/stations/:token', { schema: { tags: ['control'], operationId: 'getSimStation', summary: 'One station', params: TokenParams, response: stationReply } }, async (request) => {
    return (await channel.control(request.params.token, { action: 'snapshot' })).station;
  });

  plane.post(
    '/stations/:token/connection',
    { schema: { tags: ['control'], operationId: 'setSimStationConnection', summary: 'Take a station offline or online', params: TokenParams, body: ConnectionBodySchema, response: stationReply } },
    async (request) => (await act(request.params.token, { action: 'connection', online: request.body.online }, request.body.online ? 'online' : 'offline')).station,
  );

  plane.post(
    '/stations/:token/battery',
    { schema: { tags: ['control'], operationId: 'setSimStationBattery', summary: 'Set the battery voltage', params: TokenParams, body: BatteryBodySchema, response: stationReply } },
    async (request) => (await act(request.params.token, { action: 'battery', voltage: request.body.voltage }, `battery ${request.body.voltage} V`)).station,
  );

  plane.put(
    '/stations/:token/link',
    {
      schema: {
        tags: ['control'],
        operationId: 'setSimStationLink',
        summary: "Change a station's link to its broker (docs/links.md): a profile, figures, or a profile with figures changed",
        params: TokenParams,
        body: LinkFiguresSchema,
        response: stationReply,
      },
    },
    async (request) => (await act(request.params.token, { action: 'link', link: request.body }, `link ${JSON.stringify(request.body)}`)).station,
  );

  plane.post(
    '/stations/:token/reboot',
    {
      schema: { tags: ['control'], operationId: 'rebootSimStation', summary: 'Reboot a station', params: TokenParams, body: RebootBodySchema, [BODY_OPTIONAL]: true, response: stationReply },
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
    { schema: { tags: ['control'], operationId: 'actOnSimLock', summary: 'Act on a lock by hand', params: LockParams, body: PhysicalBodySchema, response: stationReply } },
    async (request) => {
      const { token, lockId } = request.params;
      return (await act(token, { action: 'physical', lockId, physical: request.body.action }, `${request.body.action} lock ${lockId}`)).station;
    },
  );

  plane.post('/reset', { schema: { tags: ['control'], operationId: 'resetSimulator', summary: 'Every station back to its fixture state', response: { 200: ResetReplySchema, ...FLEET_ERRORS } } }, async () => {
    // First, and whatever the fleet answers: the API must not keep failing on purpose after a reset.
    options.apiFaults?.clear();
    const stations = await channel.fleet('reset');
    hub.readiness.controlled(undefined, { action: 'reset' });
    hub.emit({ type: 'control', action: 'reset' });
    return { reset: stations.length, missing: fixture.stations.length - stations.length };
  });
};

/** A station's faults: add one, clear one, clear all. */
export const faultRoutes: FastifyPluginAsyncTypebox<ControlRoutesOptions> = async (plane, options) => {
  const act = actOn(options);

  plane.post('/stations/:token/faults', { schema: { tags: ['control'], operationId: 'addSimStationFault', summary: 'Add a fault to a station', params: TokenParams, body: FaultSpecBody, response: { 201: described(FaultSchema, 'The fault, with its id.'), ...STATION_ERRORS } } }, async (request, reply) => {
    const answer = await act(request.params.token, { action: 'addFault', fault: request.body }, `fault ${request.body.kind}`);
    // The fleet agent answers an addFault with the fault it added (fleet-agent.ts).
    return reply.code(201).send(answer.fault!);
  });

  plane.delete('/stations/:token/faults', { schema: { tags: ['control'], operationId: 'clearSimStationFaults', summary: "Clear a station's faults", params: TokenParams, response: stationReply } }, async (request) => {
    return (await act(request.params.token, { action: 'clearFaults' }, 'clear faults')).station;
  });

  plane.delete('/stations/:token/faults/:id', { schema: { tags: ['control'], operationId: 'removeSimStationFault', summary: 'Clear one fault', params: FaultParams, response: stationReply } }, async (request) => {
    return (await act(request.params.token, { action: 'removeFault', faultId: request.params.id }, `clear fault ${request.params.id}`)).station;
  });
};

/**
 * Carries out a control action on one station and reports it: to fleet readiness (health's target
 * for the station is what it was just put in, see `FleetReadiness.controlled`) and as a `control`
 * event.
 */
function actOn({ channel, hub }: Pick<ControlRoutesOptions, 'channel' | 'hub'>) {
  return async (token: string, action: ControlAction, label: string) => {
    const reply = await channel.control(token, action);
    hub.readiness.controlled(token, action);
    hub.emit({ type: 'control', token, action: label });
    return reply;
  };
}
