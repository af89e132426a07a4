/**
 * Webhooks are in the interface description but not available (interface sections 4 and 6): every
 * method on `/v1/webhooks` and every path below it answers 501. The routes live in their own
 * plugin scope that accepts any body unread, so the answer is 501 whatever the request carries
 * (a webhook payload of some other media type included), rather than 415.
 */
import { ERRORS, SimError } from '../../errors.js';
import type { ApiInstance } from './api-instance.js';
import { errorResponses } from './route-docs.js';

const MESSAGE = ERRORS.NOT_IMPLEMENTED.message;
const DOCUMENTED_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

export function registerWebhookRoutes(app: ApiInstance): void {
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, _body, done) => done(null, undefined));
    const notAvailable = async (): Promise<never> => {
      throw new SimError('NOT_IMPLEMENTED');
    };
    const schema = { tags: ['webhooks'], summary: MESSAGE, security: [], response: errorResponses(501) };
    // The document shows the methods OpenAPI 3.1 can describe; the rest (TRACE, QUERY, WebDAV's…)
    // answer the same but stay out of it.
    const documented = DOCUMENTED_METHODS.filter((method) => scope.supportedMethods.includes(method));
    const others = scope.supportedMethods.filter((method) => !documented.includes(method));
    scope.route({ method: documented, url: '/v1/webhooks', schema, exposeHeadRoute: false, handler: notAvailable });
    scope.route({ method: others, url: '/v1/webhooks', schema: { ...schema, hide: true }, handler: notAvailable });
    // Paths below it answer the same: documented as one path with a trailing parameter.
    scope.route({ method: documented, url: '/v1/webhooks/*', schema, exposeHeadRoute: false, handler: notAvailable });
    scope.route({ method: others, url: '/v1/webhooks/*', schema: { ...schema, hide: true }, handler: notAvailable });
  });
}
