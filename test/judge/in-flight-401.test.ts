/**
 * `client.token-after-401` judges a request by when its client could have started it, not by the
 * order requests arrived in (docs/judge.md, "After"): reads sent in parallel on separate
 * connections, or queued by a client's pool behind the first 401, are no repeat of it. The same
 * call sent again with the refused token is one, and so is any request with it more than
 * `inFlightMs` after the 401.
 */
import net from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { ControlClient, createClient, isApiError } from '../../src/client/index.js';
import { startSimulator, type StartedSimulator } from '../../src/simulator/start-simulator.js';
import { expectJudgeFindings } from '../helpers/judge-findings.js';

expectJudgeFindings('sends a refused token again on purpose, to see that told');

const ACCOUNT = { email: 'inflight@example.com', password: 'inflight-password-1' };
const TOKENS = ['IF-1', 'IF-2', 'IF-3', 'IF-4'];
const FIXTURE = {
  api: { loginThrottle: { enabled: false } },
  accounts: [{ ...ACCOUNT, stations: TOKENS }],
  stations: TOKENS.map((token, index) => ({ token, stationId: index + 1, locks: [{ lockId: '1' }] })),
};

let sim: StartedSimulator<true> | undefined;
afterEach(async () => {
  await sim?.stop();
  sim = undefined;
});

async function login(apiUrl: string): Promise<string> {
  const response = await fetch(`${apiUrl}/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ACCOUNT) });
  expect(response.status).toBe(200);
  return ((await response.json()) as { accessToken: string }).accessToken;
}

async function revokeAll(apiUrl: string, accessToken: string): Promise<void> {
  const response = await fetch(`${apiUrl}/v1/auth/revoke-all`, { method: 'POST', headers: { authorization: `Bearer ${accessToken}` } });
  expect(response.status).toBe(200);
}

/** Bare connections, each connected before anything is written: every request on them is in flight before any answer. */
async function connectAll(apiUrl: string, count: number): Promise<net.Socket[]> {
  const { hostname, port } = new URL(apiUrl);
  return Promise.all(
    Array.from({ length: count }, () => new Promise<net.Socket>((resolve, reject) => {
      const socket = net.connect(Number(port), hostname, () => resolve(socket));
      socket.once('error', reject);
    })),
  );
}

/** Writes one GET and reads until its status line and body have come (Content-Length). */
function get(socket: net.Socket, path: string, accessToken: string): Promise<number> {
  return new Promise((resolve, reject) => {
    let raw = '';
    const onData = (chunk: Buffer): void => {
      raw += chunk.toString('latin1');
      const end = raw.indexOf('\r\n\r\n');
      if (end === -1) return;
      const length = Number(/content-length: *(\d+)/i.exec(raw.slice(0, end))?.[1] ?? 0);
      if (raw.length < end + 4 + length) return;
      socket.off('data', onData);
      resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1] ?? 0));
    };
    socket.on('data', onData);
    socket.once('error', reject);
    socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${accessToken}\r\n\r\n`);
  });
}

it('does not judge parallel reads on separate connections, in flight when the first 401 went out', async () => {
  sim = await startSimulator({ fixture: FIXTURE });
  const stale = await login(sim.apiUrl);
  // Another device of the same account signs everything out.
  await revokeAll(sim.apiUrl, await login(sim.apiUrl));
  const sockets = await connectAll(sim.apiUrl, TOKENS.length);
  const statuses = await Promise.all(sockets.map((socket, index) => get(socket, `/v1/stations/${TOKENS[index]}`, stale)));
  expect(statuses).toEqual([401, 401, 401, 401]);
  const control = new ControlClient({ url: sim.controlUrl });
  expect((await control.judge()).summary).toEqual({});

  // The same call again with the refused token: a retry, however soon.
  expect(await get(sockets[0]!, `/v1/stations/${TOKENS[0]}`, stale)).toBe(401);
  const judged = await control.judge();
  expect(judged.summary).toEqual({ 'client.token-after-401': 1 });
  expect(judged.findings[0]).toMatchObject({ rule: 'client.token-after-401', route: 'GET /v1/stations/:station_token', client: expect.any(String) });
  for (const socket of sockets) socket.destroy();
});

it('judges a refused token sent with another call more than inFlightMs after its 401', async () => {
  // The API stamps requests from the simulator's clock: a manual one steps past the window exactly.
  sim = await startSimulator({ fixture: { ...FIXTURE, judge: { rules: { 'client.token-after-401': { inFlightMs: 20 } } } }, clock: 'manual' });
  const stale = await login(sim.apiUrl);
  await revokeAll(sim.apiUrl, stale);
  const [first] = await connectAll(sim.apiUrl, 1);
  expect(await get(first!, `/v1/stations/${TOKENS[0]}`, stale)).toBe(401);
  // Past the window in which a request may have been started before the 401.
  await sim.clock.advance(21);
  const [second] = await connectAll(sim.apiUrl, 1);
  expect(await get(second!, `/v1/stations/${TOKENS[1]}`, stale)).toBe(401);
  expect((await new ControlClient({ url: sim.controlUrl }).judge()).summary).toEqual({ 'client.token-after-401': 1 });
  first!.destroy();
  second!.destroy();
});

it('the reference client reading four stations in parallel after revoke-all breaks no rule', async () => {
  sim = await startSimulator({ fixture: FIXTURE });
  const client = createClient({ baseUrl: sim.apiUrl, ...ACCOUNT });
  await client.login();
  await client.getStation(TOKENS[0]!);
  await revokeAll(sim.apiUrl, await login(sim.apiUrl));
  // The client renews once (the refresh is refused after revoke-all, so it logs in) and reads again.
  const read = await Promise.all(TOKENS.map((token) => client.getStation(token).catch((error: unknown) => (isApiError(error) ? error.status : error))));
  for (const station of read) expect(station).toMatchObject({ status: 'online' });
  expect((await new ControlClient({ url: sim.controlUrl }).judge()).summary).toEqual({});
});
