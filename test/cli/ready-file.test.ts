/**
 * The ready file exists exactly while the simulator is ready: written whole (temp file, then
 * rename), and gone when the process ends, also by `process.exit` (a second signal exits at once).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, expect, it } from 'vitest';
import { ReadyFile } from '../../src/cli/ready-file.js';

const execFileAsync = promisify(execFile);
const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

it('writes one JSON line and leaves no temporary file; remove() takes it away', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ready-'));
  dirs.push(dir);
  const file = new ReadyFile(join(dir, 'sim.json'));
  await file.clear();
  await file.write({ apiUrl: 'http://127.0.0.1:1' });
  expect(await readFile(file.path, 'utf8')).toBe('{"apiUrl":"http://127.0.0.1:1"}\n');
  expect(await readdir(dir)).toEqual(['sim.json']);
  await file.remove();
  expect(existsSync(file.path)).toBe(false);
});

it('is gone when the process exits with process.exit while it is written', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ready-'));
  dirs.push(dir);
  const path = join(dir, 'sim.json');
  const module = new URL('../../src/cli/ready-file.ts', import.meta.url).href;
  const script = `const { ReadyFile } = await import(${JSON.stringify(module)});
    const file = new ReadyFile(${JSON.stringify(path)});
    await file.write({ ready: true });
    console.log(require('node:fs').existsSync(${JSON.stringify(path)}));
    process.exit(130);`.replace("require('node:fs')", "(await import('node:fs'))");
  const run = execFileAsync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { timeout: 30_000 });
  const failure = await run.then(() => undefined, (error: { code?: number; stdout?: string }) => error);
  expect(failure?.code).toBe(130);
  expect(failure?.stdout?.trim()).toBe('true');
  expect(existsSync(path)).toBe(false);
});
