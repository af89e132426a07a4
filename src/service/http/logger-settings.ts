/**
 * The API logger's settings and the rules that check them, apart from the logging itself
 * (request-logging.ts): the CLI checks its `--log-…` flags and startSimulator its `logger` option
 * by these, without loading fastify.
 */

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

function hasWriteMethod(value: unknown): boolean {
  return typeof (value as { write?: unknown } | null | undefined)?.write === 'function';
}
