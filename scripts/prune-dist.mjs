/**
 * Removes from dist/ what no source emits any more: the build is incremental (tsconfig.build.json)
 * and writes over dist/ without emptying it, so a file deleted or renamed in src/ would otherwise
 * leave its old .js, .js.map and .d.ts behind, and `npm pack` would ship them. Runs after tsc and
 * before the CommonJS build, which makes dist/cjs/ afresh from what is left (its types, the
 * .d.cts files under dist/cjs/types/, are pruned here by the same rule).
 */
import { existsSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
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
if (removed > 0) process.stdout.write(`prune-dist: removed ${removed} file${removed === 1 ? '' : 's'} of dist/ whose source is gone\n`);
