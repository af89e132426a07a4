/**
 * A client generated from the served OpenAPI document, the way an app team would make one (issue
 * 19, "How it will be checked"): Redocly's linter, with its recommended rules, has nothing to say of
 * `GET /v1/openapi.json` but that the WebSocket route has no 2XX; openapi-typescript turns it into
 * types; tsc type-checks a small program written against those types with openapi-fetch (strict, and with `@ts-expect-error` lines that
 * fail the check if the types were loose); and the program runs against the live simulator: login,
 * refresh, read a station, unlock a lock, and the 401 and 404 answers with their typed error body.
 *
 * The program and the generated types are written to a temporary directory whose `node_modules` is
 * a link to this checkout's, so they resolve `openapi-fetch` as an app would.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type StartedSimulator } from '../../../src/simulator/start-simulator.js';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../../..');

/** The program an app team would write against the generated types. */
const CONSUMER = `
import createClient from 'openapi-fetch';
import type { components, paths } from './v1-api.js';

type TokenPair = components['schemas']['TokenPair'];
type Station = components['schemas']['Station'];
type UnlockResult = components['schemas']['UnlockResult'];
type ApiError = components['schemas']['Error'];

const client = createClient<paths>({ baseUrl: process.env.STATION_SIM_API_URL! });

const login = await client.POST('/v1/auth/login', { body: { email: 'ci@example.com', password: 'ci-password' } });
if (!login.data) throw new Error('login failed: ' + login.response.status);
const first: TokenPair = login.data;

const refreshed = await client.POST('/v1/auth/refresh', { body: { refreshToken: first.refreshToken } });
if (!refreshed.data) throw new Error('refresh failed: ' + refreshed.response.status);
const tokens: TokenPair = refreshed.data;
const auth = { headers: { authorization: 'Bearer ' + tokens.accessToken } };

const read = await client.GET('/v1/stations/{station_token}', { params: { path: { station_token: 'CI-1' } }, ...auth });
if (!read.data) throw new Error('read failed: ' + read.response.status);
const station: Station = read.data;
const lock = station.locks[0];
if (!lock) throw new Error('CI-1 has no lock');

const unlock = await client.POST('/v1/stations/{station_token}/locks/{lock_id}/unlock', {
  params: { path: { station_token: 'CI-1', lock_id: lock.lockId } },
  ...auth,
});
const unlocked: UnlockResult | undefined = unlock.data;

const anonymous = await client.GET('/v1/stations/{station_token}', { params: { path: { station_token: 'CI-1' } } });
const unauthorized: ApiError | undefined = anonymous.error;
const missing = await client.GET('/v1/stations/{station_token}', { params: { path: { station_token: 'NO-SUCH-STATION' } }, ...auth });
const notFound: ApiError | undefined = missing.error;

// Never called: each line must not type-check, or the generated types are looser than the document.
export function looseTypesWouldPass(): void {
  // @ts-expect-error the password is required
  void client.POST('/v1/auth/login', { body: { email: 'ci@example.com' } });
  // @ts-expect-error no such route
  void client.GET('/v1/stations');
  // @ts-expect-error the station token is a path parameter of the route
  void client.GET('/v1/stations/{station_token}', { params: { path: {} } });
  // @ts-expect-error a lock's status is locked, unlocked or jammed
  const status: Station['locks'][number]['status'] = 'open';
  void status;
}

console.log(JSON.stringify({
  login: { status: login.response.status, keys: Object.keys(first).sort() },
  refresh: { status: refreshed.response.status, rotated: tokens.refreshToken !== first.refreshToken },
  station: { status: read.response.status, stationStatus: station.status, lockIds: station.locks.map((l) => l.lockId) },
  unlock: { status: unlock.response.status, body: unlocked },
  unauthorized: { status: anonymous.response.status, message: unauthorized?.message },
  notFound: { status: missing.response.status, message: notFound?.message },
}));
`;

let sim: StartedSimulator<true>;
let text: string;
let dir: string;
/** What openapi-typescript generated from the served document. */
let generated: string;

beforeAll(async () => {
  sim = await startSimulator({ fixture: 'ci', httpPort: 0, mqttPort: 0 });
  const response = await fetch(`${sim.apiUrl}/v1/openapi.json`);
  expect(response.status).toBe(200);
  text = await response.text();
  dir = await mkdtemp(join(tmpdir(), 'station-sim-openapi-client-'));
  await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  await writeFile(join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  await writeFile(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noUncheckedIndexedAccess: true, noEmit: true, skipLibCheck: true, types: ['node'] },
      files: ['consumer.ts'],
    }),
  );
  generated = astToString(await openapiTS(text));
  await writeFile(join(dir, 'v1-api.ts'), generated);
  await writeFile(join(dir, 'consumer.ts'), CONSUMER);
});
afterAll(async () => {
  await sim?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('a client generated from GET /v1/openapi.json', () => {
  it("passes Redocly's recommended rules", async () => {
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({ source: text, absoluteRef: `${sim.apiUrl}/v1/openapi.json`, config });
    // One warning is right: a WebSocket upgrade answers 101 (RFC 6455), never a 2XX.
    expect(problems.map((p) => `${p.severity} ${p.ruleId} at ${p.location[0]?.pointer ?? '?'}: ${p.message}`)).toEqual([
      'warn operation-2xx-response at #/paths/~1sim~1v1~1events/get/responses: Operation must have at least one `2XX` response.',
    ]);
  });

  it('is generated by openapi-typescript, with the named components', () => {
    const source = generated;
    for (const name of ['TokenPair', 'Station', 'Lock', 'UnlockResult', 'Error', 'SimStation']) expect(source).toMatch(new RegExp(`^\\s+${name}: \\{`, 'm'));
    expect(source).toContain('"/v1/stations/{station_token}/locks/{lock_id}/unlock"');
    expect(source).toContain('"/sim/v1/events"');
  });

  it('type-checks a program written against it (tsc, strict)', async () => {
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
    const result = await run(process.execPath, [tsc, '-p', join(dir, 'tsconfig.json')], { cwd: dir }).then(
      () => 'no errors',
      (error: { stdout: string }) => error.stdout,
    );
    expect(result).toBe('no errors');
  });

  it('runs that program against the simulator: login, refresh, read, unlock, 401, 404', async () => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'consumer.ts'], {
      cwd: dir,
      env: { ...process.env, STATION_SIM_API_URL: sim.apiUrl },
      timeout: 60_000,
    });
    const seen = JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, Record<string, unknown>>;
    expect(seen.login).toEqual({ status: 200, keys: ['accessToken', 'refreshToken'] });
    expect(seen.refresh).toEqual({ status: 200, rotated: true });
    expect(seen.station).toEqual({ status: 200, stationStatus: 'online', lockIds: ['1', '2'] });
    expect(seen.unlock).toEqual({ status: 200, body: { success: true } });
    expect(seen.unauthorized).toEqual({ status: 401, message: 'Token is invalid' });
    expect(seen.notFound).toEqual({ status: 404, message: 'Station not found' });
  });
});
