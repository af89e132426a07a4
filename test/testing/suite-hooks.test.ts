/**
 * `withSimulator` takes the suite hooks of vitest, jest and node:test. The assignments below are
 * the type-level check: `npm run typecheck` (tsc over test/) fails on them if a framework's hooks
 * stop fitting `SuiteHooks`.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { after, before } from 'node:test';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { withSimulator, type SuiteHooks } from '../../src/testing/index.js';

const nodeTestHooks: SuiteHooks = { beforeAll: before, afterAll: after };
const vitestHooks: SuiteHooks = { beforeAll, afterAll };

it("fits node:test's before/after and vitest's beforeAll/afterAll", () => {
  expect(typeof nodeTestHooks.beforeAll).toBe('function');
  expect(vitestHooks.afterAll).toBe(afterAll);
});

it('registers a start hook and a stop hook, each with a minute for a slow start or stop', () => {
  const registered: [string, number | undefined][] = [];
  withSimulator({
    beforeAll: (_: unknown, timeout?: number) => registered.push(['beforeAll', timeout]),
    afterAll: (_: unknown, timeout?: number) => registered.push(['afterAll', timeout]),
  });
  expect(registered).toEqual([
    ['beforeAll', 60_000],
    ['afterAll', 60_000],
  ]);
});

it('runs a node:test suite with node:test hooks: it starts the simulator, unlocks and stops', () => {
  const suite = fileURLToPath(new URL('./node-test-suite.ts', import.meta.url));
  // node:test exits non-zero when a test fails, and execFileSync throws with its output then.
  const output = execFileSync(process.execPath, ['--import', 'tsx', suite], { encoding: 'utf8' });
  expect(output).toMatch(/^# pass 1$/m);
  expect(output).toMatch(/^# fail 0$/m);
}, 60_000);
