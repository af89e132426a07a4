/**
 * Logger settings of the API (issue: "Tokens, refresh tokens and passwords never appear in logs").
 * fastify logs one line per request and one per response. What goes in them is chosen here:
 * - the request line has method, path and client address only: no headers (so no Authorization),
 *   no body (so no password or refresh token), and no query string or fragment, because the API
 *   takes no query parameters and a client that wrongly puts a token there must not get it
 *   logged; of a target in absolute form (through a proxy), no scheme, host or userinfo either;
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

/**
 * The path of a request target, and nothing else: no query or fragment, and of an absolute-form
 * target (`http://user:password@host/path`, as sent through a proxy) no scheme, host or userinfo.
 * The userinfo runs to the last `@`, as in redact-url.ts: a password may hold `/` or `@`.
 */
function pathOnly(url: string): string {
  let path = url;
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(path);
  if (scheme) {
    const rest = path.slice(scheme[0].length);
    const host = rest.slice(rest.lastIndexOf('@') + 1);
    const start = host.search(/[/?#]/);
    path = start === -1 ? '/' : host.slice(start);
  }
  const end = path.search(/[?#]/);
  return end === -1 ? path : path.slice(0, end);
}
