/**
 * Sessions as token families (RFC 9700, section 4.14.2) with an absolute lifetime, in both session
 * stores; then what only the Redis store does: several API instances on one Redis, a restart, and
 * Redis going away and coming back. Time moves by the injected clock, never by sleeping; where
 * another instance must hear of a revocation, the test polls with a bounded deadline.
 */
import { afterEach, describe, expect, test, vi } from 'vitest';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { ManualClock } from '../../../src/shared/clock.js';
import { buildTestApi, type TestApi } from '../../helpers/test-api.js';
import { ALICE, BOB } from '../../helpers/test-fixture.js';
import { eventually } from '../../helpers/eventually.js';
import { sessionStoresForFile, startRedis } from '../../helpers/redis-server.js';
import { freePort } from '../../helpers/free-port.js';
import type { TokenPair } from '../../../src/service/http/api-schemas.js';
import { startSimulator } from '../../../src/simulator/start-simulator.js';

const STATION = '/v1/stations/S-1';
const stores = sessionStoresForFile('t');
const HAVE_REDIS = stores.haveRedis;
const STORES = stores.each;

const apis: TestApi[] = [];
afterEach(async () => {
  await Promise.all(apis.splice(0).map((api) => api.app.close()));
});

/** Every test gets keys of its own on the shared server. */
const freshPrefix = stores.freshPrefix;

async function start(options: Parameters<typeof buildTestApi>[0] = {}): Promise<TestApi> {
  const api = await buildTestApi(options);
  apis.push(api);
  return api;
}

async function refresh(api: TestApi, pair: TokenPair): Promise<{ status: number; pair: TokenPair }> {
  const response = await api.post('/v1/auth/refresh', { refreshToken: pair.refreshToken });
  return { status: response.statusCode, pair: response.json<TokenPair>() };
}


describe.each(STORES)('token families (%s store)', (_kind, store) => {
  test('reusing a rotated refresh token revokes its whole family, access tokens included', async () => {
    const clock = new ManualClock();
    const api = await start({ clock, ...store() });
    const first = await api.login();
    const other = await api.login();
    const second = await refresh(api, first);
    expect(second.status).toBe(200);
    expect((await api.get(STATION, second.pair.accessToken)).statusCode).toBe(200);

    const replay = await api.post('/v1/auth/refresh', { refreshToken: first.refreshToken });
    expect(replay.statusCode).toBe(401);
    expect(replay.json()).toEqual({ message: 'Token is invalid' });
    // The newest pair of the family is dead too: the replay may be the thief's or the client's.
    expect((await refresh(api, second.pair)).status).toBe(401);
    expect((await api.get(STATION, second.pair.accessToken)).statusCode).toBe(401);
    expect((await api.get(STATION, first.accessToken)).statusCode).toBe(401);
    // Another session of the same account is another family, untouched.
    expect((await api.get(STATION, other.accessToken)).statusCode).toBe(200);
    expect((await refresh(api, other)).status).toBe(200);
  });

  test('a session ends at its absolute lifetime however often it is refreshed; late refresh tokens are clamped to its end', async () => {
    const clock = new ManualClock();
    const api = await start({ clock, api: { accessTokenTtlSeconds: 60, refreshTokenTtlSeconds: 100, sessionMaxLifetimeSeconds: 250 }, ...store() });
    let pair = await api.login();
    for (const step of [90, 90, 60]) {
      clock.advance(step * 1000); // t = 90, 180, 240 s: each refresh token is still within its 100 s
      const next = await refresh(api, pair);
      expect(next.status).toBe(200);
      pair = next.pair;
    }
    // Issued at 240 s, this token would live to 340 s; the session ends at 250 s.
    clock.advance(9000);
    const keep = pair;
    const atNine = await refresh(api, keep);
    expect(atNine.status).toBe(200);
    clock.advance(1000); // 250 s
    expect((await refresh(api, atNine.pair)).status).toBe(401);
    // A new login is a new session with a new end.
    const fresh = await api.login();
    expect((await refresh(api, fresh)).status).toBe(200);
  });

  test('logout (revoke) ends the family: its refresh and access tokens, not the other sessions', async () => {
    const api = await start(store());
    const one = await api.login();
    const two = await api.login();
    const rotated = await refresh(api, one);
    expect((await api.post('/v1/auth/revoke', { refreshToken: rotated.pair.refreshToken })).json()).toEqual({ success: true });
    expect((await refresh(api, rotated.pair)).status).toBe(401);
    expect((await api.get(STATION, rotated.pair.accessToken)).statusCode).toBe(401);
    expect((await api.get(STATION, one.accessToken)).statusCode).toBe(401);
    expect((await api.get(STATION, two.accessToken)).statusCode).toBe(200);
    // Revoking a token already rotated ends its family as well.
    const three = await api.login();
    const threeNext = await refresh(api, three);
    await api.post('/v1/auth/revoke', { refreshToken: three.refreshToken });
    expect((await api.get(STATION, threeNext.pair.accessToken)).statusCode).toBe(401);
  });

  test('revoke-all ends every family of the account and not those of another', async () => {
    const api = await start(store());
    const alice = await api.login();
    const bob = await api.login(BOB);
    expect((await api.post('/v1/auth/revoke-all', undefined, alice.accessToken)).statusCode).toBe(200);
    expect((await api.get(STATION, alice.accessToken)).statusCode).toBe(401);
    expect((await refresh(api, alice)).status).toBe(401);
    expect((await api.get('/v1/stations/S-BOB', bob.accessToken)).statusCode).toBe(200);
    const after = await api.login(ALICE);
    expect((await api.get(STATION, after.accessToken)).statusCode).toBe(200);
  });
});

