/**
 * `/v1/auth/*` (interface sections 4 and 5). Bodies and answers where the interface is silent
 * follow DESIGN.md ("Choices where the interface leaves gaps"); docs/api.md lists them.
 */
import type { FastifyReply } from 'fastify';
import type { AuthService } from '../auth/auth-service.js';
import type { ApiInstance } from './api-instance.js';
import { CredentialsSchema, RefreshTokenBodySchema, SuccessSchema, TokenPairSchema } from './api-schemas.js';
import { authenticate } from './bearer-token.js';
import { BEARER_SECURITY, errorResponses } from './route-docs.js';

/** Token responses must not be stored by caches on the way (RFC 6749, section 5.1). */
function noStore(reply: FastifyReply): void {
  void reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
}

export function registerAuthRoutes(app: ApiInstance, auth: AuthService): void {
  app.post(
    '/v1/auth/login',
    {
      schema: {
        tags: ['auth'],
        operationId: 'login',
        summary: 'Log in with email and password',
        description:
          'Returns an access token (JWT with `exp`) and a refresh token. Wrong email or password: 401 "Invalid credentials". Too many failed logins from the client address or for the email: 429 with `Retry-After` (seconds), before the password is checked. Too many logins waiting for a password check: 503 with `Retry-After`.',
        security: [],
        body: CredentialsSchema,
        response: { 200: TokenPairSchema, ...errorResponses(400, 401, 413, 415, 429, 503) },
      },
    },
    async (request, reply) => {
      // request.ip is the socket's peer address: no proxy is trusted, so X-Forwarded-For cannot pick
      // the address a failure is counted against.
      const pair = await auth.login(request.body.email, request.body.password, request.ip, request.clientFacts);
      noStore(reply);
      return pair;
    },
  );

  app.post(
    '/v1/auth/refresh',
    {
      schema: {
        tags: ['auth'],
        operationId: 'refreshTokens',
        summary: 'Exchange a refresh token for a new token pair',
        description:
          'The refresh token is used up: the answer carries a new one (rotation). An unknown, used, revoked or expired refresh token gives 401 "Token is invalid"; log in again.',
        security: [],
        body: RefreshTokenBodySchema,
        response: { 200: TokenPairSchema, ...errorResponses(400, 401, 413, 415, 503) },
      },
    },
    async (request, reply) => {
      const pair = await auth.refresh(request.body.refreshToken, request.clientFacts);
      noStore(reply);
      return pair;
    },
  );

  app.post(
    '/v1/auth/revoke',
    {
      schema: {
        tags: ['auth'],
        operationId: 'revokeRefreshToken',
        summary: 'Invalidate a refresh token (logout)',
        description: 'Always answers `{"success":true}`, also for a token that is unknown or already invalid, so the answer reveals nothing about it. It ends the session of the token: the access tokens of the same login give 401 afterwards too (docs/api.md); other sessions stay.',
        security: [],
        body: RefreshTokenBodySchema,
        response: { 200: SuccessSchema, ...errorResponses(400, 413, 415, 503) },
      },
    },
    async (request) => {
      await auth.revoke(request.body.refreshToken, request.clientFacts);
      return { success: true as const };
    },
  );

  app.post(
    '/v1/auth/revoke-all',
    {
      schema: {
        tags: ['auth'],
        operationId: 'revokeAllSessions',
        summary: 'Invalidate every session of the account',
        description: 'Every access and refresh token of the account issued before this call gives 401 afterwards, including the access token of this request. No body.',
        security: BEARER_SECURITY,
        response: { 200: SuccessSchema, ...errorResponses(401, 413, 415, 503) },
      },
    },
    async (request) => {
      const account = await authenticate(auth, request);
      await auth.revokeAll(account.id);
      if (!request.logSampledOut) request.log.info({ account: account.id }, 'revoke-all');
      return { success: true as const };
    },
  );
}
