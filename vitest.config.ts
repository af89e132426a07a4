import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx', 'examples/**/*.test.ts'],
    // Tests that start real processes and brokers need more than the 5 s default on a loaded 2-core machine.
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
