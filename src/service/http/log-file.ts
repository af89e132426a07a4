/**
 * The API's log file (`--log-file`), capped in size and rotated as logrotate does: when the file
 * reaches its size it becomes `PATH.1`, the `PATH.1` before it `PATH.2`, and so on up to
 * `PATH.<keep>`, whose previous contents are dropped. The disk used is then bounded by about
 * size × (keep + 1): a file goes over its size by at most the line that reached it.
 *
 * The rotation itself is rotating-file-stream's (README, "Dependencies"): renaming files while
 * lines keep coming, across restarts, is easy to get subtly wrong by hand.
 */
import { open } from 'node:fs/promises';
import { createStream, type RotatingFileStream } from 'rotating-file-stream';
import { SimError } from '../../errors.js';
import { openProblem } from '../../shared/open-problem.js';

export interface LogFileOptions {
  path: string;
  /** Size at which the file is rotated, bytes. */
  maxBytes: number;
  /** Rotated files kept beside the current one (`PATH.1` … `PATH.<keep>`). */
  keep: number;
  /**
   * Told once when the file cannot be written any more (a full disk); the lines after that are lost.
   * @default a process warning, so the failure is never silent
   */
  onNotice?: (message: string) => void;
}

/** A log destination for pino (which calls `write` with one JSON line) that `close()` flushes and closes. */
export interface LogFile {
  readonly path: string;
  write(line: string): void;
  /** Writes what is queued, then closes the file; lines written after this are dropped. */
  close(): Promise<void>;
}

export async function openLogFile(options: LogFileOptions): Promise<LogFile> {
  const { path } = options;
  // Opened once here, before the rotating stream takes over, for two reasons: a missing directory
  // must fail start-up (rotating-file-stream would create it, and a typo would log to a surprise
  // place), and the failure must be one clear line rather than an 'error' event later.
  try {
    await (await open(path, 'a')).close();
  } catch (error) {
    const cause = error as NodeJS.ErrnoException;
    throw new SimError('BAD_REQUEST', `cannot write the log to ${path}: ${openProblem(cause)}`, { cause });
  }
  // Appends: a restart keeps the lines before it, and a file already over its size is rotated first.
  const stream: RotatingFileStream = createStream(path, { size: `${options.maxBytes}B`, rotate: options.keep });
  await new Promise<void>((resolve, reject) => {
    const opened = (): void => {
      stream.off('error', failed);
      resolve();
    };
    const failed = (cause: Error): void => {
      stream.off('open', opened);
      reject(new SimError('BAD_REQUEST', `cannot write the log to ${path}: ${openProblem(cause)}`, { cause }));
    };
    stream.once('open', opened);
    stream.once('error', failed);
  });
  const notify = options.onNotice ?? ((message: string) => process.emitWarning(message, 'LogFileWarning'));
  let failed = false;
  let closing = false;
  // Without a listener an 'error' would end the process; a log that cannot be written is not worth that.
  stream.on('error', (error) => {
    if (failed) return;
    failed = true;
    notify(`the log ${path} could not be written (${error.message}); logging to it stopped`);
  });
  let closed: Promise<void> | undefined;
  return {
    path,
    write: (line) => {
      if (!failed && !closing) stream.write(line);
    },
    close: () =>
      (closed ??= new Promise<void>((resolve) => {
        closing = true;
        if (stream.destroyed) return resolve();
        // 'close' follows both a clean end and a failed last write (already reported above).
        stream.once('close', () => resolve());
        stream.end();
      })),
  };
}
