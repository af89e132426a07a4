/**
 * The request journal (docs/control-plane.md, "Request journal"), as WireMock's `/__admin/requests`:
 * every `/v1` request as its `api.request` event shows it, and every unlock command that reached a
 * station with its outcome, so a test can ask what reached the simulator since a mark. It is fed by
 * the event hub's raw traffic and bounded: the oldest entries go first.
 *
 * It always listens, so it records as little as it can: a request's fields and a number for its
 * time; a command's topic parts and its payload as it came off the broker, unparsed; an ack
 * likewise, in a ring of its own. Parsing, pairing commands with acks, timeouts and timestamps
 * happen when somebody reads (`query`), never per unlock.
 *
 * A `POST /sim/v1/reset` does not clear it: a test that resets between cases still sees what the
 * case before did, and asks from its own mark.
 */
import { parsePayload } from '../contract/topics.js';
import type { CommandTraffic, ApiRequestFields } from './event-hub.js';
import type { EventHub } from './event-hub.js';
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
  /**
   * A command with no ack this long after it was sent is a `timeout` (an ack later than that does
   * not change it). @default 5000
   */
  commandTimeoutMs?: number;
  /** Simulated time now, for commands still waiting. @default Date.now */
  now?: () => number;
}

/** A ring entry as recorded: `at` is simulated time in ms; a command keeps its payload until read. */
type Recorded =
  | { seq: number; at: number; kind: 'api'; fields: ApiRequestFields }
  | { seq: number; at: number; kind: 'command'; token: string; lockId: string; payload: Buffer; commandId?: string | null };

interface RecordedAck {
  at: number;
  token: string;
  payload: Buffer;
  /** Parsed on the first read: null when it is not an ack. */
  ack?: { commandId: string; lockId: string; accepted: boolean; reason?: string } | null;
}

/** A bounded ring: `start` is the oldest item, `size` how many there are. */
class Ring<T> {
  readonly items: (T | undefined)[];
  start = 0;
  size = 0;

  constructor(readonly capacity: number) {
    this.items = new Array<T | undefined>(capacity);
  }

  /** Adds `item`; returns the one it pushed out, if the ring was full. */
  push(item: T): T | undefined {
    if (this.size === this.capacity) {
      const oldest = this.items[this.start];
      this.items[this.start] = item;
      this.start = (this.start + 1) % this.capacity;
      return oldest;
    }
    this.items[(this.start + this.size) % this.capacity] = item;
    this.size += 1;
    return undefined;
  }

  at(index: number): T {
    return this.items[(this.start + index) % this.capacity]!;
  }

  clear(): void {
    this.items.fill(undefined);
    this.start = 0;
    this.size = 0;
  }
}

export class RequestJournal implements CommandTraffic {
  readonly #capacity: number;
  readonly #timeoutMs: number;
  readonly #now: () => number;
  readonly #entries: Ring<Recorded>;
  readonly #acks: Ring<RecordedAck>;
  /** The `seq` of the last entry recorded; it survives clears. */
  #seq = 0;
  /** The highest `seq` dropped for room since the last clear (0: none). */
  #droppedUpTo = 0;

