/**
 * The reference client against the real HTTP server (fastify listening on a free port), with a
 * fake station gateway behind it and injected clocks, so token expiry needs no sleeping.
 */
import { afterEach, describe, expect, test } from 'vitest';
import { decodeJwt } from 'jose';
import { buildApi } from '../../src/service/build-api.js';
import type { ApiInstance } from '../../src/service/http/api-instance.js';
import { ApiError, ApiUnreachableError, createClient, type StationSimClient, type StationSimClientOptions } from '../../src/client/index.js';
import { freePort } from '../helpers/free-port.js';
import { FakeGateway } from '../helpers/fake-gateway.js';
import { ManualClock } from '../../src/shared/clock.js';
import { ALICE, testFixture } from '../helpers/test-fixture.js';

interface Exchange {
  method: string;
  path: string;
  status: number;
  requestBody?: string;
  responseBody: string;
  authorization?: string;
}

interface Harness {
  url: string;
  app: ApiInstance;
  gateway: FakeGateway;
  serverClock: ManualClock;
  clientClock: ManualClock;
  exchanges: Exchange[];
  /** The paths called, e.g. "POST /v1/auth/login 200". */
  calls(): string[];
  client(options?: Partial<StationSimClientOptions>): StationSimClient;
  /** Every token the server handed out or a client sent. */
  tokens(): string[];
}

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.app.close();
  harness = undefined;
});

async function start(api: { accessTokenTtlSeconds?: number; refreshTokenTtlSeconds?: number } = {}): Promise<Harness> {
  const fixture = testFixture({ accessTokenTtlSeconds: 60, ...api });
  const gateway = new FakeGateway(fixture);
  const serverClock = new ManualClock();
  const clientClock = new ManualClock(serverClock.now());
  const app = await buildApi({ fixture, gateway, clock: serverClock, env: {} });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  const exchanges: Exchange[] = [];
  // Real fetch over the socket, recorded so tests can see what the client did.
  const recordingFetch = async (input: string, init: RequestInit): Promise<Response> => {
    const response = await fetch(input, init);
    const responseBody = await response.text();
    const headers = init.headers as Record<string, string> | undefined;
    exchanges.push({
      method: init.method ?? 'GET',
      path: new URL(input).pathname,
      status: response.status,
      ...(typeof init.body === 'string' ? { requestBody: init.body } : {}),
      responseBody,
      ...(headers?.authorization ? { authorization: headers.authorization } : {}),
    });
    return new Response(responseBody, { status: response.status, headers: response.headers });
  };
  harness = {
    url,
    app,
    gateway,
    serverClock,
    clientClock,
    exchanges,
    calls: () => exchanges.map((exchange) => `${exchange.method} ${exchange.path} ${exchange.status}`),
    client: (options = {}) => createClient({ baseUrl: url, ...ALICE, fetch: recordingFetch, clock: clientClock, refreshSkewSeconds: 10, ...options }),
    tokens: () => {
      const found = new Set<string>();
      for (const exchange of exchanges) {
        for (const text of [exchange.requestBody, exchange.responseBody]) {
          const body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
          for (const key of ['accessToken', 'refreshToken']) if (typeof body[key] === 'string') found.add(body[key] as string);
        }
        if (exchange.authorization) found.add(exchange.authorization.replace(/^Bearer /, ''));
      }
      return [...found];
    },
  };
  return harness;
}

/** Moves both clocks, as real time would. */
function advance(h: Harness, seconds: number): void {
  h.serverClock.advance(seconds * 1000);
  h.clientClock.advance(seconds * 1000);
}