describe('session lifetime settings', () => {
  test('a maximum session lifetime below the refresh token lifetime is refused, naming both', async () => {
    await expect(start({ api: { refreshTokenTtlSeconds: 100 }, sessionMaxLifetimeSeconds: 99 })).rejects.toMatchObject({
      code: 'BAD_REQUEST',
      message: expect.stringMatching(/sessionMaxLifetimeSeconds, 99 s\) must be at least the refresh token lifetime \(refreshTokenTtlSeconds, 100 s\)/),
    });
  });

  test('the memory store remembers used tokens within its bound', async () => {
    const { MemorySessionStore } = await import('../../../src/service/auth/memory-session-store.js');
    const clock = new ManualClock();
    const store = new MemorySessionStore({ clock, maxUsedTokens: 3 });
    const family = { accountId: 'a', endsAt: clock.now() + 10_000, keepUntil: clock.now() + 20_000 };
    const record = (n: number) => ({ sid: 's', accountId: 'a', gen: 0, expiresAt: clock.now() + 5000 + n });
    await store.startFamily('s', family, { hash: 'h0', record: record(0) });
    for (let n = 1; n < 6; n += 1) await store.saveRefresh(`h${n}`, record(n), family.keepUntil);
    for (let n = 0; n < 6; n += 1) expect((await store.consumeRefresh(`h${n}`)).outcome).toBe('consumed');
    expect(store.sizes.used).toBe(3);
    expect((await store.consumeRefresh('h5')).outcome).toBe('reused');
    expect((await store.consumeRefresh('h0')).outcome).toBe('unknown'); // forgotten: refused all the same
    // Past the family's retention a sweep forgets it all.
    clock.advance(80_000);
    await store.saveRefresh('later', record(0), 0);
    expect(store.sizes).toEqual({ refresh: 1, used: 0, families: 0 });
  });
});

