/**
 * `/sim/v1/api-faults` (docs/control-plane.md, "API faults"): add, list and remove the faults of the
 * `/v1` API. Each change is told on the event stream as a `control` event.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { SimError } from '../errors.js';
import { described, errorResponses } from '../service/http/route-docs.js';
import type { ApiFaults } from './api-faults.js';
import type { EventHub } from './event-hub.js';
import { ApiFaultClearReplySchema, ApiFaultListReplySchema, ApiFaultSchema, ApiFaultSpecSchema, type ApiFault } from './wire-schemas.js';

export interface ApiFaultRoutesOptions {
  apiFaults: ApiFaults;
  hub: EventHub;
}

const IdParams = Type.Object({ id: Type.String() }, { additionalProperties: false });

export const apiFaultRoutes: FastifyPluginAsyncTypebox<ApiFaultRoutesOptions> = async (plane, { apiFaults, hub }) => {
  plane.post('/api-faults', { schema: { tags: ['api-faults'], operationId: 'addApiFault', summary: 'Make the /v1 API fail on purpose', body: ApiFaultSpecSchema, response: { 201: described(ApiFaultSchema, 'The fault, with its id.') } } }, async (request, reply) => {
    const fault = apiFaults.add(request.body);
    hub.emit({ type: 'control', action: `api fault ${fault.id}: ${describe(fault)}` });
    return reply.code(201).send(fault);
  });

  plane.get('/api-faults', { schema: { tags: ['api-faults'], operationId: 'listApiFaults', summary: 'The API faults in force', response: { 200: ApiFaultListReplySchema } } }, async () => ({ faults: apiFaults.list() }));

  plane.delete('/api-faults', { schema: { tags: ['api-faults'], operationId: 'clearApiFaults', summary: 'Remove every API fault', response: { 200: ApiFaultClearReplySchema } } }, async () => {
    const cleared = apiFaults.clear();
    hub.emit({ type: 'control', action: 'api faults cleared' });
    return { cleared };
  });

  plane.delete('/api-faults/:id', { schema: { tags: ['api-faults'], operationId: 'removeApiFault', summary: 'Remove one API fault', params: IdParams, response: { 200: ApiFaultClearReplySchema, ...errorResponses(404) } } }, async (request) => {
    if (!apiFaults.remove(request.params.id)) throw new SimError('FAULT_NOT_FOUND', 'API fault not found');
    hub.emit({ type: 'control', action: `api fault ${request.params.id} cleared` });
    return { cleared: 1 };
  });
};

/** The fault in words, for the `control` event: `status 401 on POST /v1/auth/refresh, 1 time`. */
function describe(fault: ApiFault): string {
  const what = fault.kind === 'status' ? `status ${fault.status}` : fault.kind === 'latency' ? `latency ${fault.latencyMs} ms` : fault.kind;
  const where = [fault.route === undefined ? 'every /v1 route' : fault.route, fault.token === undefined ? '' : ` of station ${fault.token}`].join('');
  const how = [fault.count === undefined ? '' : `, ${fault.count} time${fault.count === 1 ? '' : 's'}`, fault.probability === undefined ? '' : `, probability ${fault.probability}`].join('');
  return `${what} on ${where}${how}`;
}
