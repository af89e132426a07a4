/**
 * A copy of this checkout's sources and fixtures under a directory whose name has a space and a
 * %-escape in it, as an install path may (`C:\Program Files\…`, `/home/a b/…`): code that turns
 * its own `import.meta.url` into a path must decode both.
 */
import { cp, mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface OddPathCheckout {
  /** The copy's root: `src/`, `fixtures/`, `package.json`, and `node_modules` linked to this checkout's. */
  readonly root: string;
  remove(): Promise<void>;
}

export async function copyCheckoutToOddPath(): Promise<OddPathCheckout> {
  const parent = await mkdtemp(join(tmpdir(), 'station-sim-'));
  const root = join(parent, 'with space %41');
  await mkdir(root);
  for (const entry of ['src', 'fixtures', 'package.json']) await cp(join(ROOT, entry), join(root, entry), { recursive: true });
  await symlink(join(ROOT, 'node_modules'), join(root, 'node_modules'), 'dir');
  return { root, remove: () => rm(parent, { recursive: true, force: true }) };
}
