/** The registry of attached helpers: others alive are counted, files of processes that are gone are removed. */
import { spawnSync } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { registerAttached } from '../../src/testing/attach-registry.js';

const SIMULATOR = 'http://127.0.0.1:41234';
let root: string | undefined;
afterEach(async () => {
  if (root) await rm(root, { recursive: true, force: true });
  root = undefined;
});

it('counts the helpers attached to the same simulator while they are attached, not those of another simulator', async () => {
  root = await mkdtemp(join(tmpdir(), 'attach-registry-'));
  const first = await registerAttached(SIMULATOR, root);
  expect(first.others).toEqual([]);
  expect((await registerAttached('http://127.0.0.1:41999', root)).others).toEqual([]);
  const second = await registerAttached(SIMULATOR, root);
  expect(second.others).toEqual([process.pid]);
  await first.release();
  await second.release();
  expect((await registerAttached(SIMULATOR, root)).others).toEqual([]);
});

it("removes the file of a helper whose process is gone (a crashed worker) instead of counting it", async () => {
  root = await mkdtemp(join(tmpdir(), 'attach-registry-'));
  const first = await registerAttached(SIMULATOR, root);
  const [folder] = await readdir(root);
  const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout;
  await writeFile(join(root, folder!, `${gone}-crashed`), '');
  await first.release();
  const next = await registerAttached(SIMULATOR, root);
  expect(next.others).toEqual([]);
  expect((await readdir(join(root, folder!))).some((name) => name.startsWith(`${gone}-`))).toBe(false);
});

it('never fails an attach: a folder that cannot be written only means no warning', async () => {
  root = await mkdtemp(join(tmpdir(), 'attach-registry-'));
  const file = join(root, 'a-file');
  await writeFile(file, '');
  const registration = await registerAttached(SIMULATOR, file);
  expect(registration.others).toEqual([]);
  await registration.release();
});
