/**
 * The installed binary: a plain `#!/usr/bin/env node` shebang (BusyBox's `env`, so Alpine images,
 * has no `-S` for flags), run directly as a user's shell runs it. It runs the compiled CLI, built by
 * `npm ci` (`prepare`) before the tests.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { delimiter, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = fileURLToPath(new URL('../../bin/station-sim.js', import.meta.url));

it('starts with exactly #!/usr/bin/env node and runs when executed directly', () => {
  expect(readFileSync(BIN, 'utf8').split('\n')[0]).toBe('#!/usr/bin/env node');
  const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  // The kernel reads the shebang: no `node` in front. `env` finds node on PATH, this test's node first.
  const output = execFileSync(BIN, ['--version'], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}` },
  });
  expect(output).toBe(`${version}\n`);
});
