/**
 * Every authentication flow of interface section 5 over HTTP (fastify `inject`), with an injected
 * clock and short lifetimes so expiry is exercised without sleeping.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, test } from 'vitest';
import { SignJWT, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import { ALICE, BOB } from '../../helpers/test-fixture.js';
import { ManualClock } from '../../../src/shared/clock.js';
import { TEST_SECRET, buildTestApi, type TestApi } from '../../helpers/test-api.js';

let api: TestApi | undefined;
afterEach(async () => {
  await api?.app.close();
  api = undefined;
});

async function start(options: Parameters<typeof buildTestApi>[0] = {}): Promise<TestApi> {
  api = await buildTestApi(options);
  return api;
}

const STATION = '/v1/stations/S-1';
const invalid = { message: 'Token is invalid' };

describe('login (interface section 5.2)', () => {
  test('returns a JWT access token with exp, iat, sub, jti and an opaque refresh token', async () => {
    const clock = new ManualClock();
    const { login } = await start({ clock });
    const pair = await login();
    expect(Object.keys(pair).sort()).toEqual(['accessToken', 'refreshToken']);
    expect(decodeProtectedHeader(pair.accessToken)).toMatchObject({ alg: 'HS256', typ: 'JWT' });
    const claims = decodeJwt(pair.accessToken);
    expect(claims.sub).toBe('alice@example.com');
    expect(claims.iat).toBe(Math.floor(clock.now() / 1000));
    expect(claims.exp).toBe(claims.iat! + 3600);
    expect(claims.jti).toMatch(/^[0-9a-f-]{36}$/);
    expect(pair.refreshToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  test('answers with Cache-Control: no-store', async () => {
    const { post } = await start();
    const response = await post('/v1/auth/login', ALICE);
    expect(response.headers['cache-control']).toBe('no-store');
  });

  test('wrong password and unknown email are the same 401 Invalid credentials', async () => {
    const { post } = await start();
    for (const body of [{ ...ALICE, password: 'wrong' }, { email: 'nobody@example.com', password: ALICE.password }, { email: ALICE.email, password: BOB.password }]) {
      const response = await post('/v1/auth/login', body);
      expect(response.statusCode).toBe(401);
      expect(response.json()).toEqual({ message: 'Invalid credentials' });
      expect(response.headers['www-authenticate']).toBe('Bearer realm="station-sim"');
    }
  });

  test('email matches case-insensitively; the password does not', async () => {
    const { post } = await start();
    expect((await post('/v1/auth/login', { ...ALICE, email: 'ALICE@Example.com' })).statusCode).toBe(200);
    expect((await post('/v1/auth/login', { ...ALICE, password: ALICE.password.toUpperCase() })).statusCode).toBe(401);
  });
});

describe('bearer access tokens (interface section 5.3, 5.4)', () => {
  test('a missing or malformed Authorization header is 401 Token is invalid', async () => {
    const { app, login } = await start();
    const { accessToken } = await login();
    for (const authorization of [undefined, '', 'Bearer', `Basic ${accessToken}`, `Bearer ${accessToken} extra`, `Bearer  `, 'Bearer not.a.jwt', `${accessToken}`]) {
      const response = await app.inject({ method: 'GET', url: STATION, headers: authorization === undefined ? {} : { authorization } });
      expect(response.statusCode, String(authorization)).toBe(401);
      expect(response.json()).toEqual(invalid);
      // RFC 6750, section 3.1: no error code when the request carried no bearer credentials at all.
      const presented = authorization !== undefined && /^bearer\b/i.test(authorization);
      expect(response.headers['www-authenticate'], String(authorization)).toBe(
        presented ? 'Bearer realm="station-sim", error="invalid_token"' : 'Bearer realm="station-sim"',
      );
    }
    // The scheme is case-insensitive (RFC 6750).
    expect((await app.inject({ method: 'GET', url: STATION, headers: { authorization: `bearer ${accessToken}` } })).statusCode).toBe(200);
  });

  test('expires at exp and not before', async () => {
    const clock = new ManualClock();
    const { get, login } = await start({ clock, api: { accessTokenTtlSeconds: 5 } });
    const { accessToken } = await login();
    clock.advance(4999);
    expect((await get(STATION, accessToken)).statusCode).toBe(200);
    clock.advance(1);
    const expired = await get(STATION, accessToken);
    expect(expired.statusCode).toBe(401);
    expect(expired.json()).toEqual(invalid);
  });

  test('the lifetime option overrides the fixture', async () => {
    const { login } = await start({ api: { accessTokenTtlSeconds: 3600 }, accessTokenTtlSeconds: 7 });
    const claims = decodeJwt((await login()).accessToken);
    expect(claims.exp! - claims.iat!).toBe(7);
  });

  test('alg none, another algorithm, another secret, tampering and unknown accounts are all 401', async () => {
    const clock = new ManualClock();
    const { get, login } = await start({ clock });
    const { accessToken } = await login();
    const claims = decodeJwt(accessToken);
    const [header, payload, signature] = accessToken.split('.') as [string, string, string];
    const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
    const key = new TextEncoder().encode(TEST_SECRET);
    const sign = (body: Record<string, unknown>, alg = 'HS256', secret = key): Promise<string> =>
      new SignJWT(body).setProtectedHeader({ alg, typ: 'JWT' }).sign(secret);

    const forged = {
      algNone: `${b64({ alg: 'none', typ: 'JWT' })}.${payload}.`,
      algNoneNoDot: `${b64({ alg: 'none', typ: 'JWT' })}.${payload}`,
      headerSwappedToNone: `${b64({ alg: 'none' })}.${payload}.${signature}`,
      hs512SameSecret: await sign(claims, 'HS512'),
      otherSecret: await sign(claims, 'HS256', new TextEncoder().encode('another-secret-that-is-32-bytes-long!!')),
      tamperedPayload: `${header}.${b64({ ...claims, sub: 'bob@example.com' })}.${signature}`,
      tamperedSignature: `${header}.${payload}.${signature.slice(0, -2)}${signature.endsWith('AA') ? 'BB' : 'AA'}`,
      unknownAccount: await sign({ ...claims, sub: 'ghost@example.com' }),
      noGeneration: await sign({ ...claims, gen: undefined }),
      noExpiry: await sign({ ...claims, exp: undefined }),
      otherAudience: await sign({ ...claims, aud: 'someone-else' }),
    };
    for (const [name, token] of Object.entries(forged)) {
      const response = await get(STATION, token);
      expect(response.statusCode, name).toBe(401);
      expect(response.json(), name).toEqual(invalid);
    }
    // The untouched token still works, so the failures above are the forgeries' own.
    expect((await get(STATION, accessToken)).statusCode).toBe(200);
  });

  test('tokens of one start are invalid at another start with a random secret', async () => {
    const first = await buildTestApi({ jwtSecret: undefined });
    const second = await buildTestApi({ jwtSecret: undefined });
    try {
      const { accessToken } = await first.login();
      expect((await first.get(STATION, accessToken)).statusCode).toBe(200);
      expect((await second.get(STATION, accessToken)).statusCode).toBe(401);
    } finally {
      await first.app.close();
      await second.app.close();
    }
  });

  test('STATION_SIM_JWT_SECRET from the environment signs the tokens', async () => {
    const env = { STATION_SIM_JWT_SECRET: 'an-environment-secret-of-32-bytes-or-more' };
    const first = await buildTestApi({ jwtSecret: undefined, env });
    const second = await buildTestApi({ jwtSecret: undefined, env });
    try {
      const { accessToken } = await first.login();
      const { payload } = await jwtVerify(accessToken, new TextEncoder().encode(env.STATION_SIM_JWT_SECRET), { algorithms: ['HS256'] });
      expect(payload.sub).toBe(ALICE.email);
      // Sessions live in the memory of the first process: the second knows the key but not the
      // session, and refuses (a shared Redis session store is what lets it accept; sessions.test.ts).
      expect((await second.get(STATION, accessToken)).statusCode).toBe(401);
    } finally {
      await first.app.close();
      await second.app.close();
    }
  });

  test('a secret shorter than 32 bytes is refused at start', async () => {
    await expect(buildTestApi({ jwtSecret: undefined, env: { STATION_SIM_JWT_SECRET: 'short' } })).rejects.toMatchObject({ code: 'JWT_SECRET_TOO_SHORT' });
  });

  test('a long secret that is plainly guessable is refused at start, and random ones pass', async () => {
    for (const weak of ['a'.repeat(32), 'password'.repeat(4), 'ab'.repeat(40), 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab']) {
      const refused = buildTestApi({ jwtSecret: undefined, env: { STATION_SIM_JWT_SECRET: weak } });
      await expect(refused, weak).rejects.toMatchObject({ code: 'JWT_SECRET_WEAK' });
      // The message says how to make a good one and never shows the secret.
      await expect(refused).rejects.not.toThrow(weak);
    }
    for (const random of [randomBytes(32).toString('base64'), randomBytes(32).toString('hex'), randomBytes(32).toString('base64url')]) {
      const api = await buildTestApi({ jwtSecret: undefined, env: { STATION_SIM_JWT_SECRET: random } });
      await api.app.close();
    }
  });
});

describe('refresh (interface section 5.5)', () => {
  test('exchanges a refresh token for a new pair; the old refresh token is used up (rotation)', async () => {
    const clock = new ManualClock();
    const { post, get, login } = await start({ clock });
    const first = await login();
    clock.advance(1000);
    const response = await post('/v1/auth/refresh', { refreshToken: first.refreshToken });
    expect(response.statusCode).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
    const second = response.json<{ accessToken: string; refreshToken: string }>();
    expect(second.accessToken).not.toBe(first.accessToken);
    expect(second.refreshToken).not.toBe(first.refreshToken);
    expect((await get(STATION, second.accessToken)).statusCode).toBe(200);

    expect((await post('/v1/auth/refresh', { refreshToken: second.refreshToken })).statusCode).toBe(200);
    const reused = await post('/v1/auth/refresh', { refreshToken: first.refreshToken });
    expect(reused.statusCode).toBe(401);
    expect(reused.json()).toEqual(invalid);
  });

  test('a refreshed access token is usable after the first one expired', async () => {
    const clock = new ManualClock();
    const { post, get, login } = await start({ clock, api: { accessTokenTtlSeconds: 5 } });
    const first = await login();
    clock.advance(5000);
    expect((await get(STATION, first.accessToken)).statusCode).toBe(401);
    const second = (await post('/v1/auth/refresh', { refreshToken: first.refreshToken })).json<{ accessToken: string }>();
    expect((await get(STATION, second.accessToken)).statusCode).toBe(200);
  });

  test('an expired refresh token is 401', async () => {
    const clock = new ManualClock();
    const { post, login } = await start({ clock, api: { accessTokenTtlSeconds: 5, refreshTokenTtlSeconds: 10 } });
    const early = await login();
    const late = await login();
    clock.advance(9999);
    expect((await post('/v1/auth/refresh', { refreshToken: early.refreshToken })).statusCode).toBe(200);
    clock.advance(1);
    const response = await post('/v1/auth/refresh', { refreshToken: late.refreshToken });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual(invalid);
  });

  test('garbage, an access token or an empty string are not refresh tokens', async () => {
    const { post, login } = await start();
    const { accessToken } = await login();
    for (const refreshToken of ['nope', accessToken, 'A'.repeat(43)]) {
      const response = await post('/v1/auth/refresh', { refreshToken });
      expect(response.statusCode).toBe(401);
      expect(response.json()).toEqual(invalid);
      // A refresh token in a body is not bearer authentication: the bare challenge, no error code.
      expect(response.headers['www-authenticate']).toBe('Bearer realm="station-sim"');
    }
    expect((await post('/v1/auth/refresh', { refreshToken: '' })).statusCode).toBe(400);
  });
});

describe('revoke (interface section 5.6)', () => {
  test('invalidates the refresh token; the answer is always success', async () => {
    const { post, get, login } = await start();
    const pair = await login();
    const response = await post('/v1/auth/revoke', { refreshToken: pair.refreshToken });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ success: true });
    const reuse = await post('/v1/auth/refresh', { refreshToken: pair.refreshToken });
    expect(reuse.statusCode).toBe(401);
    expect(reuse.json()).toEqual(invalid);
    // Revoking again, or revoking garbage, says the same.
    expect((await post('/v1/auth/revoke', { refreshToken: pair.refreshToken })).json()).toEqual({ success: true });
    expect((await post('/v1/auth/revoke', { refreshToken: 'never-issued' })).json()).toEqual({ success: true });
    // Logout ends the session (the token family), its access tokens included (docs/api.md).
    expect((await get(STATION, pair.accessToken)).statusCode).toBe(401);
  });

  test('leaves the account’s other sessions alone', async () => {
    const { post, login } = await start();
    const one = await login();
    const two = await login();
    await post('/v1/auth/revoke', { refreshToken: one.refreshToken });
    expect((await post('/v1/auth/refresh', { refreshToken: two.refreshToken })).statusCode).toBe(200);
  });
});

describe('revoke-all (interface section 5.7)', () => {
  test('every access and refresh token of the account issued before it gives 401; other accounts are untouched', async () => {
    const clock = new ManualClock();
    const { post, get, login } = await start({ clock });
    const one = await login();
    const two = await login();
    const bob = await login(BOB);
    const rotated = (await post('/v1/auth/refresh', { refreshToken: two.refreshToken })).json<{ accessToken: string; refreshToken: string }>();

    const response = await post('/v1/auth/revoke-all', undefined, one.accessToken);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ success: true });

    for (const accessToken of [one.accessToken, two.accessToken, rotated.accessToken]) {
      const denied = await get(STATION, accessToken);
      expect(denied.statusCode).toBe(401);
      expect(denied.json()).toEqual(invalid);
    }
    for (const refreshToken of [one.refreshToken, rotated.refreshToken]) {
      expect((await post('/v1/auth/refresh', { refreshToken })).statusCode).toBe(401);
    }
    expect((await post('/v1/auth/revoke-all', undefined, one.accessToken)).statusCode).toBe(401);
    expect((await get('/v1/stations/S-BOB', bob.accessToken)).statusCode).toBe(200);
    expect((await post('/v1/auth/refresh', { refreshToken: bob.refreshToken })).statusCode).toBe(200);
  });

  test('tokens issued right after it, in the same millisecond, work', async () => {
    const clock = new ManualClock();
    const { post, get, login } = await start({ clock });
    const before = await login();
    await post('/v1/auth/revoke-all', undefined, before.accessToken);
    const after = await login();
    expect((await get(STATION, after.accessToken)).statusCode).toBe(200);
    const refreshed = await post('/v1/auth/refresh', { refreshToken: after.refreshToken });
    expect(refreshed.statusCode).toBe(200);
    expect((await get(STATION, refreshed.json<{ accessToken: string }>().accessToken)).statusCode).toBe(200);
    expect((await get(STATION, before.accessToken)).statusCode).toBe(401);
  });

  test('needs a valid bearer token and takes no body', async () => {
    const { app, post, login } = await start();
    expect((await post('/v1/auth/revoke-all')).statusCode).toBe(401);
    const { accessToken } = await login();
    const withEmptyJson = await app.inject({
      method: 'POST',
      url: '/v1/auth/revoke-all',
      headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
      payload: '',
    });
    expect(withEmptyJson.statusCode).toBe(200);
  });
});
