/**
 * `run --ready-file`: a file that exists exactly while the simulator is ready. It is removed before
 * the simulator starts (a stale file from the last run must never look ready), written atomically
 * once ready (a reader sees no file or the whole JSON, never half of it), and removed when the
 * simulator stops, however it stops.
 */
import { rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

export class ReadyFile {
  constructor(readonly path: string) {}

  /** Removes what a previous run left. */
  clear(): Promise<void> {
    return rm(this.path, { force: true });
  }

  /** Writes `data` as one JSON line: to a temporary file in the same directory, then renamed over the path. */
  async write(data: Record<string, unknown>): Promise<void> {
    // Same directory, so the rename stays on one file system and is atomic.
    const temporary = join(dirname(this.path), `.${basename(this.path)}.${process.pid}.tmp`);
    try {
      await writeFile(temporary, `${JSON.stringify(data)}\n`);
      await rename(temporary, this.path);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
  }

  /** Removes the file (gone already is fine). */
  remove(): Promise<void> {
    return rm(this.path, { force: true });
  }
}
