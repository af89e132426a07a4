/**
 * Login throttling and the bound on password checks over HTTP (fastify `inject`, client addresses
 * set with `remoteAddress`), in fake time (ManualClock) so lockouts end without sleeping.
 */
import { MemorySessionStore } from '../../../src/service/auth/memory-session-store.js';
import { afterEach, describe, expect, test } from 'vitest';
import type { Fixture } from '../../../src/fixture/fixture-schema.js';
import { AuthService } from '../../../src/service/auth/auth-service.js';
import { ALICE, testFixture } from '../../helpers/test-fixture.js';
import { ManualClock } from '../../../src/shared/clock.js';
import { buildTestApi, type TestApi } from '../../helpers/test-api.js';

let api: TestApi | undefined;
afterEach(async () => {
  await api?.app.close();
  api = undefined;
});

/** Small limits, so a test needs few scrypt hashes (about 50 ms each). */
const SMALL: Partial<Fixture['api']> = {
  loginThrottle: {
    enabled: true,
    perAddress: { maxFailures: 4, windowSeconds: 20 },
    perAccount: { freeFailures: 2, lockoutSeconds: 3, maxLockoutSeconds: 60, forgetAfterSeconds: 900 },
    maxTracked: 1000,
  },
};

function loginFrom(app: TestApi['app'], remoteAddress: string, body: { email: string; password: string }) {
  return app.inject({ method: 'POST', url: '/v1/auth/login', remoteAddress, headers: { 'content-type': 'application/json' }, payload: JSON.stringify(body) });
}

const wrong = (email: string) => ({ email, password: 'wrong-guess' });

describe('POST /v1/auth/login throttling', () => {
  test('per address: 429 with Retry-After and a JSON message once the budget is spent, then one more after the wait', async () => {
    const clock = new ManualClock();
    api = await buildTestApi({ clock, api: SMALL });
    for (let n = 0; n < 4; n += 1) expect((await loginFrom(api.app, '192.0.2.10', wrong(`u${n}@example.com`))).statusCode).toBe(401);
    const throttled = await loginFrom(api.app, '192.0.2.10', ALICE);
    expect(throttled.statusCode).toBe(429);
    // 20 s / 4 failures: one comes back every 5 s.
    expect(throttled.headers['retry-after']).toBe('5');
    expect(throttled.headers['content-type']).toMatch(/^application\/json/);
    expect(throttled.json()).toEqual({ message: 'Too many failed logins; try again later' });
    // Another address is not affected, and is not told anything about the first.
    expect((await loginFrom(api.app, '192.0.2.11', ALICE)).statusCode).toBe(200);
    clock.advance(5000);
    expect((await loginFrom(api.app, '192.0.2.10', ALICE)).statusCode).toBe(200);
  });

  test('per account: the email is locked from every address, exists or not, and a success resets it', async () => {
    const clock = new ManualClock();
    api = await buildTestApi({ clock, api: SMALL });
    for (const email of [ALICE.email, 'nobody@example.com']) {
      expect((await loginFrom(api.app, '198.51.100.1', wrong(email))).statusCode).toBe(401);
      expect((await loginFrom(api.app, '198.51.100.2', wrong(email.toUpperCase()))).statusCode).toBe(401);
      expect((await loginFrom(api.app, '198.51.100.3', wrong(email))).statusCode).toBe(401);
      const locked = await loginFrom(api.app, '198.51.100.4', { email, password: ALICE.password });
      // An existing and a missing email get the same answer.
      expect({ status: locked.statusCode, retryAfter: locked.headers['retry-after'], body: locked.json() }).toEqual({
        status: 429,
        retryAfter: '3',
        body: { message: 'Too many failed logins; try again later' },
      });
    }
    clock.advance(3000);
    expect((await loginFrom(api.app, '198.51.100.4', ALICE)).statusCode).toBe(200);
    // The success reset the email: two more failures bring no lockout.
    for (let n = 0; n < 2; n += 1) expect((await loginFrom(api.app, '198.51.100.5', wrong(ALICE.email))).statusCode).toBe(401);
    expect((await loginFrom(api.app, '198.51.100.6', ALICE)).statusCode).toBe(200);
  });

  test('many successful logins from one address are never throttled', async () => {
    api = await buildTestApi({ api: SMALL });
    const answers = await Promise.all(Array.from({ length: 12 }, () => loginFrom(api!.app, '127.0.0.1', ALICE)));
    expect(answers.map((answer) => answer.statusCode)).toEqual(new Array(12).fill(200));
  });

  test('loginThrottle: false (--no-login-throttle) lets every failure through to the password check', async () => {
    api = await buildTestApi({ api: SMALL, loginThrottle: false });
    const statuses: number[] = [];
    for (let n = 0; n < 8; n += 1) statuses.push((await loginFrom(api.app, '192.0.2.10', wrong(ALICE.email))).statusCode);
    expect(statuses).toEqual(new Array(8).fill(401));
    expect((await loginFrom(api.app, '192.0.2.10', ALICE)).statusCode).toBe(200);
  });

  test('a flood past the queue of password checks is answered 503 with Retry-After at once', async () => {
    api = await buildTestApi({ api: { ...SMALL, passwordHashing: { concurrency: 1, maxQueued: 3 } }, loginThrottle: false });
    const answers = await Promise.all(Array.from({ length: 12 }, (_, n) => loginFrom(api!.app, `10.0.0.${n}`, wrong(`u${n}@example.com`))));
    const busy = answers.filter((answer) => answer.statusCode === 503);
    expect(answers.filter((answer) => answer.statusCode === 401).length).toBeGreaterThanOrEqual(4);
    expect(busy.length).toBeGreaterThanOrEqual(1);
    expect(busy.length + answers.filter((answer) => answer.statusCode === 401).length).toBe(12);
    expect(busy[0]!.headers['retry-after']).toBe('1');
    expect(busy[0]!.json()).toEqual({ message: 'Too many logins at once; try again shortly' });
  });
});

