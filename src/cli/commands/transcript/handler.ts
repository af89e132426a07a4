/** What `transcript show` and `transcript judge` do: read a transcript as it streams, and print a timeline or a verdict. */
import { createReadStream, type ReadStream } from 'node:fs';
import type { Writable } from 'node:stream';
import {
  CommandChain,
  entryCommandId,
  entryHasKind,
  entryIsAbout,
  formatEntry,
  formatTimeline,
  printable,
  type TranscriptEntry,
} from '../../../transcript/transcript-format.js';
import { ENTRY_KINDS, isEntryKind } from '../../../transcript/entry-kinds.js';
import { TranscriptReader } from '../../../transcript/transcript-reader.js';
import { judgeTranscript, type ReplayResult } from '../../../transcript/transcript-judge.js';
import { resolveFixture } from '../../../simulator/resolve-fixture.js';
import { judgeLine } from '../../../judge/judge-log.js';
import { findingCount, formatFinding } from '../../../judge/verdict.js';
import { SimError } from '../../../errors.js';
import { UsageError, type CliIo } from '../../output.js';
import { checkReportPath, finishJudge, judgeOutletsOf } from '../../judge-notice.js';
import type { JudgeFlags } from './options.js';

/** `transcript judge`'s exit codes. */
export const TRANSCRIPT_JUDGE_EXIT = { clean: 0, findings: 1 } as const;

/**
 * `transcript judge`: reads the file once, judging as it goes, prints each finding and a summary
 * on stdout, writes the JUnit report if asked, and answers the exit code.
 */
export async function judgeTranscriptFile(io: CliIo, argv: JudgeFlags): Promise<number> {
  const { file, fixture } = argv;
  if (fixture === '') throw new UsageError('--fixture needs a fixture file or a shipped fixture name');
  const outlets = judgeOutletsOf(argv);
  await checkReportPath(outlets);
  const settings = fixture === undefined ? undefined : (await resolveFixture(fixture)).judge;
  const input = await openTranscript(file);
  const reader = new TranscriptReader(input);
  let replay: ReplayResult;
  try {
    replay = await judgeTranscript(reader, settings === undefined ? {} : { settings });
  } catch (error) {
    throw readError(file, error);
  } finally {
    input.destroy();
  }
  reportSkipped(io, file, reader.skipped);
  const by = { given: `the judge settings of ${fixture ?? ''}`, transcript: 'the judge settings the transcript recorded', defaults: 'the default judge settings (the transcript recorded none; --fixture gives a fixture\'s)' }[replay.settingsSource];
  const requests = replay.requests > 0 ? ` and ${replay.requests} /v1 request${replay.requests === 1 ? '' : 's'}` : '';
  const lines = [`${file}: ${replay.judged} command${replay.judged === 1 ? '' : 's'}${requests} judged, by ${by}`];
  // The judge keeps the last findings (judge-log.ts): those before them are counted only.
  const total = findingCount(replay);
  if (total > replay.findings.length) lines.push(`  … ${total - replay.findings.length} earlier findings, counted but not listed`);
  for (const finding of replay.findings) lines.push(`  ${formatFinding(finding)}`);
  lines.push(judgeLine(replay.summary));
  io.stdout.write(lines.map(printable).join('\n') + '\n');
  if (replay.unjudgeable > 0) {
    io.stderr.write(
      `station-sim: ${replay.unjudgeable} command${replay.unjudgeable === 1 ? '' : 's'} of ${file} could not be judged: ${replay.unjudgeable === 1 ? 'its entry lacks' : 'their entries lack'} what the station saw (QoS, retain flag, online state): a transcript written before station-sim recorded it, or commands to stations whose fleet ran in another process than the recording one\n`,
    );
  }
  await finishJudge(io, replay, { ...outlets, mode: 'off' }, { settings: replay.settings });
  return total > 0 || replay.unjudgeable > 0 ? TRANSCRIPT_JUDGE_EXIT.findings : TRANSCRIPT_JUDGE_EXIT.clean;
}

/** How many candidates an ambiguous `--command` prefix names. */
const MAX_CANDIDATES = 5;

/**
 * The entries `--station` and `--kind` keep (each repeatable; both given, an entry must pass both).
 * A kind that does not exist is a usage error, answered with the kinds that do.
 */
