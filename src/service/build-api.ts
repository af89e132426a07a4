/**
 * Builds the `/v1` API (spec/service-interface.md) as a fastify instance that is not listening yet,
 * so tests can `inject()` requests and `startApi` can listen (STYLE.md: "keep factories apart from
 * listening"). Stations are reached only through the injected `StationGateway`.
 */
import Fastify from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Fixture } from '../fixture/fixture-schema.js';
import { AuthService, checkLifetimes } from './auth/auth-service.js';
import { resolveJwtSecret } from './auth/jwt-secret.js';
import { MemorySessionStore } from './auth/memory-session-store.js';
import type { SessionStore } from './auth/session-store.js';
import type { StationGateway } from './station-gateway.js';
import { systemServiceClock, type ServiceClock } from './service-clock.js';
import type { ApiInstance } from './http/api-instance.js';
import { installJsonBodyParser } from './http/json-body-parser.js';
import { clientErrorHandler, frameworkErrorHandler, installErrorHandling } from './http/error-handling.js';
import { installRequestRules } from './http/request-rules.js';
import { installServerLimits, serverOptions, type HttpLimits } from './http/server-limits.js';
import { openRequestLogging } from './http/request-logging.js';
import type { ApiLoggerOption } from './http/logger-settings.js';
import { registerOpenApi, registerOpenApiRoute } from './http/openapi.js';
import { registerAuthRoutes } from './http/auth-routes.js';
import { registerStationRoutes } from './http/station-routes.js';
import { registerWebhookRoutes } from './http/webhook-routes.js';
import { installClientJudging } from './http/client-judging.js';
import type { JudgeFinding } from '../judge/judge-log.js';
import type { ClientObservation } from '../judge/client-judge.js';

export type { ApiInstance } from './http/api-instance.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the unlock route once its command is published. */
    commandId?: string;
    /**
     * What the request came to, for request summaries: the error code of an error answer, or
     * `accepted` or the failure of an unlock answered 200 (unlock-outcome.ts).
     */
    outcome?: string;
  }
  interface FastifyInstance {
    /**
     * Every `/v1` route as `METHOD /v1/pattern`, the method and pattern that request summaries show
     * (`POST /v1/auth/refresh`): what the control plane's API faults may name.
     */
    readonly apiRoutes: readonly string[];
  }
}
export type { ApiLoggerOption, ApiLoggerSettings } from './http/logger-settings.js';

/** Largest accepted request body. The biggest legitimate body, a login, is well under 2 KiB. */
export const DEFAULT_BODY_LIMIT_BYTES = 16 * 1024;

export interface BuildApiOptions {
  /** Accounts (with their station lists) and token lifetimes. */
  fixture: Fixture;
  /** How the API reaches stations: `startMqttGateway(...)`, or a fake in tests. */
  gateway: StationGateway;
  /** Time of token issue and expiry. @default real time */
  clock?: ServiceClock;
  /**
   * HMAC key of access tokens, at least 32 bytes.
   * @default env.STATION_SIM_JWT_SECRET, else 32 random bytes per build
   */
  jwtSecret?: string;
  /** Where `STATION_SIM_JWT_SECRET` is read from. @default process.env */
  env?: Readonly<Record<string, string | undefined>>;
  /**
   * Request logging (pino, JSON lines). Never logs headers, bodies or query strings. Request lines
   * are sampled under load, and a log file is rotated (ApiLoggerSettings); `app.close()` writes the
   * last sampling summary and closes the file.
   * @default false
   */
  logger?: ApiLoggerOption;
  /** Access token lifetime (interface section 5.4). @default fixture.api.accessTokenTtlSeconds (3600) */
  accessTokenTtlSeconds?: number;
  /** Refresh token lifetime (interface section 5.4). @default fixture.api.refreshTokenTtlSeconds (2592000) */
  refreshTokenTtlSeconds?: number;
  /**
   * Absolute lifetime of a session from its login, however often it is refreshed; at least the
   * refresh token lifetime. @default fixture.api.sessionMaxLifetimeSeconds (7776000, 90 days)
   */
  sessionMaxLifetimeSeconds?: number;
  /**
   * Where refresh tokens, token families and revocations live: a Redis URL
   * (`redis://[:password@]host:port[/db]`, `rediss://` for TLS), shared by every API process
   * given the same URL and kept across restarts. `app.close()` closes its connections.
   * @default fixture.api.state, else the memory of this process
   */
  state?: string;
  /** Prefix of the session store's Redis keys and channel. @default "station-sim:" */
  stateKeyPrefix?: string;
  /**
   * Told, in one line, when the Redis session store's connection is lost and when it is back.
   * @default a warning in the request log
   */
  onSessionStoreNotice?: (message: string) => void;
  /** Larger bodies get 413. @default 16384 */
  bodyLimitBytes?: number;
  /** Request and headers timeouts, connections per client and in all. @default fixture.api.limits */
  limits?: Partial<HttpLimits>;
  /**
   * false turns login throttling off (load tests that flood logins on purpose); true keeps it on
   * with the fixture's limits. The bound on password checks running at once stays either way.
   * @default fixture.api.loginThrottle.enabled (true)
   */
  loginThrottle?: boolean;
  /**
   * Told each finding of the client rules (docs/judge.md) as the API answers requests; the
   * fixture's `judge` section sets the rules and thresholds. Without it, or with
   * `judge.enabled: false`, no request is judged and the judge's hooks are not installed.
   * @default requests are not judged
   */
  onJudgeFinding?: (finding: JudgeFinding) => void;
  /** Registers a listener the simulator calls on each reset (`POST /sim/v1/reset`): the client judge forgets per-test state. */
  onReset?: (listener: () => void) => void;
  /** Told each `/v1` request as the client judge saw it (src/judge/client-judge.ts `ClientObservation`). */
  onClientObservation?: (observation: ClientObservation) => void;
}

