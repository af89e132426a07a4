/**
 * Two real `station-sim api` processes behind one Redis, as two instances behind a load balancer
 * would run: the Redis URL comes from STATION_SIM_STATE_URL (out of the process list), and a
 * session ended on one process is refused by the other; a third process started later keeps it
 * refused. Then the CLI's refusals of a bad or unreachable `--state`.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CliProcess, runCliToEnd } from '../../helpers/cli-process.js';
import { freePort } from '../../helpers/free-port.js';
import { redisAvailable, startRedis, type RunningRedis } from '../../helpers/redis-server.js';
import { startEmbeddedBroker, type StartedBroker } from '../../../src/broker/embedded-broker.js';
import type { TokenPair } from '../../../src/service/http/api-schemas.js';
import { eventually } from '../../helpers/eventually.js';
import { httpOptions, stateUrl } from '../../../src/cli/option-checks.js';

const HAVE_REDIS = redisAvailable();
const CI_ACCOUNT = { email: 'ci@example.com', password: 'ci-password' };
const SECRET = 'a-shared-secret-for-the-two-api-processes';

describe.skipIf(!HAVE_REDIS)('two API processes on one Redis', () => {
  let redis: RunningRedis;
  let broker: StartedBroker;
  beforeAll(async () => {
    [redis, broker] = await Promise.all([startRedis({ password: 'redis-pw-not-in-argv' }), startEmbeddedBroker({ port: 0 })]);
  });
  afterAll(async () => {
    await Promise.all([redis?.stop(), broker?.stop()]);
  });

  function api(): CliProcess {
    return new CliProcess(['api', '--broker', broker.url, '--fixture', 'fixtures/ci.json', '--http-port', '0', '--json'], {
      STATION_SIM_JWT_SECRET: SECRET,
      STATION_SIM_STATE_URL: `redis://:redis-pw-not-in-argv@127.0.0.1:${redis.port}`,
    });
  }

  async function call(base: string, path: string, init: { body?: unknown; token?: string } = {}): Promise<Response> {
    return fetch(`${base}${path}`, {
      method: init.body === undefined && !path.includes('revoke') ? 'GET' : 'POST',
      headers: {
        ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
        ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    });
  }

  test('agree on rotation, logout and revoke-all; a process started later agrees too', async () => {
    const [a, b] = [api(), api()];
    try {
      const [readyA, readyB] = await Promise.all([a.readyJson(), b.readyJson()]);
      const urlA = readyA.apiUrl as string;
      const urlB = readyB.apiUrl as string;
      const station = '/v1/stations/CI-1';

      const pair = (await (await call(urlA, '/v1/auth/login', { body: CI_ACCOUNT })).json()) as TokenPair;
      expect((await call(urlB, station, { token: pair.accessToken })).status).toBe(200);
      const rotated = await call(urlB, '/v1/auth/refresh', { body: { refreshToken: pair.refreshToken } });
      expect(rotated.status).toBe(200);
      const next = (await rotated.json()) as TokenPair;
      // The token B consumed is used up on A: a replay, which ends the family on both.
      expect((await call(urlA, '/v1/auth/refresh', { body: { refreshToken: pair.refreshToken } })).status).toBe(401);
      await eventually(async () => expect((await call(urlB, station, { token: next.accessToken })).status).toBe(401), { what: 'B to refuse the revoked family' });

      const other = (await (await call(urlB, '/v1/auth/login', { body: CI_ACCOUNT })).json()) as TokenPair;
      expect((await call(urlA, station, { token: other.accessToken })).status).toBe(200);
      expect((await call(urlB, '/v1/auth/revoke-all', { token: other.accessToken })).status).toBe(200);
      await eventually(async () => expect((await call(urlA, station, { token: other.accessToken })).status).toBe(401), { what: 'A to hear of the revoke-all' });

      // A process started after the revocations refuses the same tokens.
      const c = api();
      try {
        const urlC = (await c.readyJson()).apiUrl as string;
        expect((await call(urlC, station, { token: other.accessToken })).status).toBe(401);
        expect((await call(urlC, '/v1/auth/refresh', { body: { refreshToken: other.refreshToken } })).status).toBe(401);
        const fresh = (await (await call(urlC, '/v1/auth/login', { body: CI_ACCOUNT })).json()) as TokenPair;
        expect((await call(urlA, station, { token: fresh.accessToken })).status).toBe(200);
      } finally {
        expect(await c.signal('SIGTERM')).toBe(0);
      }
      for (const cli of [a, b, c]) expect(cli.stdout + cli.stderr).not.toContain('redis-pw-not-in-argv');
    } finally {
      await Promise.all([a.signal('SIGTERM'), b.signal('SIGTERM')]);
    }
    // Three CLI start-ups, one after the other two: about 10 s each on a loaded 2-core machine.
  }, 90_000);
});

describe('the CLI refuses a state it cannot use, in one line', () => {
  test('a URL that is not Redis, from --state or the environment; the password never shown', () => {
    expect(() => stateUrl('http://user:pw-secret@example.com', {})).toThrow(/^--state must be a Redis URL, .*not "http:\/\/\*\*\*@example\.com"$/);
    expect(() => stateUrl(undefined, { STATION_SIM_STATE_URL: 'localhost:6379' })).toThrow(/^STATION_SIM_STATE_URL must be a Redis URL/);
    expect(stateUrl(undefined, { STATION_SIM_STATE_URL: 'redis://:pw@127.0.0.1:6379' })).toBe('redis://:pw@127.0.0.1:6379');
    expect(stateUrl('rediss://h:6380/2', { STATION_SIM_STATE_URL: 'redis://other' })).toBe('rediss://h:6380/2');
    expect(stateUrl(undefined, { STATION_SIM_STATE_URL: '' })).toBeUndefined();
  });

  test('a Redis store without STATION_SIM_JWT_SECRET, from --state or the environment, before anything starts', async () => {
    const refused = await runCliToEnd(['api', '--broker', 'mqtt://127.0.0.1:1', '--fixture', 'fixtures/ci.json', '--state', 'redis://:pw-secret@127.0.0.1:1', '--http-port', '0'], {
      STATION_SIM_JWT_SECRET: '',
    });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    expect(refused.stderr).toMatch(/^station-sim: --state shares sessions between API processes and across restarts, but STATION_SIM_JWT_SECRET is not set/);
    expect(refused.stderr).not.toContain('pw-secret');
    // The same from the environment, for every command that serves /v1; a secret lets it through.
    const env = { STATION_SIM_STATE_URL: 'redis://127.0.0.1:6379' };
    expect(() => httpOptions({}, env)).toThrow(expect.objectContaining({ code: 'JWT_SECRET_REQUIRED', message: expect.stringMatching(/^STATION_SIM_STATE_URL shares sessions/) }));
    expect(httpOptions({}, { ...env, STATION_SIM_JWT_SECRET: SECRET }).state).toBe('redis://127.0.0.1:6379');
    expect(httpOptions({}, {}).state).toBeUndefined();
  }, 60_000);

  test('a Redis that does not answer at start', async () => {
    const port = await freePort();
    const broker = await startEmbeddedBroker({ port: 0 });
    try {
      const gone = await runCliToEnd(['api', '--broker', broker.url, '--fixture', 'fixtures/ci.json', '--state', `redis://:pw-secret@127.0.0.1:${port}`, '--http-port', '0'], {
        STATION_SIM_JWT_SECRET: SECRET,
      });
      expect(gone.code).toBe(1);
      expect(gone.stderr.trim().split('\n')).toHaveLength(1);
      expect(gone.stderr).toContain(`cannot reach the session store at redis://***@127.0.0.1:${port}`);
      expect(gone.stderr).not.toContain('pw-secret');
    } finally {
      await broker.stop();
    }
  }, 60_000);
});
