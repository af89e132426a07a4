import { describe, expect, it, vi } from 'vitest';
import { RetainedIndex, indexedMemoryPersistence } from '../../src/broker/retained-index.js';
import { startEmbeddedBroker } from '../../src/broker/embedded-broker.js';
import { startBrokerThread } from '../../src/broker/broker-thread.js';
import { startFleet } from '../../src/fleet/start-fleet.js';
import { parseFixture } from '../../src/fixture/load-fixture.js';

const topicsOf = (index: RetainedIndex, pattern: string) => [...index.match(pattern)].map((p) => p.topic).sort();

describe('RetainedIndex', () => {
  const index = new RetainedIndex();
  for (const topic of ['a', 'a/b', 'a/b/c', 'a/x/c', 'b/b/c', '$SYS/x', 'stations/S-1/status', 'stations/S-1/locks/1/state']) {
    index.store({ topic, payload: 'x' });
  }

  it('matches exact topics, + and # as MQTT 3.1.1 section 4.7 says', () => {
    expect(topicsOf(index, 'a/b')).toEqual(['a/b']);
    expect(topicsOf(index, 'a/+/c')).toEqual(['a/b/c', 'a/x/c']);
    expect(topicsOf(index, '+/b/c')).toEqual(['a/b/c', 'b/b/c']);
    expect(topicsOf(index, 'a/#')).toEqual(['a', 'a/b', 'a/b/c', 'a/x/c']);
    expect(topicsOf(index, 'stations/+/locks/+/state')).toEqual(['stations/S-1/locks/1/state']);
    expect(topicsOf(index, 'nothing/#')).toEqual([]);
  });

  it('keeps $ topics away from leading wildcards [MQTT-4.7.2-1]', () => {
    expect(topicsOf(index, '#')).not.toContain('$SYS/x');
    expect(topicsOf(index, '+/x')).toEqual([]);
    expect(topicsOf(index, '$SYS/#')).toEqual(['$SYS/x']);
  });

  it('replaces on a new retained message and deletes on an empty payload', () => {
    const own = new RetainedIndex();
    own.store({ topic: 'k/1', payload: 'first' });
    own.store({ topic: 'k/1', payload: 'second' });
    expect([...own.match('k/1')].map((p) => p.payload)).toEqual(['second']);
    expect(own.size).toBe(1);
    own.store({ topic: 'k/1', payload: '' });
    expect([...own.match('k/#')]).toEqual([]);
    expect(own.size).toBe(0);
  });
});

describe('fleet readiness and the retained store', () => {
  const brokers = [
    ['on the same thread', () => startEmbeddedBroker({ port: 0 })],
    ['on its own thread', () => startBrokerThread({ port: 0 })],
  ] as const;
  it.each(brokers)('a fleet is ready only once the broker %s retains every status and lock state', async (_, start) => {
    const broker = await start();
    const fixture = parseFixture({ fleets: [{ count: 300, tokenPattern: 'R-{n}', firstStationId: 1, locksPerStation: 4 }] });
    const fleet = await startFleet({ stations: fixture.stations, transport: { kind: 'memory', broker }, seed: 1, concurrency: 50, control: false });
    try {
      // Asked at once, before anything else runs: aedes PUBACKs before it stores.
      expect(await broker.retainedCount()).toBe(300 * 5);
    } finally {
      await fleet.stop();
      await broker.stop();
    }
  });
});

describe('the outgoing queues of the persistence', () => {
  it('leaves clean-session clients out: nothing is kept for them, so nothing is made on their PUBACK', async () => {
    const base = Object.getPrototypeOf(indexedMemoryPersistence()) as { outgoingClearMessageId(client: unknown, packet: unknown): Promise<unknown> };
    const spy = vi.spyOn(base, 'outgoingClearMessageId');
    try {
      const persistence = indexedMemoryPersistence() as unknown as { outgoingClearMessageId(client: object, packet: object): Promise<unknown> };
      await expect(persistence.outgoingClearMessageId({ id: 'fresh-1', clean: true }, { messageId: 1 })).resolves.toBeUndefined();
      expect(spy).not.toHaveBeenCalled();
      // A persistent session's queue is the store's business, as before.
      await persistence.outgoingClearMessageId({ id: 'station', clean: false }, { messageId: 1 });
      expect(spy).toHaveBeenCalledTimes(1);
    } finally {
      spy.mockRestore();
    }
  });
});

describe('RetainedIndex against a plain scan', () => {
  it('finds exactly what testing every retained topic against the filter finds', async () => {
    const fc = (await import('fast-check')).default;
    const level = fc.constantFrom('a', 'b', 'stations', 'S-1', 'S-2', 'locks', '1', 'state', '$SYS', '');
    const topic = fc.array(level, { minLength: 1, maxLength: 5 }).map((levels) => levels.join('/'));
    const filterLevel = fc.oneof(level, fc.constant('+'));
    const filter = fc
      .tuple(fc.array(filterLevel, { minLength: 1, maxLength: 5 }), fc.boolean())
      .map(([levels, hash]) => (hash ? [...levels.slice(0, -1), '#'] : levels).join('/'));
    fc.assert(
      fc.property(fc.array(topic, { maxLength: 30 }), fc.array(topic, { maxLength: 10 }), filter, (stored, cleared, pattern) => {
        const index = new RetainedIndex();
        const kept = new Set<string>();
        for (const t of stored) {
          index.store({ topic: t, payload: 'x' });
          kept.add(t);
        }
        for (const t of cleared) {
          index.store({ topic: t, payload: '' });
          kept.delete(t);
        }
        const naive = [...kept].filter((t) => scanMatches(pattern, t)).sort();
        expect(topicsOf(index, pattern)).toEqual(naive);
        expect(index.size).toBe(kept.size);
      }),
      { numRuns: 3000 },
    );
  });
});

/** MQTT 3.1.1 section 4.7, written out plainly: the reference the index is held to. */
function scanMatches(filter: string, topic: string): boolean {
  const f = filter.split('/');
  const t = topic.split('/');
  if (topic.startsWith('$') && (f[0] === '+' || f[0] === '#')) return false;
  for (let i = 0; i < f.length; i += 1) {
    if (f[i] === '#') return i <= t.length;
    if (i >= t.length || (f[i] !== '+' && f[i] !== t[i])) return false;
  }
  return f.length === t.length;
}
