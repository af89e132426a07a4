/**
 * Faults of the `/v1` API through `/sim/v1/api-faults`, over real HTTP against a whole simulator:
 * each kind, count, seeded probability, per route and per station, bad specs, and a hung request
 * that must not hold `stop()`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type StartedSimulator } from '../../src/simulator/start-simulator.js';
import type { SimStreamEvent } from '../../src/control/wire-schemas.js';
import { expectJudgeFindings } from '../helpers/judge-findings.js';

expectJudgeFindings('sends a token again after an injected 401, to see the fault answer it');

const STATION = '/v1/stations/:station_token';
const REFRESH = 'POST /v1/auth/refresh';

interface Sim {
  sim: StartedSimulator;
  control(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }>;
  /** A request of the API with the session's access token. */
  get(token: string, init?: RequestInit): Promise<Response>;
  accessToken: string;
  refreshToken: string;
}

async function start(seed?: number): Promise<Sim> {
  const sim = await startSimulator({ fixture: 'fixtures/ci.json', ...(seed === undefined ? {} : { seed }) });
  const login = await fetch(`${sim.apiUrl}/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'ci@example.com', password: 'ci-password' }),
  });
  const tokens = (await login.json()) as { accessToken: string; refreshToken: string };
  return {
    sim,
    ...tokens,
    control: async (method, path, body) => {
      const response = await fetch(`${sim.controlUrl}${path}`, {
        method,
        ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
      });
      return { status: response.status, json: await response.json() };
    },
    get: (token, init) => fetch(`${sim.apiUrl}/v1/stations/${token}`, { ...init, headers: { authorization: `Bearer ${tokens.accessToken}` } }),
  };
}

/** The statuses of `n` reads of a station, one after the other. */
async function statuses(s: Sim, n: number, token = 'CI-1'): Promise<number[]> {
  const seen: number[] = [];
  for (let i = 0; i < n; i += 1) {
    const response = await s.get(token);
    await response.arrayBuffer();
    seen.push(response.status);
  }
  return seen;
}

async function journalSince(s: Sim, mark: number): Promise<any[]> {
  return (await s.control('GET', `/journal?since=${mark}&kind=api`)).json.entries;
}

describe('/sim/v1/api-faults', () => {
  let s: Sim;
  beforeAll(async () => {
    s = await start();
  });
  afterAll(async () => {
    await s.sim.stop();
  });

  it('answers with a status and message for the next count requests, then removes itself', async () => {
    const events: SimStreamEvent[] = [];
    const unsubscribe = s.sim.http!.control.hub.subscribe((event) => events.push(event));
    const mark = (await s.control('GET', '/journal?limit=1&since=9007199254740991')).json.mark;
    const added = await s.control('POST', '/api-faults', { route: `GET ${STATION}`, kind: 'status', status: 401, count: 2 });
    expect(added).toEqual({ status: 201, json: { id: expect.any(String), route: `GET ${STATION}`, kind: 'status', status: 401, message: 'Token is invalid', count: 2, remaining: 2 } });
    const first = await s.get('CI-1');
    expect(first.status).toBe(401);
    expect(first.headers.get('www-authenticate')).toBe('Bearer realm="station-sim", error="invalid_token"');
    expect(await first.json()).toEqual({ message: 'Token is invalid' });
    expect((await s.control('GET', '/api-faults')).json).toEqual({ faults: [{ ...added.json, remaining: 1 }] });
    expect(await statuses(s, 2)).toEqual([401, 200]);
    expect((await s.control('GET', '/api-faults')).json).toEqual({ faults: [] });
    unsubscribe();
    const journal = await journalSince(s, mark);
    expect(journal.map((entry) => [entry.status, entry.fault])).toEqual([
      [401, added.json.id],
      [401, added.json.id],
      [200, undefined],
    ]);
    expect(events.filter((event) => event.type === 'control').map((event) => (event as { action: string }).action)).toEqual([
      `api fault ${added.json.id}: status 401 on GET ${STATION}, 2 times`,
    ]);
  });

  it('sends Retry-After and a message of its own', async () => {
    await s.control('POST', '/api-faults', { kind: 'status', status: 429, retryAfterSeconds: 7, message: 'Slow down', count: 1 });
    const response = await s.get('CI-1');
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('7');
    expect(await response.json()).toEqual({ message: 'Slow down' });
    await s.control('POST', '/api-faults', { kind: 'status', status: 503, count: 1 });
    const unavailable = await s.get('CI-1');
    expect([unavailable.status, await unavailable.json()]).toEqual([503, { message: 'Service Unavailable' }]);
  });

  it('adds latency, then answers as usual', async () => {
    await s.control('POST', '/api-faults', { route: `GET ${STATION}`, kind: 'latency', latencyMs: 300, count: 1 });
    const started = performance.now();
    const response = await s.get('CI-1');
    expect(response.status).toBe(200);
    expect((await response.json()).stationToken ?? 'CI-1').toBe('CI-1');
    // The delay asked for, at least: the request was held, not answered early.
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
  });

  it('resets the connection without an answer, and journals it with status 0', async () => {
    const mark = (await s.control('GET', '/journal?since=9007199254740991')).json.mark;
    const { json: fault } = await s.control('POST', '/api-faults', { route: `GET ${STATION}`, kind: 'reset', count: 1 });
    await expect(s.get('CI-1')).rejects.toThrow(TypeError);
    expect((await s.get('CI-1')).status).toBe(200);
    expect((await journalSince(s, mark)).map((entry) => [entry.route, entry.status, entry.fault])).toEqual([
      [STATION, 0, fault.id],
      [STATION, 200, undefined],
    ]);
  });

  it('hangs until the client gives up', async () => {
    const mark = (await s.control('GET', '/journal?since=9007199254740991')).json.mark;
    const { json: fault } = await s.control('POST', '/api-faults', { route: REFRESH, kind: 'hang', count: 1 });
    const refresh = fetch(`${s.sim.apiUrl}/v1/auth/refresh`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ refreshToken: s.refreshToken }),
      signal: AbortSignal.timeout(400),
    });
    await expect(refresh).rejects.toMatchObject({ name: 'TimeoutError' });
    await expect.poll(async () => (await journalSince(s, mark)).map((entry) => [entry.route, entry.status, entry.fault])).toEqual([['/v1/auth/refresh', 0, fault.id]]);
  });

  it('acts per station and per route only', async () => {
    await s.control('POST', '/api-faults', { route: `GET ${STATION}`, token: 'CI-2', kind: 'status', status: 500 });
    await s.control('POST', '/api-faults', { route: REFRESH, kind: 'status', status: 401 });
    expect(await statuses(s, 1, 'CI-1')).toEqual([200]);
    expect(await statuses(s, 2, 'CI-2')).toEqual([500, 500]);
    const login = await fetch(`${s.sim.apiUrl}/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'ci@example.com', password: 'ci-password' }),
    });
    expect(login.status).toBe(200);
    expect((await s.control('DELETE', '/api-faults')).json).toEqual({ cleared: 2 });
    expect(await statuses(s, 1, 'CI-2')).toEqual([200]);
  });

  it('removes one fault by id, and answers 404 for an unknown one', async () => {
    const { json: fault } = await s.control('POST', '/api-faults', { kind: 'status', status: 500 });
    expect(await s.control('DELETE', `/api-faults/${fault.id}`)).toEqual({ status: 200, json: { cleared: 1 } });
    expect(await s.control('DELETE', `/api-faults/${fault.id}`)).toEqual({ status: 404, json: { message: 'API fault not found' } });
    expect(await statuses(s, 1)).toEqual([200]);
  });

  it('is cleared by a reset', async () => {
    await s.control('POST', '/api-faults', { kind: 'status', status: 500 });
    expect((await s.control('POST', '/reset')).status).toBe(200);
    expect((await s.control('GET', '/api-faults')).json).toEqual({ faults: [] });
    expect(await statuses(s, 1)).toEqual([200]);
  });

  it('refuses a bad spec with 400 saying why', async () => {
    const bad = async (body: unknown) => {
      const answer = await s.control('POST', '/api-faults', body);
      expect(answer.status).toBe(400);
      return answer.json.message as string;
    };
    const unknownRoute = await bad({ route: 'GET /v1/station/:station_token', kind: 'status', status: 500 });
    expect(unknownRoute).toMatch(/^route must be a \/v1 route as api.request events show it, one of: /);
    expect(unknownRoute).toContain(`GET ${STATION}`);
    expect(unknownRoute).toContain(REFRESH);
    expect(await bad({ kind: 'status' })).toBe('a fault of kind "status" needs status (400 to 599)');
    expect(await bad({ kind: 'status', status: 399 })).toMatch(/status/);
    expect(await bad({ kind: 'latency' })).toBe('a fault of kind "latency" needs latencyMs');
    expect(await bad({ kind: 'reset', status: 500 })).toBe('status applies to kind "status" only, not "reset"');
    expect(await bad({ kind: 'hang', latencyMs: 5 })).toBe('latencyMs applies to kind "latency" only, not "hang"');
    expect(await bad({ route: REFRESH, token: 'CI-1', kind: 'reset' })).toBe('route POST /v1/auth/refresh has no station: a fault with token would never match it');
    expect(await bad({ kind: 'reset', count: 0 })).toMatch(/count/);
    expect(await bad({ kind: 'reset', probability: 1.5 })).toMatch(/probability/);
    expect(await bad({ kind: 'reset', colour: 'red' })).toMatch(/colour/);
    expect(await bad({ kind: 'explode' })).toMatch(/kind/);
    expect((await s.control('GET', '/api-faults')).json).toEqual({ faults: [] });
  });
});

