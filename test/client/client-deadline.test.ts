/**
 * The reference client gives up: a timeout and an AbortSignal, per client and per call, each with
 * its own error (`ApiTimeoutError`, `ApiAbortedError`) apart from `ApiError` and
 * `ApiUnreachableError`. A `hang` API fault never answers; without these a read waited for good.
 * Timeouts run on fake timers against a fetch that answers only when told; one test aborts a
 * request to a real server that never answers.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiAbortedError, ApiError, ApiTimeoutError, ApiUnreachableError, createClient, type FetchLike } from '../../src/client/index.js';

const TOKEN_PAIR = { accessToken: 'not-a-jwt-access', refreshToken: 'not-a-jwt-refresh', expiresIn: 900 };
const STATION = { id: 1, token: 'ST-1', status: 'online', batteryVoltage: 12.4, lastConnection: '2026-01-01T00:00:00Z', locks: [] };

/** A fetch whose requests wait until answered, and reject with the signal's reason when it aborts (as fetch does). */
function heldFetch(): { fetch: FetchLike; requests: { path: string; signal: AbortSignal | undefined; answer: (body: unknown) => void }[] } {
  const requests: { path: string; signal: AbortSignal | undefined; answer: (body: unknown) => void }[] = [];
  const fetch: FetchLike = (input, init) =>
    new Promise<Response>((resolve, reject) => {
      const signal = init.signal ?? undefined;
      signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
      requests.push({ path: `${init.method} ${new URL(input).pathname}`, signal, answer: (body) => resolve(Response.json(body)) });
    });
  return { fetch, requests };
}

const settle = (promise: Promise<unknown>): Promise<unknown> => promise.then(() => 'resolved', (error: unknown) => error);

