/**
 * Reads a transcript file line by line (node:readline over a stream), so memory stays flat
 * whatever the size of the file: a long soak of a large fleet records hundreds of MB, more than
 * one string can hold.
 */
import { createInterface } from 'node:readline';
import { parseEntry, type TranscriptEntry } from './transcript-format.js';

/** The entries of a transcript stream, in order; lines that are not entries are skipped and counted. */
export class TranscriptReader implements AsyncIterable<TranscriptEntry> {
  readonly #input: NodeJS.ReadableStream;
  #skipped = 0;

  constructor(input: NodeJS.ReadableStream) {
    this.#input = input;
  }

  /** Lines skipped so far: not JSON, or not an entry of the right shape for its kind. */
  get skipped(): number {
    return this.#skipped;
  }

  async *[Symbol.asyncIterator](): AsyncIterator<TranscriptEntry> {
    // crlfDelay: a transcript edited on Windows still splits on its CRLF line ends.
    for await (const line of createInterface({ input: this.#input, crlfDelay: Infinity })) {
      if (line.trim() === '') continue;
      const entry = parseEntry(line);
      if (entry) yield entry;
      else this.#skipped += 1;
    }
  }
}