  constructor(options: RequestJournalOptions = {}) {
    this.#capacity = options.capacity ?? JOURNAL_CAPACITY;
    if (!Number.isInteger(this.#capacity) || this.#capacity < 1) throw new RangeError(`journal capacity must be a whole number of at least 1, not ${this.#capacity}`);
    this.#timeoutMs = options.commandTimeoutMs ?? 5000;
    this.#now = options.now ?? Date.now;
    this.#entries = new Ring(this.#capacity);
    this.#acks = new Ring(this.#capacity);
  }

  /** Takes the hub's raw traffic from now on; the function returned stops it. */
  attach(hub: EventHub): () => void {
    return hub.onCommandTraffic(this);
  }

  /** The `seq` of the last entry recorded (0 before any): a mark to pass as `since`. */
  get mark(): number {
    return this.#seq;
  }

  /** A `/v1` request, as its `api.request` event would show it, at simulated time `at` (ms). */
  request(fields: ApiRequestFields, at: number): void {
    this.#push({ seq: this.#seq + 1, at, kind: 'api', fields });
  }

  /** An unlock command on its way to a station, its payload as it crossed the broker. */
  sent(token: string, lockId: string, payload: Buffer, at: number): void {
    this.#push({ seq: this.#seq + 1, at, kind: 'command', token, lockId, payload });
  }

  /** A station's ack, its payload as it crossed the broker. */
  acked(token: string, payload: Buffer, at: number): void {
    this.#acks.push({ at, token, payload });
  }

  /** When the command was first sent (a redelivery keeps the first time), while the journal still holds it. */
  sentAt(token: string, commandId: string): number | undefined {
    for (let i = 0; i < this.#entries.size; i += 1) {
      const recorded = this.#entries.at(i);
      if (recorded.kind === 'command' && recorded.token === token && commandIdOf(recorded) === commandId) return recorded.at;
    }
    return undefined;
  }

  #push(entry: Recorded): void {
    this.#seq = entry.seq;
    const dropped = this.#entries.push(entry);
    if (dropped) this.#droppedUpTo = dropped.seq;
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
    const answers = query.kind === 'api' ? undefined : this.#answers();
    const seen = new Set<string>();
    const ring = this.#entries;
    for (let i = 0; i < ring.size; i += 1) {
      const recorded = ring.at(i);
      const commandId = recorded.kind === 'command' ? commandIdOf(recorded) : undefined;
      if (commandId === null) continue; // not a command the station could read: it reached nobody's journal before either
      // A redelivery of a command already here is the same command.
      if (commandId !== undefined) {
        const key = `${recorded.kind === 'command' ? recorded.token : ''}\0${commandId}`;
        if (seen.has(key)) continue;
        seen.add(key);
      }
      if (recorded.seq <= since || !matches(recorded, query)) continue;
      if (entries.length === limit) {
        mark = entries[entries.length - 1]!.seq;
        break;
      }
      entries.push(recorded.kind === 'api' ? { seq: recorded.seq, at: iso(recorded.at), kind: 'api', ...recorded.fields } : this.#command(recorded, commandId!, answers!));
    }
    return { mark, truncated: since < this.#droppedUpTo, entries };
  }

  /** A command entry with its outcome, from the first ack of its station and id sent after it. */
  #command(recorded: Extract<Recorded, { kind: 'command' }>, commandId: string, answers: Map<string, RecordedAck[]>): JournalCommandEntry {
    const entry: JournalCommandEntry = { seq: recorded.seq, at: iso(recorded.at), kind: 'command', token: recorded.token, lockId: recorded.lockId, commandId, outcome: 'sent' };
    const answer = answers.get(`${recorded.token}\0${commandId}`)?.find((ack) => ack.at >= recorded.at);
    const ms = answer ? answer.at - recorded.at : undefined;
    if (answer && ms! <= this.#timeoutMs) {
      entry.outcome = answer.ack!.accepted ? 'acked' : 'rejected';
      if (!answer.ack!.accepted) entry.reason = answer.ack!.reason ?? 'rejected';
      entry.ms = ms!;
    } else if (answer || this.#now() - recorded.at >= this.#timeoutMs) {
      entry.outcome = 'timeout';
      entry.ms = this.#timeoutMs;
    }
    return entry;
  }

  /** The acks in the ring by station and command id, each parsed once. */
  #answers(): Map<string, RecordedAck[]> {
    const answers = new Map<string, RecordedAck[]>();
    for (let i = 0; i < this.#acks.size; i += 1) {
      const recorded = this.#acks.at(i);
      if (recorded.ack === undefined) {
        const ack = parsePayload('acks', recorded.payload);
        recorded.ack = ack ? { commandId: ack.commandId, lockId: ack.lockId, accepted: ack.accepted, ...(ack.accepted ? {} : { reason: ack.reason }) } : null;
      }
      if (!recorded.ack) continue;
      const key = `${recorded.token}\0${recorded.ack.commandId}`;
      const list = answers.get(key);
      if (list) list.push(recorded);
      else answers.set(key, [recorded]);
    }
    return answers;
  }

  /** Forgets every entry; `seq` keeps counting, so marks taken before stay valid. Returns how many went. */
  clear(): number {
    const cleared = this.#entries.size;
    this.#entries.clear();
    this.#acks.clear();
    this.#droppedUpTo = 0;
    return cleared;
  }
}

/** The command's id, parsed on the first read and kept; null when the payload is not a command. */
function commandIdOf(recorded: Extract<Recorded, { kind: 'command' }>): string | null {
  if (recorded.commandId === undefined) recorded.commandId = parsePayload('unlock', recorded.payload)?.commandId ?? null;
  return recorded.commandId;
}

function iso(at: number): string {
  return new Date(at).toISOString();
}

function matches(entry: Recorded, query: JournalQuery): boolean {
  if (query.kind !== undefined && entry.kind !== query.kind) return false;
  if (query.token !== undefined && (entry.kind === 'api' ? entry.fields.token : entry.token) !== query.token) return false;
  return true;
}