describe('quick start', () => {
  test('logs in lazily, once, then reads and unlocks', async () => {
    const h = await start();
    const client = h.client();
    expect(client.loggedIn).toBe(false);
    const station = await client.getStation('S-1');
    expect(station.status).toBe('online');
    expect(station.locks.map((lock) => lock.lockId)).toEqual(['1', '2']);
    expect(await client.unlock('S-1', '1')).toEqual({ success: true });
    expect(client.loggedIn).toBe(true);
    expect(h.calls()).toEqual(['POST /v1/auth/login 200', 'GET /v1/stations/S-1 200', 'POST /v1/stations/S-1/locks/1/unlock 200']);
  });

  test('a failed unlock is a result, not an error', async () => {
    const h = await start();
    h.gateway.outcome = { success: false, failure: 'STATION_OFFLINE', message: 'Station is offline' };
    expect(await h.client().unlock('S-OFF', '1')).toEqual({ success: false, message: 'Station is offline' });
  });
});

describe('tokens (interface section 5)', () => {
  test('refreshes ahead of exp, before the request, so no 401 is ever seen', async () => {
    const h = await start({ accessTokenTtlSeconds: 60 });
    const client = h.client({ refreshSkewSeconds: 10 });
    await client.getStation('S-1');
    advance(h, 49);
    await client.getStation('S-1');
    expect(h.calls().filter((call) => call.includes('/refresh'))).toEqual([]);
    advance(h, 2); // 51 s: inside the 10 s before exp
    await client.getStation('S-1');
    expect(h.calls()).toEqual([
      'POST /v1/auth/login 200',
      'GET /v1/stations/S-1 200',
      'GET /v1/stations/S-1 200',
      'POST /v1/auth/refresh 200',
      'GET /v1/stations/S-1 200',
    ]);
  });

  test('the skew is capped at half a short lifetime', async () => {
    const h = await start({ accessTokenTtlSeconds: 4 });
    const client = h.client({ refreshSkewSeconds: 60 });
    await client.getStation('S-1');
    advance(h, 1);
    await client.getStation('S-1');
    expect(h.calls().some((call) => call.includes('/refresh'))).toBe(false);
    advance(h, 1);
    await client.getStation('S-1');
    expect(h.calls().filter((call) => call.includes('/refresh'))).toHaveLength(1);
  });

  test('concurrent calls share one refresh in flight', async () => {
    const h = await start({ accessTokenTtlSeconds: 60 });
    const client = h.client();
    await client.getStation('S-1');
    advance(h, 55);
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 ? client.getStation('S-1') : client.unlock('S-1', '2'))));
    expect(results).toHaveLength(8);
    expect(h.calls().filter((call) => call.includes('/auth/'))).toEqual(['POST /v1/auth/login 200', 'POST /v1/auth/refresh 200']);
    expect(h.calls().filter((call) => call.endsWith(' 401'))).toEqual([]);
  });

  test('an early refresh that fails does not fail the call while the token is still valid', async () => {
    const h = await start({ accessTokenTtlSeconds: 60 });
    let refreshFails = true;
    const logged: string[] = [];
    const client = h.client({
      refreshSkewSeconds: 10,
      logger: (message) => logged.push(message),
      fetch: async (input, init) => {
        if (refreshFails && new URL(String(input)).pathname === '/v1/auth/refresh') throw new TypeError('fetch failed');
        return fetch(input, init);
      },
    });
    await client.getStation('S-1');
    advance(h, 55); // inside the 10 s before exp: due for refresh, still valid
    expect((await client.getStation('S-1')).status).toBe('online');
    expect(logged).toContain('early refresh failed; using the current access token until it expires');
    advance(h, 6); // past exp: nothing to fall back to
    await expect(client.getStation('S-1')).rejects.toThrow();
    refreshFails = false;
    expect((await client.getStation('S-1')).status).toBe('online');
  });

  test('concurrent first calls share one login', async () => {
    const h = await start();
    const client = h.client();
    await Promise.all([client.getStation('S-1'), client.getStation('S-1'), client.unlock('S-1', '1')]);
    expect(h.calls().filter((call) => call.includes('/auth/'))).toEqual(['POST /v1/auth/login 200']);
  });

  test('a 401 triggers one refresh and one retry; concurrent 401s share it', async () => {
    const h = await start({ accessTokenTtlSeconds: 60 });
    const client = h.client();
    await client.getStation('S-1');
    // Only the server's clock moves: the client believes its token is still good.
    h.serverClock.advance(61_000);
    await Promise.all([client.getStation('S-1'), client.getStation('S-1'), client.getStation('S-1')]);
    const calls = h.calls();
    expect(calls.filter((call) => call === 'GET /v1/stations/S-1 401')).toHaveLength(3);
    expect(calls.filter((call) => call.includes('/auth/refresh'))).toEqual(['POST /v1/auth/refresh 200']);
    expect(calls.filter((call) => call === 'GET /v1/stations/S-1 200')).toHaveLength(4);
  });

  test('when the refresh is refused too, it logs in again', async () => {
    const h = await start();
    const client = h.client();
    await client.getStation('S-1');
    // Another instance of the same account revokes every session (interface section 5.7).
    await h.client().revokeAll();
    h.exchanges.length = 0;
    expect((await client.getStation('S-1')).stationId).toBe(1);
    expect(h.calls()).toEqual([
      'GET /v1/stations/S-1 401',
      'POST /v1/auth/refresh 401',
      'POST /v1/auth/login 200',
      'GET /v1/stations/S-1 200',
    ]);
  });

  test('a token the server refused is not sent again, even when the renewal after the 401 failed', async () => {
    const h = await start();
    const sent: string[] = [];
    let failRenewal = false;
    const client = h.client({
      fetch: async (input, init) => {
        const path = new URL(String(input)).pathname;
        if (failRenewal && path.startsWith('/v1/auth/')) {
          failRenewal = false;
          throw new TypeError('fetch failed');
        }
        const token = (init?.headers as Record<string, string> | undefined)?.authorization;
        if (path.startsWith('/v1/stations/')) sent.push(token ?? '-');
        return fetch(input, init);
      },
    });
    await client.getStation('S-1');
    const refused = sent[0];
    await h.client().revokeAll();
    failRenewal = true;
    await expect(client.getStation('S-1')).rejects.toThrow('fetch failed');
    expect((await client.getStation('S-1')).stationId).toBe(1);
    // Sent twice (the first call, then the one the 401 answered), never after the 401.
    expect(sent.filter((token) => token === refused)).toHaveLength(2);
    expect(sent.at(-1)).not.toBe(refused);
    expect(sent).toHaveLength(3);
  });

  test('retries only once: a second 401 is thrown, not looped on', async () => {
    const h = await start({ accessTokenTtlSeconds: 60 });
    const seen: string[] = [];
    // Sabotage: every token pair a refresh returns is revoked at once, so the retry fails too.
    const client = h.client({
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        seen.push(`${init.method} ${new URL(input).pathname} ${response.status}`);
        if (new URL(input).pathname === '/v1/auth/refresh' && response.ok) {
          const pair = (await response.clone().json()) as { accessToken: string };
          await fetch(`${h.url}/v1/auth/revoke-all`, { method: 'POST', headers: { authorization: `Bearer ${pair.accessToken}` } });
        }
        return response;
      },
    });
    await client.login();
    h.serverClock.advance(61_000);
    const error = await client.getStation('S-1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 401, message: 'Token is invalid' });
    expect(seen).toEqual(['POST /v1/auth/login 200', 'GET /v1/stations/S-1 401', 'POST /v1/auth/refresh 200', 'GET /v1/stations/S-1 401']);
  });

  test('logout revokes the refresh token; the next call logs in again', async () => {
    const h = await start();
    const client = h.client();
    await client.getStation('S-1');
    const login = JSON.parse(h.exchanges[0]!.responseBody) as { refreshToken: string };
    await client.logout();
    expect(client.loggedIn).toBe(false);
    const revoke = h.exchanges.at(-1)!;
    expect(`${revoke.method} ${revoke.path} ${revoke.status}`).toBe('POST /v1/auth/revoke 200');
    expect(JSON.parse(revoke.requestBody!)).toEqual({ refreshToken: login.refreshToken });
    const reuse = await fetch(`${h.url}/v1/auth/refresh`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ refreshToken: login.refreshToken }),
    });
    expect(reuse.status).toBe(401);
    await client.getStation('S-1');
    expect(h.calls().at(-2)).toBe('POST /v1/auth/login 200');
  });

  test('revokeAll ends this session and every other one of the account', async () => {
    const h = await start();
    const mine = h.client();
    const other = h.client();
    await mine.getStation('S-1');
    await other.getStation('S-1');
    const otherToken = h.exchanges.at(-1)!.authorization!;
    await mine.revokeAll();
    expect(mine.loggedIn).toBe(false);
    const stale = await fetch(`${h.url}/v1/stations/S-1`, { headers: { authorization: otherToken } });
    expect(stale.status).toBe(401);
    // Both recover by logging in again.
    await mine.getStation('S-1');
    await other.getStation('S-1');
  });

  test('the refreshed token really is new and carries exp', async () => {
    const h = await start({ accessTokenTtlSeconds: 60 });
    const client = h.client();
    await client.getStation('S-1');
    advance(h, 55);
    await client.refresh();
    const refreshed = JSON.parse(h.exchanges.at(-1)!.responseBody) as { accessToken: string };
    expect(decodeJwt(refreshed.accessToken).exp).toBe(Math.floor(h.serverClock.now() / 1000) + 60);
  });
});

