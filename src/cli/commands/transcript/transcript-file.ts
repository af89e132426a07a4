/** How `transcript show` and `transcript judge` open the file, and say what they could not read. */
import { createReadStream, type ReadStream } from 'node:fs';
import { SimError } from '../../../errors.js';
import type { CliIo } from '../../output.js';

/** A failure to read the file, as one line naming it; a SimError (an entry the reader refused) as it is. */
export function readError(file: string, error: unknown): SimError {
  if (error instanceof SimError) return error;
  return new SimError('BAD_REQUEST', `cannot read transcript ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
}

/** Says on stderr how many lines of the file were not transcript entries. */
export function reportSkipped(io: CliIo, file: string, skipped: number): void {
  if (skipped > 0) io.stderr.write(`station-sim: ${skipped} line(s) of ${file} are not transcript entries and were skipped\n`);
}

/** The file open for reading; one that cannot be opened (missing, unreadable) fails here, naming it. */
export async function openTranscript(file: string): Promise<ReadStream> {
  const input = createReadStream(file);
  try {
    await new Promise<void>((resolve, reject) => {
      input.once('ready', () => resolve());
      input.once('error', reject);
    });
  } catch (error) {
    throw readError(file, error);
  }
  return input;
}
