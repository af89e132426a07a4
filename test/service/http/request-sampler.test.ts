/**
 * Issue 15: "sampling of request lines under load". Over its budget a request's lines are dropped
 * and counted in one summary line a second; warnings, errors, 5xx answers and lines that are not
 * about a request always pass. The one-second window runs on fake timers, not on real waiting.
 */
import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { buildTestApi, type TestApi } from '../../helpers/test-api.js';
import { LogCapture } from '../../helpers/log-capture.js';

interface Line {
  level: number;
  msg: string;
  reqId?: string;
  logged?: number;
  dropped?: number;
  res?: { statusCode: number };
}

let api: TestApi;
let log: LogCapture;
let token: string;

async function build(maxRequestsPerSecond: number): Promise<void> {
  log = new LogCapture();
  api = await buildTestApi({ logger: { stream: log, maxRequestsPerSecond } });
  token = (await api.login()).accessToken;
  // A fresh window, so the login does not count against the budget of the test.
  vi.advanceTimersByTime(1000);
  log.lines.length = 0;
}

const lines = (): Line[] => log.lines.map((line) => JSON.parse(line) as Line);
const withMsg = (msg: string): Line[] => lines().filter((line) => line.msg === msg);

beforeEach(() => {
  // Only the window's interval is faked: fastify's inject runs on real microtasks and immediates.
  vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
});
afterEach(async () => {
  await api.app.close();
  vi.useRealTimers();
});

test('over the budget a request loses all its lines, and one line a second counts them', async () => {
  await build(5);
  for (let i = 0; i < 20; i += 1) expect((await api.get('/v1/stations/S-1', token)).statusCode).toBe(200);
  expect(withMsg('incoming request')).toHaveLength(5);
  expect(withMsg('request completed')).toHaveLength(5);
  // Each logged request has both of its lines: the decision is made once, when it comes in.
  const ids = (msg: string) => withMsg(msg).map((line) => line.reqId);
  expect(ids('request completed')).toEqual(ids('incoming request'));
  expect(withMsg('request lines sampled')).toEqual([]);

  vi.advanceTimersByTime(1000);
  expect(withMsg('request lines sampled')).toMatchObject([{ level: 30, logged: 5, dropped: 15 }]);

  // The next second has a budget of its own, and a second without drops says nothing.
  log.lines.length = 0;
  for (let i = 0; i < 3; i += 1) await api.get('/v1/stations/S-1', token);
  vi.advanceTimersByTime(1000);
  expect(withMsg('incoming request')).toHaveLength(3);
  expect(withMsg('request lines sampled')).toEqual([]);
});

test("a route's own lines (unlock) go with the request's", async () => {
  await build(1);
  for (let i = 0; i < 4; i += 1) await api.post('/v1/stations/S-1/locks/1/unlock', undefined, token);
  expect(api.gateway.unlocks).toHaveLength(4);
  expect(withMsg('unlock')).toHaveLength(1);
  expect(withMsg('incoming request')).toHaveLength(1);
});

test('errors, 5xx answers and lines that are not about a request always pass; 4xx count against the budget', async () => {
  await build(1);
  await api.get('/v1/stations/S-1', token); // uses the budget
  expect((await api.get('/v1/stations/S-1', 'not-a-token')).statusCode).toBe(401);
  expect(lines().filter((line) => line.res?.statusCode === 401)).toEqual([]);

  api.gateway.failWith = new Error('internal detail 1234');
  for (let i = 0; i < 3; i += 1) expect((await api.get('/v1/stations/S-1', token)).statusCode).toBe(500);
  expect(lines().filter((line) => line.msg === 'request failed' && line.level === 50)).toHaveLength(3);
  expect(withMsg('request completed').filter((line) => line.res?.statusCode === 500)).toHaveLength(3);
  // The incoming lines of those three were dropped (the decision comes before the answer).
  expect(withMsg('incoming request')).toHaveLength(1);

  api.app.log.info('not about a request');
  api.app.log.warn('a warning');
  expect(withMsg('not about a request')).toHaveLength(1);
  expect(withMsg('a warning')).toHaveLength(1);

  vi.advanceTimersByTime(1000);
  expect(withMsg('request lines sampled')).toMatchObject([{ logged: 1, dropped: 4 }]);
});

test('closing the app writes the summary of the second in progress', async () => {
  await build(2);
  for (let i = 0; i < 5; i += 1) await api.get('/v1/stations/S-1', token);
  await api.app.close();
  expect(withMsg('request lines sampled')).toMatchObject([{ logged: 2, dropped: 3 }]);
});

test('0 logs every request and never samples', async () => {
  await build(0);
  for (let i = 0; i < 300; i += 1) await api.get('/v1/stations/S-1', token);
  vi.advanceTimersByTime(1000);
  expect(withMsg('incoming request')).toHaveLength(300);
  expect(withMsg('request lines sampled')).toEqual([]);
});

test('the default budget is 100 requests a second', async () => {
  log = new LogCapture();
  api = await buildTestApi({ logger: { stream: log } });
  for (let i = 0; i < 120; i += 1) await api.get('/v1/stations/S-1');
  expect(withMsg('incoming request')).toHaveLength(100);
});
