/**
 * A notice for `bin/station-sim.js` run from a checkout whose sources changed after the last
 * build: the command runs the compiled `dist/`, so an edit to `src/` does nothing until
 * `npm run build`, and nothing said so. An installed package has no `src/`, and says nothing.
 */
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The newest modification time of a `.ts`/`.tsx` file under `dir`, ms; 0 when there is none. */
function newestSource(dir: string): number {
  let newest = 0;
  for (const file of readdirSync(dir, { encoding: 'utf8', recursive: true })) {
    if (/\.tsx?$/.test(file)) newest = Math.max(newest, statSync(path.join(dir, file)).mtimeMs);
  }
  return newest;
}

/**
 * One line when `src/` under `root` holds a file newer than the compiled CLI, else undefined.
 * `root` is the package's directory (a path or a `file:` URL).
 */
export function staleBuildNotice(root: string | URL): string | undefined {
  const dir = typeof root === 'string' ? root : fileURLToPath(root);
  let built: number;
  let edited: number;
  try {
    built = statSync(path.join(dir, 'dist', 'cli', 'main.js')).mtimeMs;
    // The time of the last build (scripts/settle-dist.mjs): the build is incremental, and leaves
    // the CLI it did not need to rewrite with the time of an older build.
    built = Math.max(built, statSync(path.join(dir, 'dist', '.tsbuildinfo'), { throwIfNoEntry: false })?.mtimeMs ?? 0);
    edited = newestSource(path.join(dir, 'src'));
  } catch {
    return undefined;
  }
  if (edited <= built) return undefined;
  return 'station-sim: src/ changed after dist/ was built, and this command runs dist/: run `npm run build`, or `npm run station-sim --` to run the sources';
}
