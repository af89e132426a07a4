/**
 * `withSimulator` takes the suite hooks of vitest, jest and node:test under each framework's own
 * names, and says clearly what it takes when given something else. The assignments below are the
 * type-level check: `npm run typecheck` (tsc over test/) fails on them if a framework's hooks stop
 * fitting `SuiteHooks`. The node:test suite runs as a child process, on its own and under
 * `station-sim run`, where it attaches and its requests land in the transcript.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, beforeEach as nodeBeforeEach } from 'node:test';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { withSimulator, type SuiteHooks } from '../../src/testing/index.js';
import { runCliInProcess } from '../helpers/cli-process.js';

const nodeTestHooks: SuiteHooks = { before, after, beforeEach: nodeBeforeEach };
const nodeTestHooksOldSpelling: SuiteHooks = { beforeAll: before, afterAll: after };
const vitestHooks: SuiteHooks = { beforeAll, afterAll, beforeEach };

const suite = fileURLToPath(new URL('./node-test-suite.ts', import.meta.url));
/** The environment without STATION_SIM_*, so that the suite starts its own simulator. */
const ownEnv = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('STATION_SIM_')));

it("fits node:test's before/after/beforeEach and vitest's beforeAll/afterAll/beforeEach", () => {
  expect(typeof nodeTestHooks).toBe('object');
  expect(nodeTestHooksOldSpelling.beforeAll === before).toBe(true);
  expect(vitestHooks.beforeEach).toBe(beforeEach);
});

it('registers start and stop, and a reset when beforeEach is given, each with a minute', () => {
  const registered: [string, number | undefined][] = [];
  const hook = (name: string) => (_: unknown, timeout?: number) => registered.push([name, timeout]);
  withSimulator({ beforeAll: hook('beforeAll'), afterAll: hook('afterAll') });
  withSimulator({ before: hook('before'), after: hook('after'), beforeEach: hook('beforeEach') });
  withSimulator({ before: hook('before'), after: hook('after'), beforeEach: hook('unused') }, { resetBetweenTests: false });
  expect(registered).toEqual([
    ['beforeAll', 60_000],
    ['afterAll', 60_000],
    ['before', 60_000],
    ['after', 60_000],
    ['beforeEach', 60_000],
    ['before', 60_000],
    ['after', 60_000],
  ]);
});

it('says which hook names it takes and what it got, never "hook is not a function"', () => {
  const accepted = 'withSimulator takes the suite hooks of your test framework: { beforeAll, afterAll } (vitest, jest) or { before, after } (node:test), each optionally with beforeEach';
  const call = (hooks: unknown, options = {}) => () => withSimulator(hooks as SuiteHooks, options);
  expect(call({ before, afterAll })).toThrow(new TypeError(`${accepted}; one set of names, not both, got { before: function, afterAll: function }`));
  expect(call({ before })).toThrow(new TypeError(`${accepted}; after is not a function, got { before: function }`));
  expect(call({ beforeAll, afterAll: 'x' })).toThrow(new TypeError(`${accepted}; afterAll is not a function, got { beforeAll: function, afterAll: string }`));
  expect(call({ setup: before })).toThrow(new TypeError(`${accepted}; beforeAll is not a function, got { setup: function }`));
  expect(call({ beforeAll, afterAll, beforeEach: 1 })).toThrow(new TypeError(`${accepted}; beforeEach is not a function, got { beforeAll: function, afterAll: function, beforeEach: number }`));
  expect(call(undefined)).toThrow(new TypeError(`${accepted}; no object of hooks, got undefined`));
  expect(call({ beforeAll, afterAll }, { resetBetweenTests: true })).toThrow(/^withSimulator: resetBetweenTests needs the beforeEach hook/);
});

it('runs a node:test suite with node:test hooks on its own: it starts a simulator and resets between tests', () => {
  const run = spawnSync(process.execPath, ['--import', 'tsx', suite], { encoding: 'utf8', env: ownEnv });
  expect(run.stdout).toMatch(/^# pass 3$/m);
  expect(run.stdout).toMatch(/^# fail 0$/m);
  expect(run.stderr).toMatch(/^station-sim: started a simulator at http:\/\/127\.0\.0\.1:\d+ \(fixture ci\)$/m);
}, 60_000);

it('runs it under station-sim run --record: it attaches, and the transcript holds what it did', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'attach-'));
  const transcript = join(dir, 't.jsonl');
  const report = join(dir, 'report.tap');
  const run = await runCliInProcess([
    'run', '--fixture', 'fixtures/ci.json', '--record', transcript, '--',
    process.execPath, '--import', 'tsx', '--test', '--test-reporter=tap', `--test-reporter-destination=${report}`, suite,
  ]);
  const tap = await readFile(report, 'utf8');
  expect(run.code, tap).toBe(0);
  expect(tap).toMatch(/^# pass 3$/m);
  const entries = (await readFile(transcript, 'utf8')).split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);
  const routes = entries.filter((entry) => entry.kind === 'api').map((entry) => `${entry.method} ${entry.route}`);
  expect(routes).toContain('POST /v1/auth/login');
  expect(routes.filter((route) => route.endsWith('/unlock')).length).toBeGreaterThanOrEqual(3);
}, 120_000);
