/**
 * Request bodies are JSON only (interface section 4: "All bodies are JSON"). fastify's own JSON
 * parser is kept, with its prototype-poisoning protection; the one change is that an empty body is
 * "no body" instead of an error, because the unlock and revoke-all endpoints take no body and
 * clients commonly send `Content-Type: application/json` on every POST anyway. Endpoints that need
 * a body then fail schema validation with a 400 that says so. Every other media type is removed,
 * so it is answered with 415.
 */
import type { ApiInstance } from './api-instance.js';

export function installJsonBodyParser(app: ApiInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text === '') {
      done(null, undefined);
      return;
    }
    parseJson(request, text, done);
  });
}
