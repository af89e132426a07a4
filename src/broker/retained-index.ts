/**
 * Retained messages indexed by topic level, for the embedded broker.
 *
 * aedes' in-memory persistence finds the retained messages for a new subscription by testing
 * every retained topic against the filter. Each station subscribes once per connection while the
 * fleet is retaining five messages per station, so booting N stations cost O(N²): 3,000 stations
 * took 15 s, nearly all of it in that scan. Walking a tree of topic levels makes a subscription
 * cost what it matches, and boot becomes linear.
 */
import { Readable } from 'node:stream';
import { createRequire } from 'node:module';
import type { AedesMemoryPersistence } from 'aedes-persistence';

// aedes-persistence is CommonJS with the factory as `module.exports`, while its types declare a
// default export; under NodeNext those disagree, so load it with require and type it by hand.
const memoryPersistence = createRequire(import.meta.url)('aedes-persistence') as () => AedesMemoryPersistence;

interface RetainedPacket {
  topic: string;
  payload: Buffer | string;
  cmd?: string;
  qos?: number;
  retain?: boolean;
  properties?: unknown;
}

/** The key of a level a topic does not have (a topic name never holds U+0000, MQTT 3.1.1 section 4.7.3). */
const NONE = '\u0000';

/**
 * A topic's first level, its second level (or NONE) and the rest after them (or NONE). The index
 * keeps one small Map per first two levels (`stations/ST-1`: a station's status and lock states):
 * a fleet of 100,000 stations holds 100,000 Maps, not the 600,000 of a tree with a node per level.
 */
function splitTopic(topic: string): [string, string, string] {
  const first = topic.indexOf('/');
  if (first === -1) return [topic, NONE, NONE];
  const second = topic.indexOf('/', first + 1);
  if (second === -1) return [topic.slice(0, first), topic.slice(first + 1), NONE];
  return [topic.slice(0, first), topic.slice(first + 1, second), topic.slice(second + 1)];
}

/** Whether `topic` matches the filter split into `filter` levels (MQTT 3.1.1 section 4.7). */
function topicMatches(filter: readonly string[], topic: string): boolean {
  // Wildcards at the first level do not match topics starting with "$" [MQTT-4.7.2-1].
  if (topic.startsWith('$') && (filter[0] === '+' || filter[0] === '#')) return false;
  const levels = topic.split('/');
  for (let i = 0; i < filter.length; i += 1) {
    const level = filter[i]!;
    // "a/#" matches "a" itself too [MQTT-4.7.1-2].
    if (level === '#') return true;
    if (i >= levels.length) return false;
    if (level !== '+' && level !== levels[i]) return false;
  }
  return filter.length === levels.length;
}

/** Retained packets by first level, second level and the rest of the topic. */
export class RetainedIndex {
  readonly #tree = new Map<string, Map<string, Map<string, RetainedPacket>>>();
  #size = 0;

  get size(): number {
    return this.#size;
  }

  /** Stores a retained packet; an empty payload deletes the topic's retained message [MQTT-3.3.1-10]. */
  store(packet: RetainedPacket): void {
    const [first, second, rest] = splitTopic(packet.topic);
    if (packet.payload.length === 0) {
      const seconds = this.#tree.get(first);
      const group = seconds?.get(second);
      if (!group?.delete(rest)) return;
      this.#size -= 1;
      if (group.size === 0) seconds!.delete(second);
      if (seconds!.size === 0) this.#tree.delete(first);
      return;
    }
    let seconds = this.#tree.get(first);
    if (!seconds) this.#tree.set(first, (seconds = new Map<string, Map<string, RetainedPacket>>()));
    let group = seconds.get(second);
    if (!group) seconds.set(second, (group = new Map<string, RetainedPacket>()));
    if (!group.has(rest)) this.#size += 1;
    group.set(rest, packet);
  }

  /** Every retained packet whose topic matches the filter `pattern`. */
  *match(pattern: string): Generator<RetainedPacket> {
    const filter = pattern.split('/');
    const [first, second] = filter;
    // The first two levels narrow the candidates; each candidate is then matched whole.
    const firsts = first === '+' || first === '#' ? [...this.#tree.values()] : [this.#tree.get(first!)];
    for (const seconds of firsts) {
      if (!seconds) continue;
      const groups = first === '#' || second === '+' || second === '#' ? seconds.values() : [seconds.get(second ?? NONE)];
      for (const group of groups) {
        if (!group) continue;
        for (const packet of group.values()) if (topicMatches(filter, packet.topic)) yield packet;
      }
    }
  }
}

/**
 * aedes' in-memory persistence with its retained store replaced by a `RetainedIndex`.
 * Everything else (sessions, subscriptions, wills, QoS state) stays aedes' own.
 */
export type IndexedMemoryPersistence = AedesMemoryPersistence & {
  /** How many topics hold a retained message now. */
  readonly retainedCount: number;
};

export function indexedMemoryPersistence(): IndexedMemoryPersistence {
  const persistence = memoryPersistence();
  const index = new RetainedIndex();
  const clearMessageId = persistence.outgoingClearMessageId.bind(persistence) as (client: unknown, packet: unknown) => Promise<unknown>;
  const matchAll = function* (patterns: string[]): Generator<RetainedPacket> {
    for (const pattern of patterns) yield* index.match(pattern);
  };
  Object.assign(persistence, {
    // aedes reuses packet objects, so keep a copy, as the original store does: of what a retained
    // delivery reads (aedes/lib/handlers/subscribe.js takes cmd, qos, topic and payload), not the
    // broker's counters and flags, five retained messages a station.
    storeRetained(packet: RetainedPacket, callback?: (error: Error | null) => void) {
      index.store({
        cmd: packet.cmd ?? 'publish',
        topic: packet.topic,
        payload: packet.payload,
        qos: packet.qos ?? 0,
        retain: true,
        ...(packet.properties === undefined ? {} : { properties: packet.properties }),
      });
      if (callback) {
        process.nextTick(callback, null);
        return undefined;
      }
      return Promise.resolve();
    },
    createRetainedStream: (pattern: string) => Readable.from(index.match(pattern)),
    // aedes keeps outgoing QoS 1 messages only for persistent sessions, but asks to clear one on
    // every PUBACK, and the store makes an empty queue for a client id it has not seen, for good:
    // about 130 bytes for every clean-session client id that ever acknowledged a message.
    outgoingClearMessageId: (client: { clean?: boolean }, packet: unknown) =>
      client.clean ? Promise.resolve(undefined) : clearMessageId(client, packet),
    createRetainedStreamCombi: (patterns: string[]) => Readable.from(matchAll(patterns)),
  });
  Object.defineProperty(persistence, 'retainedCount', { get: () => index.size });
  return persistence as IndexedMemoryPersistence;
}
