#!/usr/bin/env -S node --max-semi-space-size=32
// The published entry point runs the compiled CLI (built by `npm run build`, which `npm ci` runs via `prepare`).
// --max-semi-space-size: a 32 MiB young generation; under load the simulator allocates fast and
// scavenges about half as often with it (bench/README.md, "History").
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
