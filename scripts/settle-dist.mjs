/**
 * Runs after tsc, before the CommonJS build. The build is incremental (tsconfig.build.json): it
 * writes over dist/ without emptying it, and rewrites only the outputs whose source changed. So:
 * - it removes what no source emits any more: a file deleted or renamed in src/ would otherwise
 *   leave its old .js, .js.map and .d.ts behind, and `npm pack` would ship them (the .d.cts files
 *   under dist/cjs/types/ go by the same rule; the CommonJS build makes the rest of dist/cjs/ afresh);
 * - it sets the time of tsc's record, dist/.tsbuildinfo, to now: the time of the last build, with
 *   which src/cli/stale-build.ts compares the sources (an output tsc left alone keeps its old time).
 */
import { existsSync } from 'node:fs';
import { readdir, rm, utimes } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = join(root, 'dist');
const TYPES = join('cjs', 'types') + sep;

/** What tsc or the CommonJS build emits for a source, by the suffix it replaces `.ts`/`.tsx` with. */
const EMITTED = /\.(?:js\.map|js|d\.ts|d\.cts)$/;

/** The source a file of dist/ was emitted from, relative to src/ without its extension; undefined for the rest. */
function sourceOf(file) {
  if (!EMITTED.test(file)) return undefined;
  if (file.startsWith(`cjs${sep}`)) return file.startsWith(TYPES) && file.endsWith('.d.cts') ? file.slice(TYPES.length, -'.d.cts'.length) : undefined;
  return file.replace(EMITTED, '');
}

let removed = 0;
for (const file of await readdir(dist, { recursive: true })) {
  const source = sourceOf(file);
  if (source === undefined || existsSync(join(root, 'src', `${source}.ts`)) || existsSync(join(root, 'src', `${source}.tsx`))) continue;
  await rm(join(dist, file));
  removed++;
}
const now = new Date();
await utimes(join(dist, '.tsbuildinfo'), now, now);
if (removed > 0) process.stdout.write(`settle-dist: removed ${removed} file${removed === 1 ? '' : 's'} of dist/ whose source is gone\n`);
