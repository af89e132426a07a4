/**
 * Request bodies are JSON only (interface section 4: "All bodies are JSON"). fastify's own JSON
 * parser is kept, with its prototype-poisoning protection; the one change is that an empty body is
 * "no body" instead of an error, because the unlock and revoke-all endpoints take no body and
 * clients commonly send `Content-Type: application/json` on every POST anyway. Endpoints that need
 * a body then fail schema validation with a 400 that says so. Every other media type is removed,
 * so it is answered with 415, as is a JSON body that says it is not UTF-8 (RFC 8259, section 8.1:
 * JSON between systems is UTF-8; a UTF-16 body read as UTF-8 would be another text than was sent).
 */
import { SimError } from '../../errors.js';
import type { ApiInstance } from './api-instance.js';

/** The `charset` parameter of a Content-Type, lower-cased and unquoted, if it has one. */
function charsetOf(contentType: string | undefined): string | undefined {
  for (const parameter of (contentType ?? '').split(';').slice(1)) {
    const [name = '', value = ''] = parameter.split('=', 2).map((part) => part.trim());
    if (name.toLowerCase() === 'charset') return value.replace(/^"(.*)"$/, '$1').toLowerCase();
  }
  return undefined;
}

export function installJsonBodyParser(app: ApiInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const charset = charsetOf(request.headers['content-type']);
    if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
      done(new SimError('UNSUPPORTED_MEDIA_TYPE', 'Request body must be JSON in UTF-8'), undefined);
      return;
    }
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text === '') {
      done(null, undefined);
      return;
    }
    // fastify's default JSON parser answers through `done` and returns nothing; only its type
    // (a parser may be async) says it might return a promise.
    void parseJson(request, text, done);
  });
}