describe('errors', () => {
  test('API errors are ApiError with status and message', async () => {
    const h = await start();
    const client = h.client();
    await expect(client.getStation('NOPE')).rejects.toMatchObject({ name: 'ApiError', status: 404, message: 'Station not found' });
    await expect(client.unlock('S-1', '9')).rejects.toMatchObject({ status: 404, message: 'Lock not found' });
    await expect(client.getStation('S-BOB')).rejects.toMatchObject({ status: 404, message: 'Station not found' });
  });

  test('wrong credentials: one login attempt, ApiError 401 Invalid credentials', async () => {
    const h = await start();
    const client = h.client({ password: 'wrong' });
    const error = await client.getStation('S-1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 401, message: 'Invalid credentials' });
    expect(h.calls()).toEqual(['POST /v1/auth/login 401']);
  });

  test('a token or lock id of "." or "..", which no URL can carry, is refused before anything is sent', async () => {
    const h = await start();
    const client = h.client();
    await expect(client.getStation('..')).rejects.toThrow('the station token ".." cannot be sent in a URL path');
    await expect(client.unlock('S-1', '.')).rejects.toThrow('the lock id "." cannot be sent in a URL path');
    expect(h.calls()).toEqual([]);
  });

  test('an API that cannot be reached is ApiUnreachableError: the request, the address and why, with what fetch threw as cause', async () => {
    const port = await freePort(); // bound to port 0, then closed: nothing listens there
    const client = createClient({ baseUrl: `http://127.0.0.1:${port}`, ...ALICE });
    const error = await client.getStation('S-1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiUnreachableError);
    expect(error).not.toBeInstanceOf(ApiError);
    expect(error).toMatchObject({
      name: 'ApiUnreachableError',
      message: `POST /v1/auth/login: the API at http://127.0.0.1:${port} cannot be reached (connect ECONNREFUSED 127.0.0.1:${port})`,
      cause: { name: 'TypeError', message: 'fetch failed', cause: { code: 'ECONNREFUSED' } },
    });
    expect(client.loggedIn).toBe(false);
  });

  test('a base address with credentials, or one that is not http(s), is refused when the client is made, without the secret', () => {
    const withUser = (): unknown => createClient({ baseUrl: 'http://alice:url-secret@127.0.0.1:8080', ...ALICE });
    expect(withUser).toThrow(TypeError);
    expect(withUser).toThrow('baseUrl http://***@127.0.0.1:8080 holds credentials (user:password@)');
    expect(() => withUser()).not.toThrow(/url-secret/);
    expect(() => createClient({ baseUrl: 'ws://127.0.0.1:8080', ...ALICE })).toThrow('baseUrl must be an http:// or https:// address, not ws://');
    expect(() => createClient({ baseUrl: '127.0.0.1:8080', ...ALICE })).toThrow('baseUrl must be an absolute http:// or https:// address, not "127.0.0.1:8080"');
    expect(() => createClient({ baseUrl: 'not a url', ...ALICE })).toThrow('baseUrl must be an absolute http:// or https:// address, not "not a url"');
  });

  test('a server gone after login: the message names the request and holds no token or password', async () => {
    const h = await start();
    const client = h.client({ fetch: (input, init) => fetch(input, init) });
    await client.getStation('S-1');
    await h.app.close();
    const error = await client.unlock('S-1', '1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiUnreachableError);
    expect((error as Error).message).toMatch(/^POST \/v1\/stations\/S-1\/locks\/1\/unlock: the API at http:\/\/127\.0\.0\.1:\d+ cannot be reached \(.+\)$/);
    for (const secret of [...h.tokens(), ALICE.password]) expect((error as Error).message).not.toContain(secret);
  });

  test('an unknown host, a connect timeout and a host with several addresses say why, as undici reports them', async () => {
    // The shapes undici's fetch rejects with; a real DNS failure or timeout depends on the network and takes seconds.
    const failing = (cause: Error) => async (): Promise<Response> => {
      throw new TypeError('fetch failed', { cause });
    };
    const reasons = {
      'getaddrinfo ENOTFOUND api.invalid': Object.assign(new Error('getaddrinfo ENOTFOUND api.invalid'), { code: 'ENOTFOUND' }),
      'Connect Timeout Error (attempted address: api.invalid:80, timeout: 10000ms)': Object.assign(
        new Error('Connect Timeout Error (attempted address: api.invalid:80, timeout: 10000ms)'),
        { code: 'UND_ERR_CONNECT_TIMEOUT' },
      ),
      'connect ECONNREFUSED ::1:80, connect ECONNREFUSED 127.0.0.1:80': new AggregateError([
        new Error('connect ECONNREFUSED ::1:80'),
        new Error('connect ECONNREFUSED 127.0.0.1:80'),
      ]),
    };
    for (const [reason, cause] of Object.entries(reasons)) {
      const client = createClient({ baseUrl: 'http://api.invalid', ...ALICE, fetch: failing(cause) });
      const error = await client.login().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ApiUnreachableError);
      expect(error).toMatchObject({ message: `POST /v1/auth/login: the API at http://api.invalid cannot be reached (${reason})`, cause: { cause } });
    }
  });

  test('path segments are encoded', async () => {
    const h = await start();
    await expect(h.client().getStation('a/b?c')).rejects.toMatchObject({ status: 404, message: 'Station not found' });
    expect(h.exchanges.at(-1)!.path).toBe('/v1/stations/a%2Fb%3Fc');
  });
});

test('the client never logs a token or the password', async () => {
  const h = await start({ accessTokenTtlSeconds: 60 });
  const lines: string[] = [];
  const client = h.client({ logger: (line) => lines.push(line) });
  await client.getStation('S-1');
  advance(h, 55);
  await client.getStation('S-1');
  h.serverClock.advance(61_000);
  await client.unlock('S-1', '1');
  await h.client().revokeAll();
  await client.getStation('S-1');
  await client.logout();
  expect(lines.length).toBeGreaterThan(3);
  const text = lines.join('\n');
  for (const token of h.tokens()) expect(text).not.toContain(token);
  expect(text).not.toContain(ALICE.password);
});
