/**
 * Issue 15: "`--log` is unbounded". A log file is rotated at its size and keeps a bounded number of
 * rotated files; one that cannot be opened fails start-up with one line naming it; closing the app
 * flushes and closes it.
 */
import { chmod, mkdir, mkdtemp, readdir, readFile, readlink, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { buildTestApi } from '../../helpers/test-api.js';
import { ALICE } from '../../helpers/test-fixture.js';
import { startSimulator } from '../../../src/simulator/start-simulator.js';
import type { ApiLoggerOption } from '../../../src/service/build-api.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'station-sim-log-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Paths of the files this process holds open. */
async function openFiles(): Promise<string[]> {
  const fds = await readdir('/proc/self/fd');
  const targets = await Promise.all(fds.map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => '')));
  return targets.filter((target) => target.startsWith(dir));
}

describe('the log file', () => {
  test('is rotated at its size, keeps the newest files, and is closed with the app', async () => {
    const file = join(dir, 'api.log');
    const api = await buildTestApi({ logger: { file, maxFileBytes: 4096, maxFiles: 2, maxRequestsPerSecond: 0 } });
    const { accessToken, refreshToken } = await api.login();
    for (let i = 0; i < 100; i += 1) expect((await api.get('/v1/stations/S-1', accessToken)).statusCode).toBe(200);
    expect(await openFiles()).toEqual([file]);
    await api.app.close();
    expect(await openFiles()).toEqual([]);

    // The current file and two rotated ones, the oldest first; nothing older is left.
    expect((await readdir(dir)).sort()).toEqual(['api.log', 'api.log.1', 'api.log.2']);
    const files = [`${file}.2`, `${file}.1`, file];
    const contents = await Promise.all(files.map((path) => readFile(path, 'utf8')));
    const lines = contents.flatMap((text) => text.split('\n').filter((line) => line !== ''));
    const longest = Math.max(...lines.map((line) => Buffer.byteLength(line) + 1));
    for (const path of files) {
      // A file is rotated after the line that reached its size: it is at most one line over.
      const { size } = await stat(path);
      expect(size, path).toBeLessThan(4096 + longest);
    }
    for (const text of contents) expect(text.endsWith('\n')).toBe(true);
    // Whole JSON lines, in order across the files: request ids only grow.
    const ids = lines
      .map((line) => (JSON.parse(line) as { reqId?: string }).reqId)
      .filter((id) => id !== undefined)
      .map((id) => parseInt(id.replace('req-', ''), 36)); // fastify counts them in base 36
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    // 100 requests make far more than the 3 files hold: the oldest were dropped, the last one is there.
    expect(lines.length).toBeLessThan(200);
    expect(contents[2]).toContain('"msg":"request completed"');
    // And no secret reached the file (the redaction tests run on a stream; this is the same logger).
    const all = contents.join('');
    for (const secret of [ALICE.password, accessToken.split('.')[2]!, refreshToken]) expect(all).not.toContain(secret);
  });

  test('is appended to across restarts, and a file already over its size is rotated first', async () => {
    const file = join(dir, 'api.log');
    await writeFile(file, `${'x'.repeat(5000)}\n`);
    const api = await buildTestApi({ logger: { file, maxFileBytes: 4096 } });
    await api.get('/v1/stations/S-1');
    await api.app.close();
    expect((await readFile(`${file}.1`, 'utf8')).startsWith('xxxx')).toBe(true);
    expect(await readFile(file, 'utf8')).toContain('"msg":"incoming request"');
  });

  test('that cannot be opened fails the build with one line naming it', async () => {
    const missing = join(dir, 'no-such-dir', 'api.log');
    await expect(buildTestApi({ logger: { file: missing } })).rejects.toMatchObject({
      code: 'BAD_REQUEST',
      message: `cannot write the log to ${missing}: its directory does not exist (ENOENT)`,
    });
    await expect(buildTestApi({ logger: { file: dir } })).rejects.toMatchObject({ message: `cannot write the log to ${dir}: it is a directory (EISDIR)` });
    const notADir = join(dir, 'plain');
    await writeFile(notADir, '');
    await expect(buildTestApi({ logger: { file: join(notADir, 'api.log') } })).rejects.toMatchObject({
      message: `cannot write the log to ${join(notADir, 'api.log')}: a part of its path is not a directory (ENOTDIR)`,
    });
    // Permissions do not hold for root, which CI runs as.
    if (process.getuid?.() !== 0) {
      const locked = join(dir, 'locked');
      await mkdir(locked);
      await chmod(locked, 0o500);
      await expect(buildTestApi({ logger: { file: join(locked, 'api.log') } })).rejects.toMatchObject({ message: expect.stringContaining('permission denied (EACCES)') });
    }
    expect(await openFiles()).toEqual([]);
  });

  test('that cannot be opened stops startSimulator before anything starts', async () => {
    const missing = join(dir, 'no-such-dir', 'api.log');
    const started = Date.now();
    await expect(startSimulator({ fixture: 'ci', logger: { file: missing } })).rejects.toMatchObject({
      message: `cannot write the log to ${missing}: its directory does not exist (ENOENT)`,
    });
    // No broker, fleet or API came up first (those take a second or more for the ci fixture).
    expect(Date.now() - started).toBeLessThan(1000);
  });

  test('settings that cannot work are refused with BAD_REQUEST naming them', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ file: join(dir, 'a.log'), stream: process.stderr }, 'logger.file and logger.stream do not go together: the lines go to one or the other'],
      [{ file: join(dir, 'a.log'), maxFileBytes: 100 }, 'logger.maxFileBytes must be a whole number of at least 1024'],
      [{ file: join(dir, 'a.log'), maxFiles: 0 }, 'logger.maxFiles must be a whole number from 1 to 100'],
      [{ maxFiles: 2 }, 'logger.maxFileBytes and logger.maxFiles are about logger.file, which is not set'],
      [{ maxRequestsPerSecond: -1 }, 'logger.maxRequestsPerSecond must be a whole number of at least 0 (0: no sampling)'],
      [{ file: '' }, 'logger.file must be a file path'],
      [{ maxFileSize: 4096 }, 'logger has no setting "maxFileSize"; it takes level, stream, file, maxFileBytes, maxFiles, maxRequestsPerSecond'],
    ];
    for (const [logger, message] of cases) {
      await expect(buildTestApi({ logger: logger as ApiLoggerOption }), message).rejects.toMatchObject({ code: 'BAD_REQUEST', message });
      await expect(startSimulator({ logger: logger as ApiLoggerOption }), message).rejects.toMatchObject({ code: 'BAD_REQUEST', message });
    }
    expect(await readdir(dir)).toEqual([]);
  });
});
