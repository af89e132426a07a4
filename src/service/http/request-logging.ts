/**
 * Logger settings of the API (issue: "Tokens, refresh tokens and passwords never appear in logs").
 * fastify logs one line per request and one per response. What goes in them is chosen here:
 * - the request line has method, path and client address only: no headers (so no Authorization),
 *   no body (so no password or refresh token), and no query string or fragment, because the API
 *   takes no query parameters and a client that wrongly puts a token there must not get it
 *   logged; of a target in absolute form (through a proxy), no scheme, host or userinfo either;
 * - redaction covers the same fields again, in case some other code logs a request or body.
 * Station tokens in paths do appear: they identify hardware and are not credentials.
 *
 * How much is logged is bounded too: request lines are sampled
 * under load (request-sampler.ts), and a log file is capped in size and rotated (log-file.ts).
 */
import type { FastifyServerOptions } from 'fastify';
import { SimError } from '../../errors.js';
import { openLogFile, type LogFile } from './log-file.js';
import { RequestSampler } from './request-sampler.js';
import {
  DEFAULT_LOG_MAX_FILE_BYTES,
  DEFAULT_LOG_MAX_FILES,
  DEFAULT_LOG_MAX_REQUESTS_PER_SECOND,
  loggerOptionProblem,
  type ApiLoggerOption,
  type ApiLoggerSettings,
} from './logger-settings.js';

/**
 * The settings with their `file` opened as their `stream`, and what closes it; `onNotice` hears of
 * a file that cannot be written any more (log-file.ts). startSimulator opens the file this way
 * before anything else starts (a path that cannot be opened fails at once, not after the fleet is
 * up) and closes it after everything else has stopped (the gateway's last lines included);
 * buildApi, given a file, opens it itself and closes it with the app.
 */
export async function openLogFileOf(
  settings: ApiLoggerSettings,
  onNotice?: (message: string) => void,
): Promise<{ option: Omit<ApiLoggerSettings, 'file' | 'maxFileBytes' | 'maxFiles'>; close: () => Promise<void> }> {
  const { file, maxFileBytes, maxFiles, ...rest } = settings;
  if (file === undefined) return { option: rest, close: async () => {} };
  const opened: LogFile = await openLogFile({
    path: file,
    maxBytes: maxFileBytes ?? DEFAULT_LOG_MAX_FILE_BYTES,
    keep: maxFiles ?? DEFAULT_LOG_MAX_FILES,
    ...(onNotice ? { onNotice } : {}),
  });
  return { option: { ...rest, stream: opened }, close: () => opened.close() };
}

/** The API's logging, ready: the fastify options, and what to start once the app exists and to stop with it. */
export interface RequestLogging {
  readonly fastifyOptions: Pick<FastifyServerOptions, 'logger' | 'logController'>;
  /** Starts the sampling windows on the app's logger. */
  start(log: Parameters<RequestSampler['start']>[0]): void;
  /** Writes the last sampling summary, then flushes and closes the log file, if any. */
  stop(): Promise<void>;
}

/**
 * Checks the `logger` option and opens its file: a file that cannot be opened (no such directory,
 * a directory, no permission) is a `BAD_REQUEST` naming the path and why, before anything starts.
 */
export async function openRequestLogging(option: ApiLoggerOption | undefined): Promise<RequestLogging> {
  const problem = loggerOptionProblem(option);
  if (problem) throw new SimError('BAD_REQUEST', problem);
  if (option === undefined || option === false) return { fastifyOptions: { logger: false }, start: () => {}, stop: async () => {} };
  const { option: chosen, close } = await openLogFileOf(option === true ? {} : option);
  const stream = chosen.stream;
  const sampler = new RequestSampler(chosen.maxRequestsPerSecond ?? DEFAULT_LOG_MAX_REQUESTS_PER_SECOND);
  return {
    fastifyOptions: {
      logger: {
        level: chosen.level ?? 'info',
        ...(stream ? { stream } : {}),
        redact: { paths: REDACT_PATHS, censor: '[redacted]' },
        serializers: {
          req: (request: LoggedRequest) => ({ method: request.method, url: pathOnly(request.url), remoteAddress: request.ip }),
        },
      },
      logController: sampler,
    },
    start: (log) => sampler.start(log),
    stop: async () => {
      sampler.stop();
      await close();
    },
  };
}

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
