/**
 * What `transcript show` does: print a transcript as a timeline while it streams, or one command's
 * chain. Apart from `transcript judge`: a timeline needs neither the judge nor the fixture schema.
 */
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
import { SimError } from '../../../errors.js';
import { UsageError, type CliIo } from '../../output.js';
import { LineWriter } from './line-writer.js';
import type { ShowFlags } from './options.js';
import { openTranscript, readError, reportSkipped } from './transcript-file.js';

/** How many candidates an ambiguous `--command` prefix names. */
const MAX_CANDIDATES = 5;

/**
 * The entries `--station` and `--kind` keep (each repeatable; both given, an entry must pass both).
 * A kind that does not exist is a usage error, answered with the kinds that do.
 */
function entryFilter(stations: string[] | undefined, kinds: string[] | undefined): (entry: TranscriptEntry) => boolean {
  const unknown = (kinds ?? []).filter((kind) => !isEntryKind(kind));
  if (unknown.length > 0) throw new UsageError(`unknown --kind ${unknown.map((kind) => JSON.stringify(kind)).join(', ')}: the kinds are ${ENTRY_KINDS.join(', ')}`);
  if (stations?.some((station) => station === '')) throw new UsageError('--station needs a station token, e.g. --station CI-1');
  const stationSet = stations && stations.length > 0 ? new Set(stations) : undefined;
  const kindSet = kinds && kinds.length > 0 ? new Set(kinds.filter(isEntryKind)) : undefined;
  // `client` entries repeat the request of an `api` entry for the judge: shown only when asked for.
  return (entry) =>
    (stationSet === undefined || entryIsAbout(entry, stationSet)) && (kindSet === undefined ? entry.kind !== 'client' : entryHasKind(entry, kindSet));
}

/**
 * Prints a transcript line by line as it reads it, so memory stays flat whatever the size of the
 * file; with `--command` (a command id or a unique prefix of one), only that command's chain is
 * kept. A reader that goes away (`| head`) ends it quietly.
 */
export async function showTranscript(io: CliIo, { file, command, station, kind }: ShowFlags): Promise<void> {
  const filter = entryFilter(station, kind);
  if (command === '') throw new UsageError('--command needs a command id or the start of one');
  // A prefix costs one more pass over the file: the first finds the one id it stands for.
  const commandId = command === undefined ? undefined : await resolveCommandId(io, file, command);
  const input = await openTranscript(file);
  const reader = new TranscriptReader(input);
  const out = new LineWriter(io.stdout);
  try {
    if (commandId === undefined) {
      let origin: number | undefined;
      for await (const entry of reader) {
        origin ??= Date.parse(entry.t);
        if (filter(entry) && !(await out.write(formatEntry(entry, origin)))) return;
      }
    } else {
      const chain = new CommandChain(commandId);
      for await (const entry of reader) chain.add(entry);
      for (const line of formatTimeline(chain.entries.filter(filter))) if (!(await out.write(line))) return;
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
