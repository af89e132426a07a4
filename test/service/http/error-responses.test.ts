/**
 * Every row of the error tables of interface section 7, and the answers DESIGN.md chooses where
 * the interface is silent (bad input, oversized and non-JSON bodies, unknown routes, webhooks,
 * server failures). Every error body is exactly `{ message }`.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { BOB } from '../../helpers/test-fixture.js';
import { buildTestApi, type TestApi } from '../../helpers/test-api.js';

let api: TestApi;
let alice: string;
let bob: string;

beforeAll(async () => {
  api = await buildTestApi();
  alice = (await api.login()).accessToken;
  bob = (await api.login(BOB)).accessToken;
});
afterAll(async () => {
  await api.app.close();
});
beforeEach(() => {
  api.gateway.failWith = undefined;
  api.gateway.outcome = { success: true };
  api.gateway.unlocks.length = 0;
});

function expectError(response: LightMyRequestResponse, status: number, message: string | RegExp): void {
  expect(response.statusCode).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  const body = response.json<Record<string, unknown>>();
  expect(Object.keys(body)).toEqual(['message']);
  if (typeof message === 'string') expect(body.message).toBe(message);
  else expect(body.message).toMatch(message);
}

describe('interface section 7', () => {
  test('200 on success', async () => {
    expect((await api.get('/v1/stations/S-1', alice)).statusCode).toBe(200);
    const unlock = await api.post('/v1/stations/S-1/locks/1/unlock', undefined, alice);
    expect(unlock.statusCode).toBe(200);
    expect(unlock.json()).toEqual({ success: true });
    expect(api.gateway.unlocks).toEqual([{ token: 'S-1', lockId: '1' }]);
  });

  test('401 Token is invalid: missing or malformed access token, on every protected endpoint', async () => {
    for (const [method, url] of [
      ['GET', '/v1/stations/S-1'],
      ['POST', '/v1/stations/S-1/locks/1/unlock'],
      ['POST', '/v1/auth/revoke-all'],
    ] as const) {
      expectError(await api.app.inject({ method, url }), 401, 'Token is invalid');
      expectError(await api.app.inject({ method, url, headers: { authorization: 'Bearer x.y.z' } }), 401, 'Token is invalid');
    }
  });

  test('401 comes before 404: an unauthenticated caller learns nothing about stations', async () => {
    expectError(await api.get('/v1/stations/NOPE'), 401, 'Token is invalid');
    expectError(await api.post('/v1/stations/NOPE/locks/1/unlock'), 401, 'Token is invalid');
  });

  test('401 Invalid credentials at login', async () => {
    expectError(await api.post('/v1/auth/login', { email: 'alice@example.com', password: 'nope' }), 401, 'Invalid credentials');
  });

  test('404 Station not found: wrong token, and a station of another account, indistinguishably', async () => {
    const missing = await api.get('/v1/stations/NOPE', alice);
    const foreign = await api.get('/v1/stations/S-BOB', alice);
    expectError(missing, 404, 'Station not found');
    expectError(foreign, 404, 'Station not found');
    expect(foreign.body).toBe(missing.body);
    expect(foreign.headers['content-length']).toBe(missing.headers['content-length']);
    expectError(await api.get('/v1/stations/S-1', bob), 404, 'Station not found');
    expect((await api.get('/v1/stations/S-BOB', bob)).statusCode).toBe(200);
  });

  test('404 Station not found on unlock of a missing or foreign station, and nothing is sent', async () => {
    expectError(await api.post('/v1/stations/NOPE/locks/1/unlock', undefined, alice), 404, 'Station not found');
    expectError(await api.post('/v1/stations/S-BOB/locks/A/unlock', undefined, alice), 404, 'Station not found');
    expectError(await api.post('/v1/stations/S-1/locks/1/unlock', undefined, bob), 404, 'Station not found');
    expect(api.gateway.unlocks).toEqual([]);
  });

  test('404 Lock not found', async () => {
    expectError(await api.post('/v1/stations/S-1/locks/9/unlock', undefined, alice), 404, 'Lock not found');
    expect(api.gateway.unlocks).toEqual([]);
  });

  test('a station token longer than 100 characters is still routed (fixture allows 128)', async () => {
    expectError(await api.get(`/v1/stations/${'X'.repeat(128)}`, alice), 404, 'Station not found');
  });

  test('501 on every method of every webhook path, whatever the body', async () => {
    for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const) {
      for (const url of ['/v1/webhooks', '/v1/webhooks/', '/v1/webhooks/orders/42']) {
        expectError(await api.app.inject({ method, url }), 501, 'Webhooks are not available');
      }
    }
    const xml = await api.app.inject({ method: 'POST', url: '/v1/webhooks/x', headers: { 'content-type': 'application/xml' }, payload: '<a/>' });
    expectError(xml, 501, 'Webhooks are not available');
  });
});

describe('unlock results (200, DESIGN.md)', () => {
  test('a failed unlock is 200 with success false and the message only', async () => {
    api.gateway.outcome = { success: false, failure: 'LOCK_JAMMED', message: 'Lock is jammed' };
    const response = await api.post('/v1/stations/S-JAM/locks/1/unlock', undefined, alice);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ success: false, message: 'Lock is jammed' });
  });

  test('the unlock endpoint takes no body, but tolerates an empty or {} JSON body', async () => {
    const headers = { authorization: `Bearer ${alice}`, 'content-type': 'application/json' };
    for (const payload of ['', '{}']) {
      const response = await api.app.inject({ method: 'POST', url: '/v1/stations/S-1/locks/1/unlock', headers, payload });
      expect(response.statusCode, JSON.stringify(payload)).toBe(200);
    }
  });
});

describe('bad input (400 naming the field)', () => {
  test.each([
    [{ password: 'x' }, 'email is required'],
    [{ email: 'a@b' }, 'password is required'],
    [{ email: 42, password: 'x' }, 'email must be a string'],
    [{ email: 'a@b', password: null }, 'password must be a string'],
    [{ email: 'a@b', password: 'x', admin: true }, 'admin is not an allowed field'],
    [{ email: '', password: 'x' }, /^email must NOT have fewer than 1 characters/],
    [{ email: 'a@b', password: 'x'.repeat(1025) }, /^password must NOT have more than 1024 characters/],
    [[], 'Request body must be a JSON object'],
    ['email', 'Request body must be a JSON object'],
  ])('login %j → %s', async (body, message) => {
    expectError(await api.post('/v1/auth/login', body), 400, message);
  });

  test('a missing body where one is required', async () => {
    expectError(await api.post('/v1/auth/login'), 400, 'Request body must be a JSON object');
    expectError(await api.post('/v1/auth/refresh', {}), 400, 'refreshToken is required');
    expectError(await api.post('/v1/auth/revoke', { refreshToken: 1 }), 400, 'refreshToken must be a string');
  });

  test('malformed JSON', async () => {
    const response = await api.app.inject({ method: 'POST', url: '/v1/auth/login', headers: { 'content-type': 'application/json' }, payload: '{"email":' });
    expectError(response, 400, 'Request body is not valid JSON');
  });

  test('prototype poisoning is refused', async () => {
    const response = await api.app.inject({
      method: 'POST',
      url: '/v1/auth/login',
      headers: { 'content-type': 'application/json' },
      payload: '{"email":"a@b","password":"x","__proto__":{"admin":true}}',
    });
    expectError(response, 400, 'Request body is not valid JSON');
  });

  test('a malformed URL', async () => {
    expectError(await api.get('/v1/stations/%E0%A4%A', alice), 400, 'Malformed URL');
  });
});

describe('limits and media types', () => {
  test('413 for a body over 16 KiB', async () => {
    const response = await api.post('/v1/auth/login', { email: 'a@b', password: 'x'.repeat(17 * 1024) });
    expectError(response, 413, 'Request body is too large');
  });

  test('415 for a body that is not JSON', async () => {
    for (const [type, payload] of [
      ['text/plain', 'email=a'],
      ['application/x-www-form-urlencoded', 'email=a&password=b'],
      ['multipart/form-data; boundary=x', '--x--'],
    ] as const) {
      const response = await api.app.inject({ method: 'POST', url: '/v1/auth/login', headers: { 'content-type': type }, payload });
      expectError(response, 415, 'Request body must be application/json');
    }
    const untyped = await api.app.inject({ method: 'POST', url: '/v1/auth/login', payload: Buffer.from('{"email":"a"}') });
    expectError(untyped, 415, 'Request body must be application/json');
  });

  test('JSON with a charset parameter is JSON', async () => {
    const response = await api.app.inject({
      method: 'POST',
      url: '/v1/auth/login',
      headers: { 'content-type': 'application/json; charset=utf-8' },
      payload: JSON.stringify({ email: 'alice@example.com', password: 'alice-password' }),
    });
    expect(response.statusCode).toBe(200);
  });
});

describe('unknown routes and server failures', () => {
  test('404 JSON for unknown routes and methods', async () => {
    expectError(await api.get('/nope'), 404, 'Route not found');
    expectError(await api.get('/v2/stations/S-1', alice), 404, 'Route not found');
    expectError(await api.get('/v1/auth/login'), 404, 'Route not found');
    expectError(await api.app.inject({ method: 'DELETE', url: '/v1/stations/S-1' }), 404, 'Route not found');
  });

  test('500 says nothing internal', async () => {
    api.gateway.failWith = new Error('ECONNRESET at /srv/secret/path.ts:42 password=hunter2');
    const response = await api.get('/v1/stations/S-1', alice);
    expectError(response, 500, 'Internal server error');
    expect(response.body).not.toMatch(/ECONNRESET|secret|hunter2|stack/);
  });
});
