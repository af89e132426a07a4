/**
 * CommonJS consumers (issue 18, item 5): `require('station-sim')` from Node and `station-sim/testing`
 * from Jest in its default (CommonJS) mode, on a package made by `npm pack` as a user installs it.
 * The package is this checkout's dist/, which the suite's global setup (test/helpers/build-once.ts)
 * built from the sources with `npm run build`, the script `prepare` runs: packed without running it
 * again, so the working tree's dist/ is never rewritten under a running CLI (that `npm pack` runs
 * `prepare` is test/packaging/consumer-install.test.ts's to prove). The consumer project lives
 * inside the repository (`.tmp-consumer-*`, gitignored) so that Node finds station-sim's
 * dependencies in the repository's node_modules, as it would in the consumer's own.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';

const ROOT = process.cwd();
/**
 * Node without require(esm) (20.19 turned it on, with a warning, and Jest has none): the CommonJS
 * build must not lean on it. Older Node has no such flag, and no require(esm) to turn off.
 */
const NO_REQUIRE_ESM = process.allowedNodeEnvironmentFlags.has('--experimental-require-module') ? ['--no-experimental-require-module'] : [];
let tarballDir = '';
let consumer = '';

beforeAll(async () => {
  tarballDir = await mkdtemp(join(tmpdir(), 'station-sim-cjs-package-'));
  const [pack] = JSON.parse(execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', tarballDir], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })) as [
    { filename: string; files: { path: string }[] },
  ];
  expect(pack.files.map((file) => file.path)).toEqual(
    expect.arrayContaining(['dist/cjs/station-sim.cjs', 'dist/cjs/index.cjs', 'dist/cjs/client.cjs', 'dist/cjs/testing.cjs', 'dist/cjs/types/testing/index.d.cts']),
  );
  consumer = await mkdtemp(join(ROOT, '.tmp-consumer-'));
  const installed = join(consumer, 'node_modules', 'station-sim');
  await mkdir(installed, { recursive: true });
  execFileSync('tar', ['-xzf', join(tarballDir, pack.filename), '-C', installed, '--strip-components=1']);
  // No "type": the consumer's .js files are CommonJS, as in most Jest projects.
  await writeFile(join(consumer, 'package.json'), JSON.stringify({ name: 'cjs-consumer', private: true }));
}, 240_000);

afterAll(async () => {
  if (consumer) await rm(consumer, { recursive: true, force: true });
  if (tarballDir) await rm(tarballDir, { recursive: true, force: true });
});

it("require('station-sim') works from Node without require(esm), and startSimulator starts and stops", () => {
  const script = `
    const { startSimulator, createClient } = require('station-sim');
    const client = require('station-sim/client');
    const testing = require('station-sim/testing');
    (async () => {
      const sim = await startSimulator({ fixture: 'ci', httpPort: 0, mqttPort: 0 });
      const health = await (await fetch(sim.controlUrl + '/health')).json();
      await sim.stop();
      console.log(JSON.stringify({
        resolved: require.resolve('station-sim'),
        ready: health.ready,
        createClient: [typeof createClient, typeof client.createClient],
        withSimulator: typeof testing.withSimulator,
      }));
    })().catch((error) => { console.error(error); process.exit(1); });`;
  const output = execFileSync(process.execPath, [...NO_REQUIRE_ESM, '-e', script], { cwd: consumer, encoding: 'utf8', timeout: 60_000 });
  expect(JSON.parse(output)).toEqual({
    resolved: join(consumer, 'node_modules/station-sim/dist/cjs/index.cjs'),
    ready: true,
    createClient: ['function', 'function'],
    withSimulator: 'function',
  });
});

