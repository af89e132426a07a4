/**
 * The minimal logger the gateway needs. pino's and fastify's loggers (`app.log`) and `console` all
 * fit it, so callers pass whichever they have. Messages never carry tokens or passwords.
 */
export interface ServiceLogger {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/** A logger that drops everything; the default when none is injected. */
export function silentLogger(): ServiceLogger {
  const drop = (): void => {};
  return { debug: drop, info: drop, warn: drop, error: drop };
}
