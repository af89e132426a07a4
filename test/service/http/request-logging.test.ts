/**
 * Issue: "Tokens, refresh tokens and passwords never appear in logs, URLs or error messages."
 * A full session runs against the real stack with the most verbose logger, and the captured log
 * is searched for every secret that was issued or sent.
 */
import { afterEach, beforeEach, expect, test } from 'vitest';
import net from 'node:net';
import { startApi, type StartedApi } from '../../../src/service/start-api.js';
import type { TokenPair } from '../../../src/service/http/api-schemas.js';
import { startTestBroker, type TestBroker } from '../../helpers/test-broker.js';
import { startFakeStation, type FakeStation } from '../../helpers/fake-station.js';
import { ALICE, testFixture } from '../../helpers/test-fixture.js';
import { LogCapture } from '../../helpers/log-capture.js';

let broker: TestBroker;
let station: FakeStation;
let api: StartedApi;
const log = new LogCapture();
const MQTT_PASSWORD = 'mqtt-password-123';
const secrets: string[] = [MQTT_PASSWORD];

beforeEach(async () => {
  broker = await startTestBroker();
  station = await startFakeStation({ url: broker.url, token: 'S-1', stationId: 1, locks: { '1': 'locked', '2': 'locked' } });
  // Broker credentials are secrets too (aedes accepts any without an authenticate hook).
  const mqttUrl = broker.url.replace('mqtt://', `mqtt://svc:${MQTT_PASSWORD}@`);
  api = await startApi({ fixture: testFixture(), mqttUrl, logger: { level: 'trace', stream: log } });
});

afterEach(async () => {
  await api.stop();
  await station.stop();
  await broker.stop();
});

async function call(method: string, path: string, options: { token?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<Response> {
  return fetch(`${api.url}${path}`, {
    method,
    headers: {
      ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
      ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...options.headers,
    },
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
  });
}

test('a whole session leaves no token or password in the log', async () => {
  secrets.push(ALICE.password, 'wrong-password-attempt');
  expect((await call('POST', '/v1/auth/login', { body: { ...ALICE, password: 'wrong-password-attempt' } })).status).toBe(401);
  const first = (await (await call('POST', '/v1/auth/login', { body: ALICE })).json()) as TokenPair;
  secrets.push(first.accessToken, first.refreshToken);
  const second = (await (await call('POST', '/v1/auth/refresh', { body: { refreshToken: first.refreshToken } })).json()) as TokenPair;
  secrets.push(second.accessToken, second.refreshToken);

  expect((await call('GET', '/v1/stations/S-1', { token: second.accessToken, headers: { cookie: `session=${second.refreshToken}` } })).status).toBe(200);
  // A client that wrongly puts a token in the query string must not get it logged either.
  expect((await call('GET', `/v1/stations/S-1?access_token=${second.accessToken}`, { token: second.accessToken })).status).toBe(200);
  expect(await (await call('POST', '/v1/stations/S-1/locks/1/unlock', { token: second.accessToken })).json()).toEqual({ success: true });
  expect((await call('GET', '/v1/stations/S-1', { token: 'Bearer-garbage.' + first.accessToken })).status).toBe(401);
  // A replayed refresh token (its family is revoked, and the reuse logged without the token).
  expect((await call('POST', '/v1/auth/refresh', { body: { refreshToken: first.refreshToken } })).status).toBe(401);
  expect((await call('POST', '/v1/auth/revoke', { body: { refreshToken: second.refreshToken } })).status).toBe(200);
  const third = (await (await call('POST', '/v1/auth/login', { body: ALICE })).json()) as TokenPair;
  secrets.push(third.accessToken, third.refreshToken);
  expect((await call('POST', '/v1/auth/revoke-all', { token: third.accessToken })).status).toBe(200);
  expect((await call('GET', '/v1/stations/S-1', { token: third.accessToken })).status).toBe(401);

  const text = log.text;
  // The log is really on and says something useful...
  expect(log.lines.length).toBeGreaterThan(20);
  expect(text).toContain('/v1/stations/S-1/locks/1/unlock');
  expect(text).toContain('"statusCode":401');
  expect(text).toContain('"component":"mqtt-gateway"');
  expect(text).toMatch(/unlock [0-9a-f-]{36} sent to S-1\/1/);
  // ...and none of the secrets, whole or as a JWT part (header.payload is not secret alone, the signature is).
  for (const secret of secrets) {
    expect(text).not.toContain(secret);
    if (secret.split('.').length === 3) expect(text).not.toContain(secret.split('.')[2]);
  }
  expect(text).not.toMatch(/authorization/i);
  expect(text).not.toContain('access_token=');
});

test('a 500 is logged with its cause, which stays out of the response', async () => {
  // Break the gateway after start: the route's call into it throws.
  const gateway = api.gateway as unknown as { getStation: () => never };
  gateway.getStation = () => {
    throw new Error('internal detail 1234');
  };
  const { accessToken } = (await (await call('POST', '/v1/auth/login', { body: ALICE })).json()) as TokenPair;
  const response = await call('GET', '/v1/stations/S-1', { token: accessToken });
  expect(response.status).toBe(500);
  expect(await response.text()).toBe('{"message":"Internal server error"}');
  expect(log.text).toContain('internal detail 1234');
  expect(log.text).not.toContain(accessToken);
});

/** Writes `request` as it is on a raw socket and returns the whole answer. */
function rawRequest(url: string, request: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname, () => socket.write(request));
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk));
    socket.on('close', () => resolve(answer));
    socket.on('error', () => resolve(answer));
  });
}

