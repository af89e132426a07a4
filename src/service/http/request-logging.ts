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

/** Where and how much the API logs. */
export interface ApiLoggerSettings {
  /** pino level. @default "info" */
  level?: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Destination of the JSON log lines; not with `file`. @default process.stdout */
  stream?: { write(line: string): void };
  /**
   * A file for the JSON log lines instead of `stream`, appended to, and rotated when it reaches
   * `maxFileBytes` (to `file.1`, `file.1` to `file.2`…, the oldest past `maxFiles` dropped), so it
   * takes at most about `maxFileBytes × (maxFiles + 1)` of disk. Its directory must exist.
   * @default none
   */
  file?: string;
  /** Size at which `file` is rotated, in bytes, at least 1024. @default 10485760 (10 MiB) */
  maxFileBytes?: number;
  /** Rotated files kept beside `file`, 1 to 100. @default 3 */
  maxFiles?: number;
  /**
   * Requests a second whose lines are logged; the lines of the others are dropped and counted in
   * one `request lines sampled` line a second. Lines at warn or above, 5xx answers and lines that
   * are not about a request are never dropped. 0 logs every request.
   * @default 100
   */
  maxRequestsPerSecond?: number;
}

/** `true` for the defaults, `false` for no log. */
export type ApiLoggerOption = boolean | ApiLoggerSettings;

export const DEFAULT_LOG_MAX_FILE_BYTES = 10 * 1024 * 1024;
export const DEFAULT_LOG_MAX_FILES = 3;
export const DEFAULT_LOG_MAX_REQUESTS_PER_SECOND = 100;
export const MIN_LOG_FILE_BYTES = 1024;
export const MAX_LOG_FILES = 100;

const LEVELS = new Set(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);
const SETTINGS = new Set(['level', 'stream', 'file', 'maxFileBytes', 'maxFiles', 'maxRequestsPerSecond']);

const isWholeIn = (value: unknown, min: number, max = Number.MAX_SAFE_INTEGER): boolean =>
  Number.isInteger(value) && (value as number) >= min && (value as number) <= max;

/** The bounds of the numeric settings, by which the CLI checks its `--log-…` flags too. */
export const LOGGER_LIMITS = {
  maxFileBytes: { ok: (value: unknown) => isWholeIn(value, MIN_LOG_FILE_BYTES), wants: `a whole number of at least ${MIN_LOG_FILE_BYTES}` },
  maxFiles: { ok: (value: unknown) => isWholeIn(value, 1, MAX_LOG_FILES), wants: `a whole number from 1 to ${MAX_LOG_FILES}` },
  maxRequestsPerSecond: { ok: (value: unknown) => isWholeIn(value, 0), wants: 'a whole number of at least 0 (0: no sampling)' },
} as const;

/** What is wrong with a `logger` option, in words, or undefined when nothing is. */
export function loggerOptionProblem(option: unknown): string | undefined {
  if (option === undefined || typeof option === 'boolean') return undefined;
  if (typeof option !== 'object' || option === null || Array.isArray(option)) return 'logger must be true, false or an object';
  const settings = option as Record<string, unknown>;
  const unknown = Object.keys(settings).find((key) => settings[key] !== undefined && !SETTINGS.has(key));
  if (unknown !== undefined) return `logger has no setting ${JSON.stringify(unknown)}; it takes ${[...SETTINGS].join(', ')}`;
  const { level, stream, file, maxFileBytes, maxFiles, maxRequestsPerSecond } = settings;
  if (level !== undefined && !LEVELS.has(level as string)) return `logger.level must be one of ${[...LEVELS].join(', ')}`;
  if (stream !== undefined && !hasWriteMethod(stream)) return 'logger.stream must have a write(line) method';
  if (file !== undefined && (typeof file !== 'string' || file === '')) return 'logger.file must be a file path';
  if (file !== undefined && stream !== undefined) return 'logger.file and logger.stream do not go together: the lines go to one or the other';
  if (maxFileBytes !== undefined && !LOGGER_LIMITS.maxFileBytes.ok(maxFileBytes)) return `logger.maxFileBytes must be ${LOGGER_LIMITS.maxFileBytes.wants}`;
  if (maxFiles !== undefined && !LOGGER_LIMITS.maxFiles.ok(maxFiles)) return `logger.maxFiles must be ${LOGGER_LIMITS.maxFiles.wants}`;
  if (file === undefined && (maxFileBytes !== undefined || maxFiles !== undefined)) return 'logger.maxFileBytes and logger.maxFiles are about logger.file, which is not set';
  if (maxRequestsPerSecond !== undefined && !LOGGER_LIMITS.maxRequestsPerSecond.ok(maxRequestsPerSecond)) return `logger.maxRequestsPerSecond must be ${LOGGER_LIMITS.maxRequestsPerSecond.wants}`;
  return undefined;
}

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

function hasWriteMethod(value: unknown): boolean {
  return typeof (value as { write?: unknown } | null | undefined)?.write === 'function';
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
