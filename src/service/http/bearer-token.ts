/**
 * Reads `Authorization: Bearer <token>` (interface section 5.3; RFC 6750, section 2.1: the scheme is
 * case-insensitive, the token is token68). Tokens are accepted only in this header, never in a
 * query string or body, so they stay out of URLs and access logs (interface section 5.9).
 */
import type { FastifyRequest } from 'fastify';
import type { Account, AuthService } from '../auth/auth-service.js';

const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/** The bearer token, or undefined when the header is missing or not a well-formed bearer credential. */
export function bearerToken(authorization: string | undefined): string | undefined {
  if (authorization === undefined) return undefined;
  return BEARER.exec(authorization)?.[1];
}

/** Requests to a bearer-protected route that presented Bearer credentials, for the 401's challenge. */
const presentedBearer = new WeakSet<FastifyRequest>();

/** The account behind the request's bearer token; throws `TOKEN_INVALID` (401) otherwise. */
export function authenticate(auth: AuthService, request: FastifyRequest): Promise<Account> {
  const { authorization } = request.headers;
  if (authorization !== undefined && /^bearer\b/i.test(authorization)) presentedBearer.add(request);
  const token = bearerToken(authorization);
  // Read once: the judge of the client, when on, links requests by this token (client-judging.ts).
  if (request.clientFacts) request.clientFacts.bearer = token;
  return auth.authenticate(token, request.clientFacts);
}

/**
 * Whether a 401 for this request answers Bearer credentials it presented, so the challenge may say
 * `error="invalid_token"`. RFC 6750, section 3.1: a request that lacks authentication information
 * (no header, another scheme, or a refresh token in a body, which is not bearer authentication)
 * gets the bare challenge without an error code.
 */
export function presentedBearerCredentials(request: FastifyRequest): boolean {
  return presentedBearer.has(request);
}
