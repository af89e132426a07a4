/**
 * The judge of the client (docs/judge.md, client rules), on every `/v1` request: hooks that number
 * requests as they arrive, note how many had arrived when each answer goes out, and, once it has
 * gone, hand the judge a plain `ClientObservation` of it (src/judge/client-judge.ts). The routes and
 * the auth service fill in what only they know (`request.clientFacts`: the account, what a refresh
 * found, the station's status an answer showed). The judge never changes an answer.
 *
 * Tokens stay here: the judge gets a keyed hash of the access token (HMAC-SHA-256 under a key made
 * for this app and never shown, cut to 96 bits), enough to link the requests that carried the same
 * token and useless for recovering it. It is not put in any finding.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { JudgeSettings } from '../../fixture/judge-schema.js';
import type { JudgeFinding } from '../../judge/judge-log.js';
import { ClientJudge, type ClientObservation, type QueryToken } from '../../judge/client-judge.js';
import type { AuthFacts } from '../auth/auth-service.js';
import type { ServiceClock } from '../service-clock.js';
import type { ApiInstance } from './api-instance.js';
import { bearerToken } from './bearer-token.js';
import { routeTarget } from './route-target.js';

/** What the API learns of a request for the judge while it answers it. */
export interface ClientFacts extends AuthFacts {
  /** The request's number in order of arrival. */
  arrival: number;
  /** How many requests had arrived when its answer went out. */
  arrivalsAtAnswer?: number;
  /** When it arrived, on the API's clock. */
  receivedAt: number;
  /** The station's status the answer showed. */
  stationStatus?: string;
  /**
   * The bearer token as `authenticate` read it (undefined: none, or not well-formed), so the judge
   * does not read the header a second time; null when no route read it. Held only while the
   * request is answered: the judge is given its keyed hash.
   */
  bearer: string | undefined | null;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set on every request while the judge of the client is on; undefined otherwise. */
    clientFacts?: ClientFacts;
  }
}

export interface ClientJudgingOptions {
  settings: JudgeSettings;
  clock: ServiceClock;
  onFinding: (finding: JudgeFinding) => void;
  /** The fixture's stations: a route value longer than 32 characters is told only when it names one (below). */
  stations: readonly { token: string; locks: readonly { lockId: string }[] }[];
  /** Calls its listener on each reset of the simulator (`POST /sim/v1/reset`): the judge then forgets per-test state. */
  onReset?: (listener: () => void) => void;
  /** Told each request as the judge saw it, after it judged it (a transcript records them for `transcript judge`). */
  onObservation?: (observation: ClientObservation) => void;
}

/** Adds the judge's hooks: first, so every request is numbered before any other hook can answer it. */
export function installClientJudging(app: ApiInstance, options: ClientJudgingOptions): ClientJudge {
  const judge = new ClientJudge({ settings: options.settings, onFinding: options.onFinding });
  const stations = new Map(options.stations.map((station) => [station.token, station]));
  const stationOf = (token: string) => stations.get(token);
  options.onReset?.(() => judge.forgetAfterReset());
  const fingerprint = fingerprints(randomBytes(32));
  // Made once: what observe() looks things up in for every request.
  const context: ObserveContext = { clock: options.clock, fingerprint, stationOf };
  let arrivals = 0;
  app.decorateRequest('clientFacts', undefined);
  // Callback hooks, not async ones: they run on every request.
  app.addHook('onRequest', (request, _reply, done) => {
    arrivals += 1;
    request.clientFacts = { arrival: arrivals, receivedAt: options.clock.now(), bearer: null };
    done();
  });
  app.addHook('onSend', (request, _reply, payload, done) => {
    if (request.clientFacts) request.clientFacts.arrivalsAtAnswer = arrivals;
    done(null, payload);
  });
  app.addHook('onResponse', (request, reply, done) => {
    const observation = observe(request, reply.statusCode, arrivals, context);
    if (observation) {
      judge.observe(observation);
      options.onObservation?.(observation);
    }
    done();
  });
  return judge;
}

/**
 * Keyed hashes of access tokens, the recent ones remembered: a client sends the same token on
 * every request until it refreshes, and an HMAC per request was a tenth of an unlock's CPU. The
 * memory holds the tokens themselves, as the auth service does; it is dropped whole when full.
 */