export async function buildApi(options: BuildApiOptions): Promise<ApiInstance> {
  const clock = options.clock ?? systemServiceClock();
  const lifetimes = {
    accessTokenTtlSeconds: options.accessTokenTtlSeconds ?? options.fixture.api.accessTokenTtlSeconds,
    refreshTokenTtlSeconds: options.refreshTokenTtlSeconds ?? options.fixture.api.refreshTokenTtlSeconds,
    sessionMaxLifetimeSeconds: options.sessionMaxLifetimeSeconds ?? options.fixture.api.sessionMaxLifetimeSeconds,
  };
  // Checked before anything connects, so a bad setting does not leave a Redis connection behind.
  checkLifetimes(lifetimes);
  const secret = resolveJwtSecret(options.jwtSecret, options.env ?? process.env);
  const limits: HttpLimits = { ...options.fixture.api.limits, ...options.limits };

  // A log file that cannot be opened fails the build here, with nothing to undo before it.
  const logging = await openRequestLogging(options.logger);
  let app: ApiInstance;
  try {
    app = Fastify({
      ...serverOptions(limits),
      ...logging.fastifyOptions,
      bodyLimit: options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES,
      // Station tokens may be 128 characters (fixture schema); fastify's default limit is 100.
      routerOptions: { maxParamLength: 256 },
      ajv: {
        // Reject what the schema does not allow instead of quietly fixing it: no stripping of
        // unknown fields (additionalProperties: false means 400) and no "123" for 123.
        customOptions: { removeAdditional: false, coerceTypes: false, allErrors: false },
      },
      frameworkErrors: frameworkErrorHandler,
      clientErrorHandler,
    }).withTypeProvider<TypeBoxTypeProvider>();
  } catch (error) {
    await logging.stop();
    throw error;
  }
  logging.start(app.log);
  // From here on, closing the app closes the log (and, once added, the session store).
  app.addHook('onClose', () => logging.stop());

  try {
    const store = await openSessionStore(options, clock, lifetimes, app);
    let auth: AuthService;
    try {
      auth = await AuthService.create({
        accounts: options.fixture.accounts,
        secret,
        ...lifetimes,
        store,
        clock,
        loginThrottle: { ...options.fixture.api.loginThrottle, enabled: options.loginThrottle ?? options.fixture.api.loginThrottle.enabled },
        passwordHashing: options.fixture.api.passwordHashing,
        onReuse: (account) => app.log.warn({ account }, 'a rotated refresh token was used again: its session is revoked'),
      });
    } catch (error) {
      await store.close();
      throw error;
    }
    app.addHook('onClose', () => auth.close());
    if (options.onJudgeFinding && options.fixture.judge.enabled !== false) {
      // Before every other hook, so each request is numbered before anything can answer it.
      installClientJudging(app, {
        settings: options.fixture.judge,
        clock,
        stations: options.fixture.stations,
        onFinding: options.onJudgeFinding,
        ...(options.onClientObservation ? { onObservation: options.onClientObservation } : {}),
        ...(options.onReset ? { onReset: options.onReset } : {}),
      });
    }
    await registerRoutes(app, auth, options.gateway, limits);
  } catch (error) {
    await app.close();
    throw error;
  }
  return app;
}

/** Everything the app serves, on the app that the session store belongs to. */
async function registerRoutes(app: ApiInstance, auth: AuthService, gateway: StationGateway, limits: HttpLimits): Promise<void> {
  // The command id of an unlock, for request summaries (the event stream and transcripts).
  app.decorateRequest('commandId', undefined);
  app.decorateRequest('outcome', undefined);
  // Set by request sampling (request-sampler.ts); declared here so requests keep one shape.
  app.decorateRequest('logSampledOut', false);
  const routes: string[] = [];
  app.decorate('apiRoutes', routes);
  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith('/v1/')) return;
    for (const method of [route.method].flat()) if (!routes.includes(`${method} ${route.url}`)) routes.push(`${method} ${route.url}`);
  });
  installServerLimits(app, limits);
  installRequestRules(app);
  installJsonBodyParser(app);
  installErrorHandling(app);
  await registerOpenApi(app);
  registerAuthRoutes(app, auth);
  registerStationRoutes(app, auth, gateway);
  registerWebhookRoutes(app);
  registerOpenApiRoute(app);
}

/** The session store the options name: Redis for a `state` URL, else this process's memory. */
async function openSessionStore(
  options: BuildApiOptions,
  clock: ServiceClock,
  lifetimes: { accessTokenTtlSeconds: number; sessionMaxLifetimeSeconds: number },
  app: ApiInstance,
): Promise<SessionStore> {
  const url = options.state ?? options.fixture.api.state;
  if (url === undefined) return new MemorySessionStore({ clock });
  const log = app.log.child({ component: 'session-store' });
  const notice = options.onSessionStoreNotice ?? ((message: string) => log.warn(message));
  // Loaded only when asked for: the Redis client costs every start-up otherwise.
  const { connectRedisSessionStore } = await import('./auth/redis-session-store.js');
  return connectRedisSessionStore({
    url,
    clock,
    // A token issued before a revoke-all lives at most one session plus its last access token.
    generationRetentionMs: (lifetimes.sessionMaxLifetimeSeconds + lifetimes.accessTokenTtlSeconds) * 1000,
    ...(options.stateKeyPrefix === undefined ? {} : { keyPrefix: options.stateKeyPrefix }),
    onNotice: notice,
  });
}
