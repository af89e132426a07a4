#!/usr/bin/env node
// The published entry point runs the compiled CLI (built by `npm run build`, which `npm ci` runs via `prepare`).
// A plain `env node`: `env -S` (to pass Node flags) is missing from BusyBox, so from Alpine images.
// The 32 MiB young generation the npm scripts and the benchmarks run with (--max-semi-space-size=32)
// is not set here: V8 sizes the young generation when the heap is made, so setting the flag from
// here (v8.setFlagsFromString) changes nothing, and starting Node again with it would put a second
// process between `kill` and the simulator. Under heavy load, NODE_OPTIONS=--max-semi-space-size=32
// sets it (README, "Command line").
import { existsSync } from 'node:fs';

const root = new URL('..', import.meta.url);
if (!existsSync(new URL('dist/cli/main.js', root))) {
  process.stderr.write('station-sim: the compiled CLI (dist/) is missing: run `npm run build` in the package directory (npm ci runs it)\n');
  process.exit(1);
}
// A dist/ built before the check existed has no stale-build.js, and is stale by definition.
const check = new URL('dist/cli/stale-build.js', root);
const notice = existsSync(check)
  ? (await import(check.href)).staleBuildNotice(root)
  : existsSync(new URL('src', root))
    ? 'station-sim: dist/ is older than src/ (it predates this check), and this command runs dist/: run `npm run build`'
    : undefined;
if (notice) process.stderr.write(`${notice}\n`);
await import('../dist/cli/main.js');
