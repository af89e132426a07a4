/**
 * vitest's global setup: the CLI the tests start is the compiled one (`dist/cli/main.js`, what the
 * package's `bin` runs), built here once when `src/` changed after it, instead of each child
 * compiling the sources through tsx as it starts (about 2 s of CPU per start, and the suite starts
 * the CLI more than a hundred times). `npm ci` builds it already (`prepare`), so CI builds nothing here.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { staleBuildNotice } from '../../src/cli/stale-build.js';
import { existsSync } from 'node:fs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export default function setup(): void {
  const built = existsSync(new URL('../../dist/cli/main.js', import.meta.url));
  if (built && staleBuildNotice(ROOT) === undefined) return;
  process.stderr.write(`test setup: ${built ? 'src/ changed after dist/ was built' : 'dist/ is missing'}; running npm run build\n`);
  execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
}
