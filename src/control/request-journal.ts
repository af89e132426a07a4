/**
 * The request journal (docs/control-plane.md, "Request journal"), as WireMock's `/__admin/requests`:
 * every `/v1` request as its `api.request` event shows it, and every unlock command that reached a
 * station with its outcome, so a test can ask what reached the simulator since a mark. It is fed by
 * the event hub, like the stream and transcripts, and bounded: the oldest entries go first.
 *
 * A `POST /sim/v1/reset` does not clear it: a test that resets between cases still sees what the
 * case before did, and asks from its own mark.
 */
import type { EventHub, SimStreamEvent } from './event-hub.js';
import { JOURNAL_CAPACITY, type JournalCommandEntry, type JournalEntry, type JournalKind, type JournalReply } from './wire-schemas.js';

export interface JournalQuery {
  /** Only entries with a greater `seq`. @default 0 */
  since?: number;
  kind?: JournalKind;
  /** A command's station, or a request's `token` field. */
  token?: string;
  /** @default the capacity */
  limit?: number;
}

export interface RequestJournalOptions {
  /** @default 10000 */
  capacity?: number;
}

type CommandEvent = Extract<SimStreamEvent, { type: 'command.sent' | 'command.acked' | 'command.rejected' | 'command.timeout' }>;

export class RequestJournal {
  readonly #capacity: number;
  /** A ring: `#start` is the oldest entry, `#size` how many there are. */
  readonly #ring: (JournalEntry | undefined)[];
  #start = 0;
  #size = 0;
  /** The `seq` of the last entry recorded; it survives clears. */
  #seq = 0;
  /** The highest `seq` dropped for room since the last clear (0: none). */
  #droppedUpTo = 0;
  /** Command entries still in the ring, by commandId, for their outcome. */
  readonly #commands = new Map<string, JournalCommandEntry>();

  constructor(options: RequestJournalOptions = {}) {
    this.#capacity = options.capacity ?? JOURNAL_CAPACITY;
    if (!Number.isInteger(this.#capacity) || this.#capacity < 1) throw new RangeError(`journal capacity must be a whole number of at least 1, not ${this.#capacity}`);
    this.#ring = new Array<JournalEntry | undefined>(this.#capacity);
  }

  /** Listens to the hub from now on; the function returned stops it. */
  attach(hub: EventHub): () => void {
    return hub.subscribe((event) => this.record(event), ['api.request', 'command.sent', 'command.acked', 'command.rejected', 'command.timeout']);
  }

  /** The `seq` of the last entry recorded (0 before any): a mark to pass as `since`. */
  get mark(): number {
    return this.#seq;
  }

  /** Takes in one event of the hub; those of no interest to the journal are ignored. */
  record(event: SimStreamEvent): void {
    switch (event.type) {
      case 'api.request': {
        // Every field the event has, so fields added to `api.request` reach the journal too.
        const { type: _type, time, ...fields } = event;
        this.#push({ seq: this.#seq + 1, at: time, kind: 'api', ...fields });
        return;
      }
      case 'command.sent':
      case 'command.acked':
      case 'command.rejected':
      case 'command.timeout':
        this.#command(event);
        return;
      default:
        return;
    }
  }

  #command(event: CommandEvent): void {
    const known = this.#commands.get(event.commandId);
    if (event.type === 'command.sent') {
      // A redelivery of a command already here is the same command.
      if (known) return;
      const entry: JournalCommandEntry = { seq: this.#seq + 1, at: event.time, kind: 'command', token: event.token, lockId: event.lockId, commandId: event.commandId, outcome: 'sent' };
      this.#push(entry);
      this.#commands.set(entry.commandId, entry);
      return;
    }
    // An answer to a command the journal no longer holds (dropped, cleared) has nothing to update.
    if (!known || known.outcome !== 'sent') return;
    known.outcome = event.type === 'command.acked' ? 'acked' : event.type === 'command.rejected' ? 'rejected' : 'timeout';
    if (event.type === 'command.rejected') known.reason = event.reason;
    if (event.ms !== undefined) known.ms = event.ms;
  }

  #push(entry: JournalEntry): void {
    this.#seq = entry.seq;
    if (this.#size === this.#capacity) {
      const oldest = this.#ring[this.#start]!;
      this.#droppedUpTo = oldest.seq;
      if (oldest.kind === 'command' && this.#commands.get(oldest.commandId) === oldest) this.#commands.delete(oldest.commandId);
      this.#ring[this.#start] = entry;
      this.#start = (this.#start + 1) % this.#capacity;
      return;
    }
    this.#ring[(this.#start + this.#size) % this.#capacity] = entry;
    this.#size += 1;
  }

  /**
   * The entries after `since` that match, oldest first. `mark` is where the next query should start:
   * the last entry recorded, or the last one returned when `limit` cut the answer short.
   */
  query(query: JournalQuery = {}): JournalReply {
    const since = query.since ?? 0;
    const limit = query.limit ?? this.#capacity;
    const entries: JournalEntry[] = [];
    let mark = this.#seq;
    for (let i = this.#firstAfter(since); i < this.#size; i += 1) {
      const entry = this.#ring[(this.#start + i) % this.#capacity]!;
      if (!matches(entry, query)) continue;
      if (entries.length === limit) {
        mark = entries[entries.length - 1]!.seq;
        break;
      }
      // A copy: a command's outcome changes later, and an answer must not change after it is given.
      entries.push({ ...entry });
    }
    return { mark, truncated: since < this.#droppedUpTo, entries };
  }

  /** Forgets every entry; `seq` keeps counting, so marks taken before stay valid. Returns how many went. */
  clear(): number {
    const cleared = this.#size;
    this.#ring.fill(undefined);
    this.#start = 0;
    this.#size = 0;
    this.#droppedUpTo = 0;
    this.#commands.clear();
    return cleared;
  }

  /** The ring position of the first entry with a `seq` greater than `since` (seqs are consecutive within the ring). */
  #firstAfter(since: number): number {
    if (this.#size === 0) return 0;
    const first = this.#ring[this.#start]!.seq;
    return Math.min(this.#size, Math.max(0, since - first + 1));
  }
}

function matches(entry: JournalEntry, query: JournalQuery): boolean {
  if (query.kind !== undefined && entry.kind !== query.kind) return false;
  if (query.token !== undefined && (entry as { token?: unknown }).token !== query.token) return false;
  return true;
}
