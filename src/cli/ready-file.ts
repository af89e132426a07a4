/**
 * `run --ready-file`: a file that exists exactly while the simulator is ready. It is removed before
 * the simulator starts (a stale file from the last run must never look ready), written atomically
 * once ready (a reader sees no file or the whole JSON, never half of it), and removed when the
 * simulator stops, however it stops.
 */
import { rmSync } from 'node:fs';
import { rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { SimError } from '../errors.js';
import { openProblem } from '../shared/open-problem.js';

export class ReadyFile {
  /** Written first, then renamed over the path: same directory, so the rename is atomic. */
  readonly #temporary: string;

  /**
   * While the file is written: removes it if the process exits without `remove()` (a second signal
   * exits at once, with `process.exit`), so the file never outlives the simulator.
   */
  readonly #onExit = (): void => {
    try {
      rmSync(this.path, { force: true });
    } catch {
      // Exiting: nothing more can be done, and the file says nothing wrong for long.
    }
  };

  constructor(readonly path: string) {
    this.#temporary = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  }

  /**
   * Removes what a previous run left, and checks that the file can be written, so that a path in
   * a missing or read-only directory fails in one line before anything starts.
   */
  async clear(): Promise<void> {
    await this.#attempt(async () => {
      await rm(this.path, { force: true });
      await writeFile(this.#temporary, '');
      await rm(this.#temporary, { force: true });
    });
  }

  /** Writes `data` as one JSON line, atomically. */
  async write(data: Record<string, unknown>): Promise<void> {
    await this.#attempt(async () => {
      await writeFile(this.#temporary, `${JSON.stringify(data)}\n`);
      await rename(this.#temporary, this.path);
    });
    process.off('exit', this.#onExit);
    process.on('exit', this.#onExit);
  }

  /** Removes the file (gone already is fine). */
  async remove(): Promise<void> {
    process.off('exit', this.#onExit);
    await rm(this.path, { force: true });
  }

  async #attempt(step: () => Promise<void>): Promise<void> {
    try {
      await step();
    } catch (error) {
      await rm(this.#temporary, { force: true }).catch(() => {});
      const why = openProblem(error);
      throw new SimError('BAD_REQUEST', `cannot write the ready file ${this.path}: ${why}`, { cause: error });
    }
  }
}