describe.skipIf(!HAVE_REDIS)('Redis session store: several instances, restarts, outages', () => {
  async function pairOfApis(options: Parameters<typeof buildTestApi>[0] = {}): Promise<[TestApi, TestApi, string]> {
    const prefix = freshPrefix();
    const a = await start({ state: stores.server().url, stateKeyPrefix: prefix, ...options });
    const b = await start({ state: stores.server().url, stateKeyPrefix: prefix, ...options });
    return [a, b, prefix];
  }

  test('two instances agree on rotation, reuse, revoke and revoke-all', async () => {
    const [a, b] = await pairOfApis();
    const pair = await a.login();
    expect((await b.get(STATION, pair.accessToken)).statusCode).toBe(200);

    // A token consumed on A is used up on B, and the replay on B kills the family everywhere.
    const rotated = await refresh(a, pair);
    expect(rotated.status).toBe(200);
    expect((await b.get(STATION, rotated.pair.accessToken)).statusCode).toBe(200);
    expect((await refresh(b, pair)).status).toBe(401);
    expect((await refresh(a, rotated.pair)).status).toBe(401);
    await eventually(async () => expect((await a.get(STATION, rotated.pair.accessToken)).statusCode).toBe(401), { what: 'A to hear of the family revoked on B' });

    // Logout on B ends the session on A.
    const session = await a.login();
    expect((await a.get(STATION, session.accessToken)).statusCode).toBe(200);
    await b.post('/v1/auth/revoke', { refreshToken: session.refreshToken });
    await eventually(async () => expect((await a.get(STATION, session.accessToken)).statusCode).toBe(401), { what: 'A to hear of the logout on B' });

    // Revoke-all on A: B refuses the old tokens, and accepts the ones issued after.
    const old = await b.login();
    expect((await b.get(STATION, old.accessToken)).statusCode).toBe(200);
    expect((await a.post('/v1/auth/revoke-all', undefined, old.accessToken)).statusCode).toBe(200);
    await eventually(async () => expect((await b.get(STATION, old.accessToken)).statusCode).toBe(401), { what: 'B to hear of the revoke-all on A' });
    expect((await refresh(b, old)).status).toBe(401);
    const fresh = await a.login();
    expect((await b.get(STATION, fresh.accessToken)).statusCode).toBe(200);
    expect((await refresh(b, fresh)).status).toBe(200);
  });

  test('a revocation made while an instance’s subscription is down still reaches it', async () => {
    const [a, b, prefix] = await pairOfApis();
    const pair = await a.login();
    expect((await b.get(STATION, pair.accessToken)).statusCode).toBe(200); // B's cache says: live
    const probe = new Redis(stores.server().url);
    try {
      // Cut every subscriber connection, then revoke before they are back: the message is lost.
      await probe.client('KILL', 'TYPE', 'pubsub');
      expect((await a.post('/v1/auth/revoke-all', undefined, pair.accessToken)).statusCode).toBe(200);
      // B stopped trusting its cache when its subscriber went, so it reads Redis instead.
      await eventually(async () => expect((await b.get(STATION, pair.accessToken)).statusCode).toBe(401), { what: 'B to refuse the token' });
      // And once resubscribed (cache emptied again), it still refuses it, and takes new tokens.
      const subscribers = async (): Promise<number> => Number(((await probe.pubsub('NUMSUB', `${prefix}revocations`)) as [string, number])[1]);
      await eventually(async () => expect(await subscribers()).toBe(2), { what: 'both instances to subscribe again' });
      const fresh = await a.login();
      await eventually(async () => expect((await b.get(STATION, fresh.accessToken)).statusCode).toBe(200), { what: 'B to take a new token' });
      expect((await b.get(STATION, pair.accessToken)).statusCode).toBe(401);
    } finally {
      probe.disconnect();
    }
  });

  test('a warm instance checks access tokens without a Redis round trip', async () => {
    const [a, b] = await pairOfApis();
    const pair = await a.login();
    expect((await b.get(STATION, pair.accessToken)).statusCode).toBe(200); // fills B's cache
    const probe = new Redis(stores.server().url);
    try {
      const processed = async (): Promise<number> => Number(/total_commands_processed:(\d+)/.exec(await probe.info('stats'))?.[1]);
      const before = await processed();
      for (let n = 0; n < 50; n += 1) expect((await b.get(STATION, pair.accessToken)).statusCode).toBe(200);
      // Only the probe's own INFO commands: the 50 requests sent none.
      expect((await processed()) - before).toBeLessThanOrEqual(1);
    } finally {
      probe.disconnect();
    }
  });

  test('of two instances consuming one refresh token at once, exactly one wins', async () => {
    const [a, b] = await pairOfApis();
    for (let round = 0; round < 20; round += 1) {
      const pair = await a.login();
      const results = await Promise.all([refresh(a, pair), refresh(b, pair)]);
      expect(results.map((result) => result.status).sort()).toEqual([200, 401]);
    }
  });

  test('a restarted instance (same secret, same Redis) keeps sessions and revocations', async () => {
    const prefix = freshPrefix();
    const first = await start({ state: stores.server().url, stateKeyPrefix: prefix });
    const kept = await first.login();
    const revoked = await first.login(BOB);
    const killed = await first.login();
    await first.post('/v1/auth/revoke-all', undefined, revoked.accessToken);
    await first.post('/v1/auth/revoke', { refreshToken: killed.refreshToken });
    await first.app.close();
    apis.splice(apis.indexOf(first), 1);

    const second = await start({ state: stores.server().url, stateKeyPrefix: prefix });
    expect((await second.get(STATION, kept.accessToken)).statusCode).toBe(200);
    expect((await refresh(second, kept)).status).toBe(200);
    expect((await second.get('/v1/stations/S-BOB', revoked.accessToken)).statusCode).toBe(401);
    expect((await refresh(second, revoked)).status).toBe(401);
    expect((await second.get(STATION, killed.accessToken)).statusCode).toBe(401);
  });

  test('Redis going away: 503 with a message on auth and station routes, in bounded time; back by itself when Redis is', async () => {
    const own = await startRedis();
    try {
      const notices: string[] = [];
      const api = await start({ state: own.url, onSessionStoreNotice: (message) => notices.push(message) });
      const pair = await api.login();
      await own.kill();
      const requests = [
        () => api.get(STATION, pair.accessToken),
        () => api.post('/v1/auth/login', ALICE),
        () => api.post('/v1/auth/refresh', { refreshToken: pair.refreshToken }),
        () => api.post('/v1/auth/revoke', { refreshToken: pair.refreshToken }),
        () => api.post('/v1/auth/revoke-all', undefined, pair.accessToken),
      ];
      for (const request of requests) {
        const started = Date.now();
        const response = await request();
        expect(Date.now() - started).toBeLessThan(2500);
        expect(response.statusCode).toBe(503);
        expect(response.json()).toEqual({ message: 'The session store cannot be reached; try again shortly' });
      }
      await own.start();
      // Redis came back empty (the test server keeps nothing): old sessions are gone, logins work.
      const again = await eventually(
        async () => {
          const response = await api.post('/v1/auth/login', ALICE);
          expect(response.statusCode).toBe(200);
          return response.json<TokenPair>();
        },
        { what: 'login to work again' },
      );
      expect((await api.get(STATION, again.accessToken)).statusCode).toBe(200);
      expect((await refresh(api, again)).status).toBe(200);
      expect((await api.get(STATION, pair.accessToken)).statusCode).toBe(401);
      // One line when it went, one when it came back; not one per reconnection attempt.
      await eventually(() => expect(notices.length).toBe(2), { what: 'the notice that Redis is back' });
      expect(notices).toEqual([
        'the session store (Redis) is unreachable: the auth and station routes answer 503 until it is back',
        'the session store (Redis) is back',
      ]);
    } finally {
      await own.stop();
    }
  });

  test('a Redis that cannot be reached at start fails the build with one line and no password', async () => {
    const port = await freePort();
    const failure = start({ state: `redis://:hunter2-secret@127.0.0.1:${port}` });
    await expect(failure).rejects.toMatchObject({ code: 'SESSION_STORE_UNAVAILABLE' });
    const message = await failure.catch((error: Error) => error.message);
    expect(message).toMatch(new RegExp(`^cannot reach the session store at redis://\\*\\*\\*@127\\.0\\.0\\.1:${port}: `));
    expect(message).not.toContain('hunter2');
    expect(message).not.toContain('\n');
    await expect(start({ state: 'http://127.0.0.1:6379' })).rejects.toMatchObject({ code: 'BAD_REQUEST', message: expect.stringMatching(/^state must be a Redis URL/) });
  });

  test('a password-protected Redis works with the password in the URL', async () => {
    const guarded = await startRedis({ password: 'pw-for-test' });
    try {
      const api = await start({ state: `redis://:pw-for-test@127.0.0.1:${guarded.port}` });
      const pair = await api.login();
      expect((await refresh(api, pair)).status).toBe(200);
      await expect(start({ state: `redis://:wrong@127.0.0.1:${guarded.port}` })).rejects.toMatchObject({ code: 'SESSION_STORE_UNAVAILABLE' });
    } finally {
      await guarded.stop();
    }
  });

  test('startSimulator takes the store from its state option or the fixture, and stop() closes it', async () => {
    const probe = new Redis(stores.server().url);
    const clients = async (): Promise<number> => String(await probe.client('LIST')).trim().split('\n').length;
    const before = await clients();
    // A shared store needs a shared secret (startSimulator refuses one without it).
    vi.stubEnv('STATION_SIM_JWT_SECRET', randomBytes(32).toString('base64'));
    const fixture = (state?: string) => ({
      ...(state ? { api: { state } } : {}),
      accounts: [{ ...ALICE, stations: ['SIM-1'] }],
      stations: [{ token: 'SIM-1', stationId: 1, locks: [{ lockId: '1' }] }],
    });
    const one = await startSimulator({ fixture: fixture(stores.server().url), brokerThread: false });
    const two = await startSimulator({ fixture: fixture(), state: stores.server().url, brokerThread: false });
    try {
      const login = await fetch(`${one.apiUrl}/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ALICE) });
      const pair = (await login.json()) as TokenPair;
      // A refresh token is opaque and lives in Redis: the other simulator takes it.
      const onTwo = await fetch(`${two.apiUrl}/v1/auth/refresh`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ refreshToken: pair.refreshToken }) });
      expect(onTwo.status).toBe(200);
      expect(await clients()).toBe(before + 4);
    } finally {
      await Promise.all([one.stop(), two.stop()]);
      vi.unstubAllEnvs();
    }
    try {
      await eventually(async () => expect(await clients()).toBe(before), { what: 'the connections to close' });
    } finally {
      probe.disconnect();
    }
  });

  test('closing the app closes its Redis connections; keys carry TTLs and only token hashes', async () => {
    const probe = new Redis(stores.server().url);
    try {
      const clients = async (): Promise<number> => String(await probe.client('LIST')).trim().split('\n').length;
      const before = await clients();
      const prefix = freshPrefix();
      const api = await start({ state: stores.server().url, stateKeyPrefix: prefix });
      expect(await clients()).toBe(before + 2);
      const pair = await api.login();
      await refresh(api, pair);
      const keys = await probe.keys(`${prefix}*`);
      expect(keys.length).toBeGreaterThan(0);
      for (const key of keys) {
        expect(key).not.toContain(pair.refreshToken);
        expect(await probe.pttl(key)).toBeGreaterThan(0);
      }
      await api.app.close();
      apis.splice(apis.indexOf(api), 1);
      await eventually(async () => expect(await clients()).toBe(before), { what: 'the connections to close' });
    } finally {
      probe.disconnect();
    }
  });
});
