/**
 * What the CLI prints. The ready line goes to stdout (one JSON line with `--json`, for scripts);
 * notices and errors go to stderr as one line each, never a stack trace for an expected failure.
 */
import { SimError } from '../errors.js';
import { FixtureError } from '../fixture/fixture-error.js';

export interface CliIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

export function printReady(io: CliIo, json: boolean, human: string, data: Record<string, unknown>): void {
  io.stdout.write(json ? `${JSON.stringify({ event: 'ready', ...data })}\n` : `${human}\n`);
}

export function notice(io: CliIo, message: string): void {
  io.stderr.write(`station-sim: ${message}\n`);
}

/** How a command ends: what `runCli` answers, set by the commands whose exit code says more than pass or fail. */
export interface CommandResult {
  /** The exit code `station-sim` should end with. */
  code: number;
  /** The exit code when the command fails with an error other than a usage error. @default 1 */
  failureCode?: number;
}

/** A command line that yargs rejected (unknown option, missing argument). */
export class UsageError extends Error {}

/** One line for an expected failure; the full error only for an unexpected one. */
export function describeFailure(error: unknown): string {
  if (error instanceof FixtureError) {
    const count = error.problems.length;
    return `invalid fixture (${count} problem${count === 1 ? '' : 's'}):\n${error.message}`;
  }
  if (error instanceof SimError) return error.message;
  if (error instanceof UsageError) return error.message;
  if (error instanceof Error) return `unexpected error: ${error.stack ?? error.message}`;
  return `unexpected error: ${String(error)}`;
}
