/**
 * The benchmarks measure the product with the V8 flags the npm scripts that run the CLI from source
 * give it; the scripts and the harness's children must agree. The installed binary's shebang is a
 * plain `#!/usr/bin/env node` (`env -S` is missing from BusyBox): V8 sizes the young generation when
 * the heap is made, so the binary cannot set the flag itself, and README's "Command line" tells
 * heavy-load users to set it through NODE_OPTIONS.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PRODUCT_NODE_FLAGS } from '../../bench/lib/child.js';

const root = new URL('../../', import.meta.url);

describe('product node flags', () => {
  it('are the same in the npm scripts, the benchmark children and the README advice; the shebang has none', () => {
    expect(PRODUCT_NODE_FLAGS.length).toBeGreaterThan(0);
    const shebang = readFileSync(new URL('bin/station-sim.js', root), 'utf8').split('\n')[0];
    expect(shebang).toBe('#!/usr/bin/env node');
    expect(readFileSync(new URL('README.md', root), 'utf8')).toContain(`NODE_OPTIONS=${PRODUCT_NODE_FLAGS.join(' ')}`);
    const scripts = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')).scripts as Record<string, string>;
    // `exec`: npm runs a script as `sh -c`, and dash dies of the SIGTERM npm passes on without
    // passing it to node; exec makes node the process npm signals.
    for (const name of ['start', 'station-sim']) {
      expect(scripts[name]).toMatch(new RegExp(`^exec node ${PRODUCT_NODE_FLAGS.join(' ')} --import tsx src/cli/main\\.ts`));
    }
  });
});