export function entryFilter(stations: string[] | undefined, kinds: string[] | undefined): (entry: TranscriptEntry) => boolean {
  const unknown = (kinds ?? []).filter((kind) => !isEntryKind(kind));
  if (unknown.length > 0) throw new UsageError(`unknown --kind ${unknown.map((kind) => JSON.stringify(kind)).join(', ')}: the kinds are ${ENTRY_KINDS.join(', ')}`);
  if (stations?.some((station) => station === '')) throw new UsageError('--station needs a station token, e.g. --station CI-1');
  const stationSet = stations && stations.length > 0 ? new Set(stations) : undefined;
  const kindSet = kinds && kinds.length > 0 ? new Set(kinds.filter(isEntryKind)) : undefined;
  // `client` entries repeat the request of an `api` entry for the judge: shown only when asked for.
  return (entry) =>
    (stationSet === undefined || entryIsAbout(entry, stationSet)) && (kindSet === undefined ? entry.kind !== 'client' : entryHasKind(entry, kindSet));
}

interface ShowOptions {
  /** A command id or a unique prefix of one. */
  command: string | undefined;
  filter: (entry: TranscriptEntry) => boolean;
}

/**
 * Prints a transcript line by line as it reads it, so memory stays flat whatever the size of the
 * file; with a command id, only that command's chain is kept. A reader that goes away (`| head`)
 * ends it quietly.
 */
export async function showTranscript(io: CliIo, file: string, options: ShowOptions): Promise<void> {
  if (options.command === '') throw new UsageError('--command needs a command id or the start of one');
  // A prefix costs one more pass over the file: the first finds the one id it stands for.
  const commandId = options.command === undefined ? undefined : await resolveCommandId(io, file, options.command);
  const input = await openTranscript(file);
  const reader = new TranscriptReader(input);
  const out = new LineWriter(io.stdout);
  try {
    if (commandId === undefined) {
      let origin: number | undefined;
      for await (const entry of reader) {
        origin ??= Date.parse(entry.t);
        if (options.filter(entry) && !(await out.write(formatEntry(entry, origin)))) return;
      }
    } else {
      const chain = new CommandChain(commandId);
      for await (const entry of reader) chain.add(entry);
      for (const line of formatTimeline(chain.entries.filter(options.filter))) if (!(await out.write(line))) return;
    }
    if (!(await out.end())) return;
  } catch (error) {
    throw readError(file, error);
  } finally {
    input.destroy();
    out.release();
  }
  reportSkipped(io, file, reader.skipped);
}

/**
 * The one command id of the file that is `given` or starts with it. None, or several (an
 * ambiguous prefix, answered with up to MAX_CANDIDATES of them), is a BAD_REQUEST.
 */
async function resolveCommandId(io: CliIo, file: string, given: string): Promise<string> {
  const input = await openTranscript(file);
  const reader = new TranscriptReader(input);
  const candidates = new Set<string>();
  try {
    for await (const entry of reader) {
      const id = entryCommandId(entry);
      if (id === undefined || !id.startsWith(given)) continue;
      if (id === given) return id;
      candidates.add(id);
    }
  } catch (error) {
    throw readError(file, error);
  } finally {
    input.destroy();
  }
  const [only, ...others] = candidates;
  if (only !== undefined && others.length === 0) return only;
  if (only === undefined) {
    reportSkipped(io, file, reader.skipped);
    throw new SimError('BAD_REQUEST', `no command ${printable(given)} in ${file} (no command id is or starts with it)`);
  }
  const shown = [...candidates].slice(0, MAX_CANDIDATES).map(printable);
  const more = candidates.size > MAX_CANDIDATES ? `, and ${candidates.size - MAX_CANDIDATES} more` : '';
  throw new SimError('BAD_REQUEST', `--command ${printable(given)} is ambiguous in ${file}: ${candidates.size} command ids start with it (${shown.join(', ')}${more}); give more of the id`);
}

function readError(file: string, error: unknown): SimError {
  if (error instanceof SimError) return error;
  return new SimError('BAD_REQUEST', `cannot read transcript ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
}

function reportSkipped(io: CliIo, file: string, skipped: number): void {
  if (skipped > 0) io.stderr.write(`station-sim: ${skipped} line(s) of ${file} are not transcript entries and were skipped\n`);
}

async function openTranscript(file: string): Promise<ReadStream> {
  const input = createReadStream(file);
  try {
    await new Promise<void>((resolve, reject) => {
      input.once('ready', () => resolve());
      input.once('error', reject);
    });
  } catch (error) {
    throw new SimError('BAD_REQUEST', `cannot read transcript ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  return input;
}

/** Lines written in chunks of about this many characters: one write per line costs a system call each. */
const CHUNK_CHARS = 64 * 1024;

/**
 * Writes lines to stdout in chunks, waiting whenever the stream asks to (backpressure), and
 * noticing when the reader has gone (EPIPE: `| head` has read enough): every method then answers
 * false and the caller stops. Any other write error is thrown.
 */
class LineWriter {
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