const REMEMBERED_FINGERPRINTS = 4096;

function fingerprints(key: Buffer): (token: string) => string {
  const known = new Map<string, string>();
  return (token) => {
    let print = known.get(token);
    if (print === undefined) {
      print = createHmac('sha256', key).update(token).digest('base64url').slice(0, 16);
      if (known.size >= REMEMBERED_FINGERPRINTS) known.clear();
      known.set(token, print);
    }
    return print;
  };
}

/** What observe() needs besides the request: the clock, the token hashing and the fixture's stations. */
interface ObserveContext {
  clock: ServiceClock;
  fingerprint: (token: string) => string;
  stationOf: (token: string) => ClientJudgingOptions['stations'][number] | undefined;
}

/** The request as the judge sees it; undefined for the control plane's requests, which it does not judge. */
function observe(request: FastifyRequest, status: number, arrivals: number, { clock, fingerprint, stationOf }: ObserveContext): ClientObservation | undefined {
  const now = clock.now();
  const route = request.routeOptions.url;
  if (route === undefined ? request.url.startsWith('/sim/') : route.startsWith('/sim/')) return undefined;
  const facts: ClientFacts = request.clientFacts ?? { arrival: arrivals, receivedAt: now, bearer: null };
  const token = facts.bearer === null ? bearerToken(request.headers.authorization) : facts.bearer;
  const queryToken = tokenInQuery(request.url);
  const { token: station, lockId } = routeTarget(request.params, stationOf);
  // Built field by field, not by spreading conditionals: this runs once per request.
  const observation: ClientObservation = {
    time: now,
    requestId: request.id,
    arrival: facts.arrival,
    arrivalsAtAnswer: facts.arrivalsAtAnswer ?? arrivals,
    receivedAt: facts.receivedAt,
    method: request.method,
    status,
    client: request.ip,
  };
  if (route !== undefined) observation.route = route;
  if (facts.account !== undefined) observation.account = facts.account;
  if (token !== undefined) observation.accessToken = fingerprint(token);
  if (facts.refreshToken !== undefined) observation.refreshToken = facts.refreshToken;
  if (queryToken !== undefined) observation.queryToken = queryToken;
  if (station !== undefined) observation.station = station;
  if (lockId !== undefined) observation.lockId = lockId;
  if (facts.stationStatus !== undefined) observation.stationStatus = facts.stationStatus;
  return observation;
}

/** Query parameter names that say "a token" (RFC 6750, section 2.3 names `access_token`). */
const TOKEN_PARAMETER = /^(access[_-]?token|refresh[_-]?token|id[_-]?token|token|jwt|bearer|auth|authorization|password|passwd|pwd|pass|secret|client[_-]?secret)$/i;
/** A value written as an Authorization header would be: `Bearer <token>`. */
const BEARER_SHAPE = /^bearer\s+\S{8,}/i;
/** A JWS in compact form: its header is base64url JSON, so it starts with `eyJ`. */
const JWT_SHAPE = /^eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;
/** A refresh token of this API: 32 random bytes in base64url (refresh-tokens.ts). */
const REFRESH_SHAPE = /^[A-Za-z0-9_-]{43}$/;
/** Parameters looked at, at most: a query string is whatever the client sent. */
const MAX_PARAMETERS = 32;

/** Where a token shows in the URL's query string, if one does. The `/v1` API takes no query parameters at all. */
export function tokenInQuery(url: string): QueryToken | undefined {
  const start = url.indexOf('?');
  if (start === -1 || start === url.length - 1) return undefined;
  let seen = 0;
  let shape: QueryToken | undefined;
  for (const [name, value] of new URLSearchParams(url.slice(start + 1))) {
    if (TOKEN_PARAMETER.test(name)) return { parameter: name };
    if (!shape && BEARER_SHAPE.test(value)) shape = { shape: 'bearer' };
    else if (!shape && JWT_SHAPE.test(value)) shape = { shape: 'jwt' };
    else if (!shape && REFRESH_SHAPE.test(value)) shape = { shape: 'refresh-token' };
    seen += 1;
    if (seen >= MAX_PARAMETERS) break;
  }
  return shape;
}
