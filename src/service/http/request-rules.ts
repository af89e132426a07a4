/**
 * Requests that are ambiguous or that Node would answer on its own, refused with the API's one
 * error shape, a JSON `{message}` (interface section 7):
 * - an HTTP/1.1 request without Host (RFC 9112, section 3.2: 400);
 * - a header that may appear once given twice (RFC 9110, section 5.3): two `Authorization` headers
 *   resolve to the first here and maybe to the last at a proxy in front, so neither is trusted;
 * - a body in a `Content-Encoding` other than identity (415): it would be read as plain JSON;
 * - an `Expect` other than `100-continue` (417) and `CONNECT` (405), which Node answers with an
 *   empty body or not at all.
 * The charset of a JSON body is checked where bodies are read (json-body-parser.ts).
 */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { ERRORS, SimError } from '../../errors.js';
import type { ApiInstance } from './api-instance.js';
import { writeRawError } from './server-limits.js';

/** Fields that must not repeat: the credentials, what frames and types the body, the target. */
const SINGLETON_FIELDS = new Set(['authorization', 'host', 'content-type', 'content-length', 'content-encoding', 'transfer-encoding', 'sec-websocket-key', 'sec-websocket-version', 'upgrade', 'expect']);

export function installRequestRules(app: ApiInstance): void {
  // RFC 9110, section 10.1.1: an expectation the server cannot meet is 417. 100-continue never
  // reaches this event; Node answers the rest with an empty body unless someone listens.
  app.server.on('checkExpectation', (_request: IncomingMessage, response) => {
    const body = JSON.stringify({ message: ERRORS.EXPECTATION_FAILED.message });
    response.writeHead(ERRORS.EXPECTATION_FAILED.status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), connection: 'close' });
    response.end(body);
  });
  // Without a listener Node closes a CONNECT without a word. This is no proxy.
  app.server.on('connect', (_request: IncomingMessage, socket: Socket) => {
    writeRawError(socket, ERRORS.METHOD_NOT_ALLOWED.status, ERRORS.METHOD_NOT_ALLOWED.message);
  });

  // A callback hook, not an async one: it runs on every request (see server-limits.ts).
  app.addHook('onRequest', (request, _reply, done) => {
    done(ambiguity(request.raw, request.headers));
  });
}

/** Why the request is refused before routing, or undefined when it is not. */
function ambiguity(raw: IncomingMessage, headers: IncomingHttpHeaders): SimError | undefined {
  if (raw.httpVersion === '1.1' && headers.host === undefined) return new SimError('BAD_REQUEST', 'The Host header is required');
  const repeated = repeatedSingleton(raw.rawHeaders);
  if (repeated) return new SimError('BAD_REQUEST', `The ${repeated} header must not be given more than once`);
  const encoding = headers['content-encoding'];
  if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
    return new SimError('UNSUPPORTED_MEDIA_TYPE', 'Content-Encoding is not supported: send the body uncompressed');
  }
  return undefined;
}

/**
 * The name of the first field of `SINGLETON_FIELDS` that appears twice, as the client wrote it.
 * Runs on every request: no allocation, and each of the few singleton names present is looked for
 * again only further on (a request repeats one at most once before it is refused).
 */
function repeatedSingleton(rawHeaders: readonly string[]): string | undefined {
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (!SINGLETON_FIELDS.has(name.toLowerCase())) continue;
    for (let j = i + 2; j < rawHeaders.length; j += 2) {
      if (rawHeaders[j]!.length === name.length && rawHeaders[j]!.toLowerCase() === name.toLowerCase()) return rawHeaders[j];
    }
  }
  return undefined;
}