test("requests Node's HTTP parser refuses get the API's error shape, and none of their bytes reach the log", async () => {
  const { accessToken } = (await (await call('POST', '/v1/auth/login', { body: ALICE })).json()) as TokenPair;
  const before = log.lines.length;
  const malformed = await rawRequest(api.url, `GET /v1/stations/S-1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${accessToken}\r\nBad Header Line\r\n\r\n`);
  expect(malformed).toMatch(/^HTTP\/1\.1 400 /);
  expect(malformed.split('\r\n\r\n')[1]).toBe('{"message":"Bad request"}');
  const huge = await rawRequest(api.url, `GET /v1/stations/S-1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${accessToken}\r\nX-Big: ${'a'.repeat(17_000)}\r\n\r\n`);
  expect(huge).toMatch(/^HTTP\/1\.1 431 /);
  expect(huge.split('\r\n\r\n')[1]).toBe('{"message":"Request headers are too large"}');
  // A login whose headers contradict each other: its body, with the password, came in the same packet.
  const body = JSON.stringify(ALICE);
  const login = await rawRequest(
    api.url,
    `POST /v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nContent-Length: 1\r\n\r\n${body}`,
  );
  expect(login).toMatch(/^HTTP\/1\.1 400 /);
  const logged = log.lines.slice(before).join('\n');
  expect(logged).not.toContain(accessToken.split('.')[2]);
  expect(logged).not.toContain(ALICE.password);
  expect(logged).not.toContain('rawPacket');
});

test('the webhooks answer 501 without an error line in the log: only unexpected failures get one', async () => {
  const before = log.lines.length;
  const response = await call('POST', '/v1/webhooks/anything', { body: { event: 'x' } });
  expect(response.status).toBe(501);
  const levels = log.lines.slice(before).map((line) => (JSON.parse(line) as { level: number }).level);
  expect(levels.length).toBeGreaterThan(0);
  expect(levels.filter((level) => level >= 50)).toEqual([]); // pino: 50 is error
});

test('a target in absolute form (through a proxy) or with a fragment is logged as its path alone', async () => {
  const { accessToken } = (await (await call('POST', '/v1/auth/login', { body: ALICE })).json()) as TokenPair;
  const host = new URL(api.url).host;
  const before = log.lines.length;
  const targets = [
    `http://alice%40example.com:${ALICE.password}@${host}/v1/stations/S-1`,
    `http://user:p%40ss%2Fw0rd@${host}/v1/stations/S-1?x=1`,
    `/v1/stations/S-1#access_token=${accessToken}`,
  ];
  for (const target of targets) {
    const answer = await rawRequest(api.url, `GET ${target} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${accessToken}\r\nConnection: close\r\n\r\n`);
    expect(answer.slice(0, 12), target).toBe('HTTP/1.1 200');
  }
  const logged = log.lines.slice(before).flatMap((line) => {
    const url = (JSON.parse(line) as { req?: { url?: string } }).req?.url;
    return url === undefined ? [] : [url];
  });
  expect(logged).toEqual(['/v1/stations/S-1', '/v1/stations/S-1', '/v1/stations/S-1']);
  const text = log.lines.slice(before).join('\n');
  for (const secret of [ALICE.password, 'p%40ss%2Fw0rd', accessToken, 'alice%40example.com']) expect(text).not.toContain(secret);
});
