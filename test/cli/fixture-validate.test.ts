/** `fixture validate` takes what `up`, `run` and `transcript judge --fixture` take: a file, or a shipped fixture's name. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { runCliInProcess } from '../helpers/cli-process.js';

let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

it('validates the shipped fixtures by name, as up and run take them', async () => {
  expect(await runCliInProcess(['fixture', 'validate', 'ci'])).toEqual({ code: 0, stdout: 'ci: valid (25 stations, 2 accounts)\n', stderr: '' });
  expect(await runCliInProcess(['fixture', 'validate', 'demo'])).toEqual({ code: 0, stdout: 'demo: valid (5 stations, 2 accounts)\n', stderr: '' });
});

it('still reads a path, and names a missing file', async () => {
  dir = await mkdtemp(join(tmpdir(), 'fixture-validate-'));
  const own = join(dir, 'ci');
  await writeFile(own, JSON.stringify({ stations: [{ token: 'OWN-1', stationId: 1, locks: [{ lockId: '1' }] }] }));
  expect(await runCliInProcess(['fixture', 'validate', own])).toMatchObject({ code: 0, stdout: `${own}: valid (1 station, 0 accounts)\n` });
  const missing = await runCliInProcess(['fixture', 'validate', join(dir, 'nope.json')]);
  expect(missing).toMatchObject({ code: 1, stderr: expect.stringContaining('nope.json: /: file not found') });
});
