import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx', 'examples/**/*.test.ts'],
    // Tests that start real processes and brokers need more than the 5 s default on a loaded 2-core machine.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // The judge is on in every simulator a test starts; a file whose simulators broke a rule fails
    // unless it says it does so on purpose (test/helpers/judge-findings.ts).
    setupFiles: ['test/helpers/judge-setup.ts'],
  },
});
