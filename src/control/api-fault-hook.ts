/**
 * Where API faults act: a hook on the API's fastify instance, added by the control plane as it adds
 * the summary of every request (control-plane.ts), so the service knows nothing of faults. It runs
 * when the request arrives, before its body is read and before any authentication: a 401 fault
 * answers a valid token as if it were not.
 *
 * - `status`: the answer is an API error as any other, `{"message": …}`, with `Retry-After` when
 *   asked and a bearer challenge on a 401 (RFC 6750, as error-handling.ts gives one);
 * - `latency`: the request waits, then goes on as usual;
 * - `reset`: the connection is destroyed with no answer;
 * - `hang`: no answer at all, until the client gives up or the server stops.
 *
 * A request a fault answered carries `fault: <id>` in its `api.request` event. `reset` and `hang`
 * send no answer, so fastify reports nothing for them: they are reported here, with status 0.
 */
import type { Socket } from 'node:net';
import type { FastifyReply } from 'fastify';
import type { ApiInstance } from '../service/build-api.js';
import type { ApiFaults } from './api-faults.js';
import type { EventHub } from './event-hub.js';
import type { ApiFault } from './wire-schemas.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The id of the API fault that acted on this request (control/api-fault-hook.ts). */
    apiFault?: string;
  }
}

const CHALLENGE = 'Bearer realm="station-sim", error="invalid_token"';

export function installApiFaultHook(app: ApiInstance, faults: ApiFaults, hub: EventHub): void {
  app.decorateRequest('apiFault', undefined);
  /** Connections held by `hang`, destroyed when the server closes. */
  const hung = new Set<Socket>();
  /** Requests waiting out a `latency`, let go at once when the server closes. */
  const waiting = new Map<NodeJS.Timeout, () => void>();

  // A callback hook: with no fault in force (nearly always) it is one check.
  app.addHook('onRequest', (request, reply, done) => {
    if (faults.size === 0) {
      done();
      return;
    }
    const route = request.routeOptions.url;
    if (route === undefined || !route.startsWith('/v1/')) {
      done();
      return;
    }
    const token = (request.params as { station_token?: unknown } | undefined)?.station_token;
    const fault = faults.take(request.method, route, typeof token === 'string' ? token : undefined);
    if (!fault) {
      done();
      return;
    }
    request.apiFault = fault.id;
    switch (fault.kind) {
      case 'status':
        answer(reply, fault);
        return;
      case 'latency': {
        const timer = setTimeout(() => {
          waiting.delete(timer);
          done();
        }, fault.latencyMs ?? 0);
        waiting.set(timer, done);
        return;
      }
      case 'reset':
        reply.hijack();
        request.raw.socket.destroy();
        reportUnanswered(hub, reply, { method: request.method, route, fault });
        return;
      case 'hang': {
        reply.hijack();
        const socket = request.raw.socket;
        hung.add(socket);
        // The body is read and thrown away, so the request is whole and no request timeout answers it.
        request.raw.resume();
        socket.once('close', () => {
          hung.delete(socket);
          reportUnanswered(hub, reply, { method: request.method, route, fault });
        });
        return;
      }
    }
  });

  // Before the server closes (it waits for requests in flight): no hung connection may hold it,
  // and a request waiting out a latency goes on at once.
  app.addHook('preClose', (done) => {
    for (const socket of hung) socket.destroy();
    for (const [timer, proceed] of waiting) {
      clearTimeout(timer);
      proceed();
    }
    waiting.clear();
    done();
  });
}

function answer(reply: FastifyReply, fault: ApiFault): void {
  const status = fault.status ?? 500;
  if (fault.retryAfterSeconds !== undefined) void reply.header('retry-after', String(fault.retryAfterSeconds));
  if (status === 401) void reply.header('www-authenticate', CHALLENGE);
  void reply.code(status).send({ message: fault.message ?? '' });
}

/** The `api.request` of a request that got no answer: status 0. */
function reportUnanswered(hub: EventHub, reply: FastifyReply, { method, route, fault }: { method: string; route: string; fault: ApiFault }): void {
  if (!hub.wantsRequests) return;
  hub.request({ method, route, status: 0, ms: Math.max(0, Math.round(reply.elapsedTime)), fault: fault.id });
}
