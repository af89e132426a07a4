/**
 * The benchmarks measure the product with the V8 flags it ships with: the installed binary's
 * shebang, the npm scripts that run the CLI from source, and the harness's children must agree.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PRODUCT_NODE_FLAGS } from '../../bench/lib/child.js';

const root = new URL('../../', import.meta.url);

describe('product node flags', () => {
  it('are the same in bin/station-sim.js, the npm scripts and the benchmark children', () => {
    expect(PRODUCT_NODE_FLAGS.length).toBeGreaterThan(0);
    const shebang = readFileSync(new URL('bin/station-sim.js', root), 'utf8').split('\n')[0];
    expect(shebang).toBe(`#!/usr/bin/env -S node ${PRODUCT_NODE_FLAGS.join(' ')}`);
    const scripts = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')).scripts as Record<string, string>;
    for (const name of ['start', 'station-sim']) {
      expect(scripts[name]).toMatch(new RegExp(`^node ${PRODUCT_NODE_FLAGS.join(' ')} --import tsx src/cli/main\\.ts`));
    }
  });
});