it('every entry point hands out the same classes: an error thrown through one is an instanceof the class of another', () => {
  const script = `
    const main = require('station-sim');
    const client = require('station-sim/client');
    const testing = require('station-sim/testing');
    const same = (name, ...parts) => parts.every((part) => typeof part[name] === 'function' && part[name] === parts[0][name]);
    const thrown = new testing.ApiError(404, 'Station not found');
    console.log(JSON.stringify({
      ApiError: same('ApiError', main, client, testing),
      ApiUnreachableError: same('ApiUnreachableError', main, client, testing),
      ApiTimeoutError: same('ApiTimeoutError', main, client, testing),
      ApiAbortedError: same('ApiAbortedError', main, client, testing),
      ControlClient: same('ControlClient', client, testing),
      SimError: same('SimError', main, testing),
      instanceOf: [thrown instanceof main.ApiError, thrown instanceof client.ApiError, client.isApiError(thrown, 404), main.isApiError(new client.ApiError(500, 'x'))],
    }));`;
  const output = execFileSync(process.execPath, [...NO_REQUIRE_ESM, '-e', script], { cwd: consumer, encoding: 'utf8', timeout: 60_000 });
  expect(JSON.parse(output)).toEqual({
    ApiError: true,
    ApiUnreachableError: true,
    ApiTimeoutError: true,
    ApiAbortedError: true,
    ControlClient: true,
    SimError: true,
    instanceOf: [true, true, true, true],
  });
});

it('a Jest suite in its default mode uses station-sim/testing: logs in and unlocks a lock', async () => {
  await writeFile(
    join(consumer, 'unlock.test.js'),
    `const { withSimulator } = require('station-sim/testing');
const { createClient } = require('station-sim/client');

const sim = withSimulator({ beforeAll, afterAll }, { fixture: 'ci' });

test('logs in and unlocks CI-1/1', async () => {
  const started = sim();
  const apiUrl = (started.sim ?? started).apiUrl;
  const client = createClient({ baseUrl: apiUrl, email: 'ci@example.com', password: 'ci-password' });
  await client.login();
  expect(await client.unlock('CI-1', '1')).toEqual({ success: true });
  // One class across entry points: what the client throws is station-sim's ApiError too.
  await expect(client.getStation('NO-SUCH')).rejects.toBeInstanceOf(require('station-sim').ApiError);
  await expect(client.getStation('NO-SUCH')).rejects.toBeInstanceOf(require('station-sim/testing').ApiError);
}, 30000);
`,
  );
  const jest = join(ROOT, 'node_modules/jest/bin/jest.js');
  const run = spawnSync(process.execPath, [...NO_REQUIRE_ESM, jest, '--ci', '--colors=false'], {
    cwd: consumer,
    encoding: 'utf8',
    timeout: 120_000,
    env: { ...process.env, FORCE_COLOR: '0' },
  });
  // Jest reports on stderr.
  expect({ status: run.status, report: run.stderr }).toMatchObject({ status: 0, report: expect.stringMatching(/Tests:\s+1 passed, 1 total/) });
}, 180_000);

it('gives a CommonJS TypeScript project the types of every entry, with no skipLibCheck', async () => {
  await writeFile(
    join(consumer, 'types.cts'),
    `import { startSimulator } from 'station-sim';
import { withSimulator } from 'station-sim/testing';
import { createClient } from 'station-sim/client';
export async function main(): Promise<void> {
  const sim = await startSimulator({ fixture: 'ci' });
  await createClient({ baseUrl: sim.apiUrl ?? '', email: 'a', password: 'b' }).login();
  void withSimulator;
  // @ts-expect-error a misspelt option: the types are the real ones, not any
  await startSimulator({ fixtur: 'ci' });
}
`,
  );
  const tsconfig = { compilerOptions: { module: 'node16', moduleResolution: 'node16', strict: true, noEmit: true, types: ['node'], typeRoots: [join(ROOT, 'node_modules/@types')] }, files: ['types.cts'] };
  await writeFile(join(consumer, 'tsconfig.json'), JSON.stringify(tsconfig));
  const tsc = spawnSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', '.'], { cwd: consumer, encoding: 'utf8', timeout: 120_000 });
  expect({ status: tsc.status, output: tsc.stdout }).toEqual({ status: 0, output: '' });
}, 180_000);
