import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const source = (path: string): string => fileURLToPath(new URL(path, import.meta.url));

/** The files run one at a time, after the rest (see `projects`). */
const ALONE = [
  'test/brokers/**/*.test.ts',
  'test/bench/**/*.test.ts',
  'test/fleet/link-conditions.test.ts',
  'test/dashboard/tmux-smoke.test.ts',
  'test/demo/demo-tmux.test.ts',
];

export default defineConfig({
  // The examples import the package by name, as a user's project does; here the name is the
  // sources (test/packaging/consumer-install.test.ts runs them against the installed package).
  resolve: {
    alias: [
      { find: /^station-sim$/, replacement: source('./src/index.ts') },
      { find: /^station-sim\/client$/, replacement: source('./src/client/index.ts') },
      { find: /^station-sim\/testing$/, replacement: source('./src/testing/index.ts') },
    ],
  },
  test: {
    projects: [
      // Most files wait on sockets, child processes and timers far more than they compute: three
      // at a time on two cores (vitest's default is one fewer worker than cores, one here).
      { extends: true, test: { name: 'parallel', include: ['test/**/*.test.ts', 'test/**/*.test.tsx', 'examples/**/*.test.ts'], exclude: ALONE, maxWorkers: 3, sequence: { groupOrder: 0 } } },
      // Files whose subject is timing under a broker's keepalive, a shaped link, a terminal's
      // repaint or the hot path's cost: after the others, one at a time.
      { extends: true, test: { name: 'alone', include: ALONE, maxWorkers: 1, sequence: { groupOrder: 1 } } },
    ],
    // Tests that start real processes and brokers need more than the 5 s default on a loaded 2-core machine.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // The judge is on in every simulator a test starts; a file whose simulators broke a rule fails
    // unless it says it does so on purpose (test/helpers/judge-findings.ts).
    setupFiles: ['test/helpers/judge-setup.ts'],
    // The CLI the tests start is the compiled one, built once here when src/ changed after it.
    globalSetup: ['test/helpers/build-once.ts'],
  },
});
