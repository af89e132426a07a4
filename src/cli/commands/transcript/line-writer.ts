/** Where `transcript show` writes its lines: stdout, in chunks, minding backpressure and a reader gone. */
import type { Writable } from 'node:stream';
import { SimError } from '../../../errors.js';

/** Lines written in chunks of about this many characters: one write per line costs a system call each. */
const CHUNK_CHARS = 64 * 1024;

/**
 * Writes lines to stdout in chunks, waiting whenever the stream asks to (backpressure), and
 * noticing when the reader has gone (EPIPE: `| head` has read enough): every method then answers
 * false and the caller stops. Any other write error is thrown.
 */
export class LineWriter {
  readonly #out: NodeJS.WritableStream;
  #chunk = '';
  #error: Error | undefined;
  /** Wakes a wait for 'drain' or for a write's completion when the stream fails instead. */
  #wake: (() => void) | undefined;
  readonly #onError = (error: Error): void => {
    this.#error ??= error;
    this.#wake?.();
  };

  constructor(out: NodeJS.WritableStream) {
    this.#out = out;
    out.on('error', this.#onError);
  }

  /** Adds one line; false once the reader has gone. */
  async write(line: string): Promise<boolean> {
    if (!this.#ok()) return false;
    this.#chunk += `${line}\n`;
    if (this.#chunk.length < CHUNK_CHARS) return true;
    const chunk = this.#chunk;
    this.#chunk = '';
    if (!this.#out.write(chunk)) await this.#until((resolve) => this.#out.once('drain', resolve));
    return this.#ok();
  }

  /** Writes what is left and waits until every write has been handed on; false if the reader has gone. */
  async end(): Promise<boolean> {
    if (!this.#ok()) return false;
    const chunk = this.#chunk;
    this.#chunk = '';
    // A write's callback runs once it, and every write before it, is done or has failed; the
    // error event comes later, so the callback's error is kept here for release().
    await this.#until((resolve) =>
      this.#out.write(chunk, (error) => {
        if (error) this.#error ??= error;
        resolve();
      }),
    );
    return this.#ok();
  }

  /**
   * Stops listening for errors once every write is done. After a failure, or with writes still
   * pending (the reading failed halfway), the listener stays: an error event still to come must
   * not crash the process.
   */
  release(): void {
    if (this.#error === undefined && (this.#out as Writable).writableLength === 0) this.#out.off('error', this.#onError);
  }

  #ok(): boolean {
    if (this.#error === undefined) return true;
    const code = (this.#error as NodeJS.ErrnoException).code;
    if (code === 'EPIPE') return false;
    throw new SimError('INTERNAL', `cannot write the timeline to stdout: ${code ?? this.#error.message}`);
  }

  async #until(start: (resolve: () => void) => void): Promise<void> {
    if (this.#error !== undefined) return;
    await new Promise<void>((resolve) => {
      this.#wake = resolve;
      start(resolve);
    });
    this.#wake = undefined;
  }
}