describe('AuthService.login', () => {
  async function service(fixture: Fixture, clock = new ManualClock()): Promise<AuthService> {
    return AuthService.create({
      accounts: fixture.accounts,
      secret: new TextEncoder().encode('x'.repeat(32)),
      accessTokenTtlSeconds: 60,
      refreshTokenTtlSeconds: 60,
      sessionMaxLifetimeSeconds: 60,
      store: new MemorySessionStore({ clock }),
      clock,
      loginThrottle: fixture.api.loginThrottle,
      passwordHashing: { concurrency: 1, maxQueued: 100 },
    });
  }

  test('refuses a throttled login before any scrypt work', async () => {
    const auth = await service(testFixture(SMALL));
    for (let n = 0; n < 4; n += 1) await expect(auth.login(`u${n}@example.com`, 'wrong', '192.0.2.1')).rejects.toMatchObject({ code: 'INVALID_CREDENTIALS' });
    expect(auth.loginGuards.hashing.stats.started).toBe(4);
    for (let n = 0; n < 50; n += 1) {
      await expect(auth.login(ALICE.email, ALICE.password, '192.0.2.1')).rejects.toMatchObject({ code: 'LOGIN_THROTTLED', statusCode: 429, retryAfterSeconds: 5 });
    }
    expect(auth.loginGuards.hashing.stats.started).toBe(4);
  });

  test('during a flood from one address, a login from another is checked first, not refused', async () => {
    const fixture = testFixture({ ...SMALL, passwordHashing: { concurrency: 1, maxQueued: 4 } });
    const auth = await AuthService.create({
      accounts: fixture.accounts,
      secret: new TextEncoder().encode('x'.repeat(32)),
      accessTokenTtlSeconds: 60,
      refreshTokenTtlSeconds: 60,
      sessionMaxLifetimeSeconds: 60,
      store: new MemorySessionStore({ clock: new ManualClock() }),
      clock: new ManualClock(),
      loginThrottle: fixture.api.loginThrottle,
      passwordHashing: fixture.api.passwordHashing,
    });
    // Each outcome is recorded as it settles, in order.
    const finished: string[] = [];
    const settle = (name: string, login: Promise<unknown>): Promise<void> =>
      login.then(
        () => void finished.push(`${name} 200`),
        (error: { code: string }) => void finished.push(`${name} ${error.code}`),
      );
    const flood = Array.from({ length: 8 }, (_, n) => settle(`flood${n}`, auth.login(`flood${n}@example.com`, 'wrong', '192.0.2.66')));
    const real = settle('real', auth.login(ALICE.email, ALICE.password, '198.51.100.7'));
    await Promise.all([...flood, real]);
    // flood0 was running; flood1-4 filled the line of 4, flood5-7 were refused at once; the real
    // login bumped the last in line (flood4) and was checked right after flood0.
    expect(finished).toEqual([
      'flood5 LOGIN_BUSY',
      'flood6 LOGIN_BUSY',
      'flood7 LOGIN_BUSY',
      'flood4 LOGIN_BUSY',
      'flood0 INVALID_CREDENTIALS',
      'real 200',
      'flood1 INVALID_CREDENTIALS',
      'flood2 INVALID_CREDENTIALS',
      'flood3 INVALID_CREDENTIALS',
    ]);
  });

  test('runs one password check at a time, however many logins arrive together', async () => {
    const fixture = testFixture({ ...SMALL, loginThrottle: { ...SMALL.loginThrottle!, enabled: false } });
    const auth = await service(fixture);
    const results = await Promise.allSettled(Array.from({ length: 10 }, (_, n) => auth.login(ALICE.email, n === 9 ? ALICE.password : 'wrong', `10.0.0.${n}`)));
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
    expect(auth.loginGuards.hashing.stats).toMatchObject({ started: 10, peakRunning: 1, running: 0, queued: 0 });
  });
});