describe('API faults with a probability', () => {
  /** Which of 50 reads a fault of probability 0.5 answers (1) or lets through (0). */
  async function pattern(s: Sim): Promise<string> {
    await s.control('POST', '/api-faults', { route: `GET ${STATION}`, kind: 'status', status: 503, probability: 0.5 });
    const seen = await statuses(s, 50);
    await s.control('DELETE', '/api-faults');
    return seen.map((status) => (status === 503 ? '1' : '0')).join('');
  }

  it('decides with the seed: the same seed gives the same pattern, another seed another', async () => {
    const a = await start(11);
    let first: string;
    let again: string;
    let afterReset: string;
    try {
      first = await pattern(a);
      // A reset starts the faults' streams again.
      await a.control('POST', '/reset');
      afterReset = await pattern(a);
    } finally {
      await a.sim.stop();
    }
    const b = await start(11);
    try {
      again = await pattern(b);
    } finally {
      await b.sim.stop();
    }
    const c = await start(12);
    let other: string;
    try {
      other = await pattern(c);
    } finally {
      await c.sim.stop();
    }
    expect(first).toMatch(/1/);
    expect(first).toMatch(/0/);
    expect(again).toBe(first);
    expect(afterReset).toBe(first);
    expect(other).not.toBe(first);
  });
});

describe('a hung request and stop()', () => {
  it('does not hold the simulator from stopping', async () => {
    const s = await start();
    await s.control('POST', '/api-faults', { kind: 'hang', count: 1 });
    // No timeout of its own: only the server's stop can end it.
    const hung = s.get('CI-1').then(
      (response) => `answered ${response.status}`,
      (error: Error) => `failed: ${error.name}`,
    );
    // The fault is used up once the request is held.
    await expect.poll(async () => (await s.control('GET', '/api-faults')).json.faults).toEqual([]);
    let stopped = false;
    const stopping = s.sim.stop().then(() => {
      stopped = true;
    });
    // Bounded: a stop held by the hung request would never resolve.
    const bound = new Promise<void>((resolve) => setTimeout(resolve, 15_000).unref());
    await Promise.race([stopping, bound]);
    expect(stopped).toBe(true);
    expect(await hung).toBe('failed: TypeError');
  });
});
