/**
 * `withSimulator`: one simulator per suite, wired into the hooks of whatever framework runs it:
 * `{ beforeAll, afterAll, beforeEach }` of vitest and jest, `{ before, after, beforeEach }` of
 * node:test. Given `beforeEach`, it resets the simulator before every test, so an offline station,
 * a fault or a drained battery does not leak from one test into the next.
 */
import { startTestSimulator, type TestSimulator, type TestSimulatorOptions } from './test-simulator.js';

/** A hook as vitest and jest take it: the function, then a timeout in milliseconds. */
export type TimeoutHook = (fn: () => Promise<void>, timeout?: number) => void;

/**
 * A hook as node:test takes it (`before`, `after`, `beforeEach`): the function, then options.
 * node:test runs a hook without a timeout unless told, and spreads what it gets as options, so the
 * number passed for vitest and jest leaves it at that.
 */
export type OptionsHook = (fn: () => Promise<void>, options?: { timeout?: number }) => void;

export type SuiteHook = TimeoutHook | OptionsHook;

/** vitest's and jest's names: `withSimulator({ beforeAll, afterAll, beforeEach }, …)`. */
export interface AllHooks {
  beforeAll: SuiteHook;
  afterAll: SuiteHook;
  /** Given, the simulator is reset before every test (unless `resetBetweenTests: false`). */
  beforeEach?: SuiteHook;
}

/** node:test's names: `withSimulator({ before, after, beforeEach }, …)`. */
export interface NodeTestHooks {
  before: SuiteHook;
  after: SuiteHook;
  /** Given, the simulator is reset before every test (unless `resetBetweenTests: false`). */
  beforeEach?: SuiteHook;
}

/** The hooks of a test framework, under the names it uses. */
export type SuiteHooks = AllHooks | NodeTestHooks;

export interface WithSimulatorOptions extends TestSimulatorOptions {
  /**
   * Reset the simulator (`POST /sim/v1/reset`) in `beforeEach`, so no state leaks between tests.
   * Needs the `beforeEach` hook.
   * @default true when `beforeEach` is given, false otherwise
   */
  resetBetweenTests?: boolean;
}

/** How long a start, a stop or a reset may take before the framework fails the hook (vitest and jest). */
const HOOK_TIMEOUT_MS = 60_000;

/** Registers `fn` with a hook of either kind (see OptionsHook for why the number suits both). */
function register(hook: SuiteHook, fn: () => Promise<void>): void {
  (hook as TimeoutHook)(fn, HOOK_TIMEOUT_MS);
}

const ACCEPTED =
  'withSimulator takes the suite hooks of your test framework: { beforeAll, afterAll } (vitest, jest) or { before, after } (node:test), each optionally with beforeEach';

/** What was passed, for the error: `{ beforeAll: function, afterAll: undefined }`. */
function describeHooks(hooks: unknown): string {
  if (typeof hooks !== 'object' || hooks === null) return hooks === null ? 'null' : typeof hooks;
  const fields = Object.entries(hooks).map(([key, value]) => `${key}: ${value === null ? 'null' : typeof value}`);
  return fields.length === 0 ? '{}' : `{ ${fields.join(', ')} }`;
}

/** The start, stop and per-test hooks, checked: a TypeError that says what is accepted and what came. */
export function suiteHooksOf(hooks: unknown): { start: SuiteHook; stop: SuiteHook; each: SuiteHook | undefined } {
  const fail = (why: string): never => {
    throw new TypeError(`${ACCEPTED}; ${why}, got ${describeHooks(hooks)}`);
  };
  if (typeof hooks !== 'object' || hooks === null) return fail('no object of hooks');
  const record = hooks as Record<string, unknown>;
  const vitestNames = 'beforeAll' in record || 'afterAll' in record;
  const nodeNames = 'before' in record || 'after' in record;
  if (vitestNames && nodeNames) return fail('one set of names, not both');
  const [startName, stopName] = nodeNames ? ['before', 'after'] : ['beforeAll', 'afterAll'];
  const start = record[startName];
  const stop = record[stopName];
  const each = record['beforeEach'];
  if (typeof start !== 'function') return fail(`${startName} is not a function`);
  if (typeof stop !== 'function') return fail(`${stopName} is not a function`);
  if (each !== undefined && typeof each !== 'function') return fail('beforeEach is not a function');
  return { start: start as SuiteHook, stop: stop as SuiteHook, each: each as SuiteHook | undefined };
}

/**
 * Starts (or attaches to) one simulator for the suite and stops it after; returns a getter for it.
 * `const sim = withSimulator({ beforeAll, afterAll, beforeEach }, { fixture: 'ci' })`
 */
export function withSimulator(hooks: SuiteHooks, options: WithSimulatorOptions = {}): () => TestSimulator {
  const { start, stop, each } = suiteHooksOf(hooks);
  const { resetBetweenTests = each !== undefined, ...helperOptions } = options;
  if (resetBetweenTests && !each) {
    throw new TypeError('withSimulator: resetBetweenTests needs the beforeEach hook: withSimulator({ beforeAll, afterAll, beforeEach }, …), or { before, after, beforeEach } for node:test');
  }
  let current: TestSimulator | undefined;
  register(start, async () => {
    current = await startTestSimulator(helperOptions);
  });
  register(stop, async () => {
    await current?.stop();
  });
  if (resetBetweenTests && each) {
    register(each, async () => {
      // A failed start already failed the suite's start hook; nothing to reset then.
      if (current) await current.reset();
    });
  }
  return () => {
    if (!current) throw new Error('the simulator is not started yet: use it inside tests, not at collection time');
    return current;
  };
}
