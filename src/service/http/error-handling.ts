/**
 * The one place where errors become HTTP responses (STYLE.md: "catch and translate errors at
 * boundaries only"). Every error is `{ message }` (interface section 7) with a status and message
 * from the catalogue in `src/errors.ts`; anything unexpected is a 500 whose body says nothing
 * about the cause, which goes to the log instead.
 */
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ERRORS, RetryLaterError, SimError, type ErrorCode } from '../../errors.js';
import type { ApiInstance } from './api-instance.js';
import { presentedBearerCredentials } from './bearer-token.js';
import { answered, writeRawError } from './server-limits.js';

/** A validation failure as fastify reports it (ajv's error objects). */
interface ValidationIssue {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
}

/** fastify's errors for bodies it could not read, by code. */
const FASTIFY_CODES: Record<string, { code: ErrorCode; message?: string }> = {
  FST_ERR_CTP_BODY_TOO_LARGE: { code: 'PAYLOAD_TOO_LARGE' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { code: 'UNSUPPORTED_MEDIA_TYPE' },
  FST_ERR_CTP_INVALID_JSON_BODY: { code: 'BAD_REQUEST', message: 'Request body is not valid JSON' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { code: 'BAD_REQUEST', message: 'Request body is empty' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { code: 'BAD_REQUEST', message: 'Content-Length does not match the body' },
  FST_ERR_BAD_URL: { code: 'BAD_REQUEST', message: 'Malformed URL' },
};

/**
 * RFC 6750, section 3: every 401 says which scheme to use (RFC 9110 requires a challenge on a 401)
 * and, when the request presented a bearer token that was refused, why.
 */
const CHALLENGE = 'Bearer realm="station-sim"';
const INVALID_TOKEN_CHALLENGE = `${CHALLENGE}, error="invalid_token"`;

/** The control plane's token is another credential of its own realm (docs/control-plane.md). */
const CONTROL_CHALLENGE = 'Bearer realm="station-sim control plane"';

function challengeFor(code: ErrorCode, request: FastifyRequest): string | undefined {
  if (code === 'TOKEN_INVALID') return presentedBearerCredentials(request) ? INVALID_TOKEN_CHALLENGE : CHALLENGE;
  if (code === 'INVALID_CREDENTIALS') return CHALLENGE;
  if (code === 'CONTROL_TOKEN_INVALID') return CONTROL_CHALLENGE;
  return undefined;
}

export interface HttpError {
  status: number;
  message: string;
  code: ErrorCode;
  /** Whole seconds for `Retry-After` (RFC 9110 section 10.2.3). */
  retryAfterSeconds?: number;
}

/** Translates anything thrown by a route, hook or fastify itself. */
export function toHttpError(error: unknown): HttpError {
  if (error instanceof RetryLaterError) return { status: error.statusCode, message: error.message, code: error.code, retryAfterSeconds: error.retryAfterSeconds };
  if (error instanceof SimError) return { status: error.statusCode, message: error.message, code: error.code };
  const fastifyError = error as Partial<FastifyError> & { validation?: ValidationIssue[]; validationContext?: string };
  if (Array.isArray(fastifyError.validation) && fastifyError.validation.length > 0) {
    return { status: 400, message: describeValidation(fastifyError.validation[0]!, fastifyError.validationContext ?? 'body'), code: 'BAD_REQUEST' };
  }
  const known = fastifyError.code === undefined ? undefined : FASTIFY_CODES[fastifyError.code];
  if (known) return { status: ERRORS[known.code].status, message: known.message ?? ERRORS[known.code].message, code: known.code };
  // Any other client error fastify raises keeps its status, with a generic message: its own text
  // may describe internals.
  const status = fastifyError.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) return { status, message: ERRORS.BAD_REQUEST.message, code: 'BAD_REQUEST' };
  return { status: 500, message: ERRORS.INTERNAL.message, code: 'INTERNAL' };
}

/**
 * One sentence that names the field at fault. fastify stops at the first error (ajv `allErrors`
 * off, so a hostile body cannot make validation expensive), so there is one issue to describe.
 */
export function describeValidation(issue: ValidationIssue, where: string): string {
  const path = issue.instancePath.split('/').slice(1).join('.');
  const field = (name: unknown): string => [path, String(name)].filter((part) => part !== '').join('.');
  switch (issue.keyword) {
    case 'required':
      return `${field(issue.params.missingProperty)} is required`;
    case 'additionalProperties':
      return `${field(issue.params.additionalProperty)} is not an allowed field`;
    case 'type': {
      const type = String(issue.params.type);
      if (path === '') return `Request ${where} must be a JSON ${type}`;
      return `${path} must be ${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type}`;
    }
    case 'enum':
      return `${path === '' ? `Request ${where}` : path} must be one of ${(issue.params.allowedValues as unknown[]).map(String).join(', ')}`;
    default:
      return `${path === '' ? `Request ${where}` : path} ${issue.message ?? 'is invalid'}`;
  }
}

function send(request: FastifyRequest, reply: FastifyReply, error: HttpError): void {
  request.outcome = error.code;
  const challenge = challengeFor(error.code, request);
  if (challenge) void reply.header('www-authenticate', challenge);
  if (error.retryAfterSeconds !== undefined) void reply.header('retry-after', String(error.retryAfterSeconds));
  // RFC 9110, section 15.5.22: a 426 names the protocol to upgrade to.
  if (error.code === 'UPGRADE_REQUIRED') void reply.header('upgrade', 'websocket');
  void reply.code(error.status).type('application/json; charset=utf-8').send({ message: error.message });
}

export function installErrorHandling(app: ApiInstance): void {
  app.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const translated = toHttpError(error);
    // Only unexpected failures are logged with their error. 4xx (and the webhooks' 501) are the
    // client's business and are visible in the access log line with their status; their errors
    // carry nothing worth keeping, and anyone could flood the log with them.
    if (translated.code === 'INTERNAL') request.log.error({ err: error }, 'request failed');
    send(request, reply, translated);
  });
  app.setNotFoundHandler((request, reply) => {
    send(request, reply, { status: 404, message: ERRORS.ROUTE_NOT_FOUND.message, code: 'ROUTE_NOT_FOUND' });
  });
}

/**
 * fastify's `frameworkErrors` option: errors raised before routing (a malformed URL, for one),
 * which would otherwise get fastify's own body shape.
 */
export function frameworkErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  send(request, reply, toHttpError(error));
}

/**
 * fastify's `clientErrorHandler`: a request Node's HTTP parser refuses (a malformed header line,
 * headers over the size limit, a request too slow to arrive) is answered here, with the API's one
 * error shape. fastify's default answers with its own three-field body and logs the error, whose
 * `rawPacket` holds the request's raw bytes: an Authorization header, or a login body's password.
 * Nothing is logged here.
 */
export function clientErrorHandler(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (socket.destroyed || !socket.writable) return;
  // A request timeout while the body of an answered request is drained: its answer is out already.
  if (answered.has(socket as Socket)) {
    socket.destroy();
    return;
  }
  const code: ErrorCode = error.code === 'HPE_HEADER_OVERFLOW' ? 'HEADERS_TOO_LARGE' : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 'REQUEST_TIMEOUT' : 'BAD_REQUEST';
  writeRawError(socket, ERRORS[code].status, ERRORS[code].message);
}
