/** A whole transcript's text read as `transcript show` reads a file: through the streaming reader. */
import { Readable } from 'node:stream';
import { TranscriptReader } from '../../src/transcript/transcript-reader.js';
import type { TranscriptEntry } from '../../src/transcript/transcript-format.js';

export async function readTranscript(text: string): Promise<{ entries: TranscriptEntry[]; skipped: number }> {
  const reader = new TranscriptReader(Readable.from([text]));
  const entries: TranscriptEntry[] = [];
  for await (const entry of reader) entries.push(entry);
  return { entries, skipped: reader.skipped };
}