describe('timeouts (fake timers)', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("gives up after the client's timeoutMs with ApiTimeoutError, the login it waited for included, and aborts the fetch", async () => {
    const held = heldFetch();
    const client = createClient({ baseUrl: 'http://127.0.0.1:8080', email: 'a@example.com', password: 'secret-password', fetch: held.fetch, timeoutMs: 5000 });
    const outcome = settle(client.getStation('ST-1'));
    await vi.advanceTimersByTimeAsync(4999);
    expect(held.requests.map((request) => request.path)).toEqual(['POST /v1/auth/login']);
    expect(held.requests[0]!.signal?.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    const error = await outcome;
    expect(error).toBeInstanceOf(ApiTimeoutError);
    expect(error).not.toBeInstanceOf(ApiUnreachableError);
    expect(error).not.toBeInstanceOf(ApiError);
    expect(error).toMatchObject({
      name: 'ApiTimeoutError',
      code: 'API_TIMEOUT',
      timeoutMs: 5000,
      message: 'GET /v1/stations/ST-1: no answer from the API at http://127.0.0.1:8080 within 5000 ms',
    });
    expect(String((error as Error).message)).not.toContain('secret-password');
    // The login's own request gave up with the client's timeout too: nothing is left waiting.
    expect(held.requests[0]!.signal?.aborted).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("takes a call's timeoutMs over the client's, and leaves no timer behind a call that was answered", async () => {
    const held = heldFetch();
    const client = createClient({ baseUrl: 'http://127.0.0.1:8080', email: 'a@example.com', password: 'p', fetch: held.fetch, timeoutMs: 60_000 });
    const login = client.login();
    held.requests[0]!.answer(TOKEN_PAIR);
    await login;
    expect(vi.getTimerCount()).toBe(0);
    const unlock = settle(client.unlock('ST-1', '1', { timeoutMs: 250 }));
    await vi.advanceTimersByTimeAsync(250);
    expect(await unlock).toMatchObject({ code: 'API_TIMEOUT', timeoutMs: 250, message: expect.stringMatching(/^POST \/v1\/stations\/ST-1\/locks\/1\/unlock: no answer/) });
    const read = client.getStation('ST-1');
    await vi.advanceTimersByTimeAsync(0);
    held.requests.at(-1)!.answer(STATION);
    expect(await read).toEqual(STATION);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('waits for good without a timeout, as before', async () => {
    const held = heldFetch();
    const client = createClient({ baseUrl: 'http://127.0.0.1:8080', email: 'a@example.com', password: 'p', fetch: held.fetch });
    let done = false;
    void client.login().finally(() => {
      done = true;
    });
    await vi.advanceTimersByTimeAsync(3_600_000);
    expect(done).toBe(false);
    held.requests[0]!.answer(TOKEN_PAIR);
    await vi.advanceTimersByTimeAsync(0);
    expect(done).toBe(true);
  });

  it('gives up even when the fetch option ignores the signal', async () => {
    const never: FetchLike = () => new Promise<Response>(() => {});
    const client = createClient({ baseUrl: 'http://127.0.0.1:8080', email: 'a@example.com', password: 'p', fetch: never });
    const outcome = settle(client.login({ timeoutMs: 1000 }));
    await vi.advanceTimersByTimeAsync(1000);
    expect(await outcome).toBeInstanceOf(ApiTimeoutError);
  });

  it('refuses a timeout that is not a number of milliseconds', () => {
    expect(() => createClient({ baseUrl: 'http://127.0.0.1:8080', email: 'a', password: 'p', timeoutMs: -1 })).toThrow(/timeoutMs must be a number of milliseconds/);
  });
});

describe('AbortSignal', () => {
  it("gives up when the call's signal aborts, with ApiAbortedError and the signal's reason as cause", async () => {
    const held = heldFetch();
    const client = createClient({ baseUrl: 'http://127.0.0.1:8080', email: 'a@example.com', password: 'p', fetch: held.fetch });
    const controller = new AbortController();
    const outcome = settle(client.getStation('ST-1', { signal: controller.signal }));
    await Promise.resolve();
    const reason = new Error('test over');
    controller.abort(reason);
    const error = await outcome;
    expect(error).toBeInstanceOf(ApiAbortedError);
    expect(error).not.toBeInstanceOf(ApiTimeoutError);
    expect(error).toMatchObject({ code: 'API_ABORTED', cause: reason, message: "GET /v1/stations/ST-1: aborted by the caller's signal before the API at http://127.0.0.1:8080 answered" });
  });

  it("one caller's abort leaves the login it shares with another going", async () => {
    const held = heldFetch();
    const client = createClient({ baseUrl: 'http://127.0.0.1:8080', email: 'a@example.com', password: 'p', fetch: held.fetch });
    const controller = new AbortController();
    const first = settle(client.getStation('ST-1', { signal: controller.signal }));
    const second = client.getStation('ST-1');
    await Promise.resolve();
    expect(held.requests.map((request) => request.path)).toEqual(['POST /v1/auth/login']);
    controller.abort();
    expect(await first).toBeInstanceOf(ApiAbortedError);
    expect(held.requests[0]!.signal?.aborted).toBe(false);
    held.requests[0]!.answer(TOKEN_PAIR);
    await vi.waitFor(() => expect(held.requests).toHaveLength(2));
    held.requests[1]!.answer(STATION);
    expect(await second).toEqual(STATION);
  });

  it("the client's signal aborts every call, in flight and to come", async () => {
    const held = heldFetch();
    const controller = new AbortController();
    const client = createClient({ baseUrl: 'http://127.0.0.1:8080', email: 'a@example.com', password: 'p', fetch: held.fetch, signal: controller.signal });
    const inFlight = settle(client.login());
    controller.abort();
    expect(await inFlight).toBeInstanceOf(ApiAbortedError);
    expect(held.requests[0]!.signal?.aborted).toBe(true);
    expect(await settle(client.unlock('ST-1', '1'))).toBeInstanceOf(ApiAbortedError);
    expect(held.requests).toHaveLength(1);
  });

  describe('against a server that never answers', () => {
    let server: Server | undefined;
    afterEach(async () => {
      server?.closeAllConnections();
      await new Promise((resolve) => server?.close(resolve));
    });

    it('closes the connection of a read that is aborted', async () => {
      const closed = new Promise<void>((resolve) => {
        server = createServer((request, response) => {
          // The login is answered; the read hangs, as under a `hang` API fault.
          if (request.url === '/v1/auth/login') response.setHeader('content-type', 'application/json').end(JSON.stringify(TOKEN_PAIR));
          else request.socket.once('close', () => resolve());
        });
      });
      await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
      const { port } = server!.address() as AddressInfo;
      const client = createClient({ baseUrl: `http://127.0.0.1:${port}`, email: 'a@example.com', password: 'p' });
      await client.login();
      const received = new Promise<void>((resolve) => server!.once('request', () => resolve()));
      const controller = new AbortController();
      const outcome = settle(client.getStation('ST-1', { signal: controller.signal }));
      await received;
      controller.abort();
      expect(await outcome).toMatchObject({ name: 'ApiAbortedError', code: 'API_ABORTED' });
      await closed;
    });
  });
});
