/**
 * A copy of this checkout's sources as another project would hold it: the project sits under a
 * directory whose name has a space and a %-escape in it, as an install path may (`C:\Program
 * Files\…`, `/home/a b/…`), has a package.json of its own, and has the dependencies in its
 * `node_modules` (a link to this checkout's), beside the copy, as npm hoists them.
 */
import { cp, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The version in the other project's package.json: not station-sim's. */
export const CONSUMER_VERSION = '9.9.9-consumer';

export interface OddPathCheckout {
  /** The other project: its package.json and `node_modules`. */
  readonly project: string;
  /** The copy of station-sim in it: `src/`, `fixtures/`, `package.json`. */
  readonly root: string;
  remove(): Promise<void>;
}

export async function copyCheckoutToOddPath(): Promise<OddPathCheckout> {
  const parent = await mkdtemp(join(tmpdir(), 'station-sim-'));
  const project = join(parent, 'with space %41');
  const root = join(project, 'station-sim');
  await mkdir(root, { recursive: true });
  await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'consumer', version: CONSUMER_VERSION, private: true, type: 'module' }));
  await symlink(join(ROOT, 'node_modules'), join(project, 'node_modules'), 'dir');
  for (const entry of ['src', 'fixtures', 'package.json']) await cp(join(ROOT, entry), join(root, entry), { recursive: true });
  return { project, root, remove: () => rm(parent, { recursive: true, force: true }) };
}
