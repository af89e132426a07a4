/**
 * Which helpers are attached to one simulator right now, across the worker processes and threads
 * of a test run: vitest, Jest and node:test run files in parallel, and under `station-sim run` they
 * all attach to the one simulator, where one file's reset or fault reaches another's tests. The
 * helpers cannot see each other otherwise, so each leaves a file, named by its process id, in a
 * folder of the temporary directory named after the simulator's address, while it is attached.
 * Files of processes that are gone (a crashed worker) are removed by the next helper that looks.
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface AttachRegistration {
  /** The process ids of the other helpers attached to the same simulator when this one attached. */
  readonly others: readonly number[];
  /** Takes this helper's file away (at its `stop()`). */
  release(): Promise<void>;
}

/** Registers a helper attached to the simulator at `apiUrl`. Never fails the attach: a folder that cannot be written means no warning, nothing more. */
export async function registerAttached(apiUrl: string, root: string = join(tmpdir(), 'station-sim-attached')): Promise<AttachRegistration> {
  const dir = join(root, createHash('sha256').update(apiUrl).digest('hex').slice(0, 16));
  const own = `${process.pid}-${randomUUID()}`;
  try {
    await mkdir(dir, { recursive: true });
    const others: number[] = [];
    for (const name of await readdir(dir)) {
      const pid = Number(name.split('-')[0]);
      if (!Number.isInteger(pid) || pid <= 0) continue;
      if (alive(pid)) others.push(pid);
      else await rm(join(dir, name), { force: true });
    }
    await writeFile(join(dir, own), `${apiUrl}\n`);
    return { others, release: () => rm(join(dir, own), { force: true }) };
  } catch {
    return { others: [], release: async () => undefined };
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process is there, another user's.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The line a helper says when others are attached to its simulator too. */
export function sharedSimulatorLine(apiUrl: string, others: readonly number[]): string {
  const who = others.length === 1 ? `another test helper (process ${others[0]}) is` : `${others.length} other test helpers (processes ${others.join(', ')}) are`;
  return (
    `station-sim: ${who} attached to the simulator at ${apiUrl} as well: test files running in parallel share its stations, ` +
    "and one file's reset or fault reaches the other's tests. Run them one at a time (vitest run --no-file-parallelism, " +
    'jest --runInBand, node --test --test-concurrency=1), or pass attach: false to give each file its own simulator.'
  );
}
