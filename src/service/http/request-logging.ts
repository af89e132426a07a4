/**
 * Logger settings of the API (issue: "Tokens, refresh tokens and passwords never appear in logs").
 * fastify logs one line per request and one per response. What goes in them is chosen here:
 * - the request line has method, path and client address only: no headers (so no Authorization),
 *   no body (so no password or refresh token), and no query string, because the API takes no
 *   query parameters and a client that wrongly puts a token there must not get it logged;
 * - redaction covers the same fields again, in case some other code logs a request or body.
 * Station tokens in paths do appear: they identify hardware and are not credentials.
 */
import type { FastifyServerOptions } from 'fastify';

/** Where and how much the API logs. */
export type ApiLoggerOption =
  | boolean
  | {
      /** pino level. @default "info" */
      level?: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
      /** Destination of the JSON log lines. @default process.stdout */
      stream?: { write(line: string): void };
    };

const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'err.rawPacket',
  'req.body',
  'body',
  'password',
  'accessToken',
  'refreshToken',
  '*.password',
  '*.accessToken',
  '*.refreshToken',
];

interface LoggedRequest {
  method: string;
  url: string;
  ip?: string;
}

export function loggerSettings(option: ApiLoggerOption | undefined): FastifyServerOptions['logger'] {
  if (option === undefined || option === false) return false;
  const chosen = option === true ? {} : option;
  return {
    level: chosen.level ?? 'info',
    ...(chosen.stream ? { stream: chosen.stream } : {}),
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    serializers: {
      req: (request: LoggedRequest) => ({ method: request.method, url: pathOnly(request.url), remoteAddress: request.ip }),
    },
  };
}

function pathOnly(url: string): string {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}
