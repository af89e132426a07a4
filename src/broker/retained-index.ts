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
}

interface LevelNode {
  /** Absent on leaves, which are half the nodes of a fleet (a status and four lock states each). */
  children: Map<string, LevelNode> | undefined;
  packet: RetainedPacket | undefined;
}

const newNode = (): LevelNode => ({ children: undefined, packet: undefined });

/** A tree of topic levels holding the retained packet of each topic. */
export class RetainedIndex {
  readonly #root = newNode();
  #size = 0;

  get size(): number {
    return this.#size;
  }

  /** Stores a retained packet; an empty payload deletes the topic's retained message [MQTT-3.3.1-10]. */
  store(packet: RetainedPacket): void {
    const levels = packet.topic.split('/');
    if (packet.payload.length === 0) {
      this.#delete(this.#root, levels, 0);
      return;
    }
    let node = this.#root;
    for (const level of levels) {
      node.children ??= new Map();
      let child = node.children.get(level);
      if (!child) {
        child = newNode();
        node.children.set(level, child);
      }
      node = child;
    }
    if (!node.packet) this.#size += 1;
    node.packet = packet;
  }

  /** Every retained packet whose topic matches the filter `pattern`. */
  *match(pattern: string): Generator<RetainedPacket> {
    yield* this.#walk(this.#root, pattern.split('/'), 0);
  }

  *#walk(node: LevelNode, levels: string[], depth: number): Generator<RetainedPacket> {
    if (depth === levels.length) {
      if (node.packet) yield node.packet;
      return;
    }
    const level = levels[depth]!;
    if (level === '#') {
      // "a/#" matches "a" itself too [MQTT-4.7.1-2].
      if (node.packet) yield node.packet;
      yield* this.#all(node, depth === 0);
      return;
    }
    if (level === '+') {
      for (const [name, child] of node.children ?? []) {
        // Wildcards at the first level do not match topics starting with "$" [MQTT-4.7.2-1].
        if (depth === 0 && name.startsWith('$')) continue;
        yield* this.#walk(child, levels, depth + 1);
      }
      return;
    }
    const child = node.children?.get(level);
    if (child) yield* this.#walk(child, levels, depth + 1);
  }

  *#all(node: LevelNode, skipDollar: boolean): Generator<RetainedPacket> {
    for (const [name, child] of node.children ?? []) {
      if (skipDollar && name.startsWith('$')) continue;
      if (child.packet) yield child.packet;
      yield* this.#all(child, false);
    }
  }

  #delete(node: LevelNode, levels: string[], depth: number): boolean {
    if (depth === levels.length) {
      if (node.packet) this.#size -= 1;
      node.packet = undefined;
    } else {
      const level = levels[depth]!;
      const child = node.children?.get(level);
      if (child && this.#delete(child, levels, depth + 1)) node.children!.delete(level);
      if (node.children?.size === 0) node.children = undefined;
    }
    return node.packet === undefined && node.children === undefined;
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
    // aedes reuses packet objects, so keep a copy, as the original store does.
    storeRetained(packet: RetainedPacket, callback?: (error: Error | null) => void) {
      index.store({ ...packet });
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
