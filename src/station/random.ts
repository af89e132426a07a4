/**
 * The seeded random source. Every station draws from its own generator, seeded from the run's seed
 * and the station id, so a station behaves the same whatever the order in which stations start and
 * however the fleet is sharded over processes.
 */
import { xoroshiro128plus, unsafeUniformIntDistribution, type RandomGenerator } from 'pure-rand';

export interface Random {
  /** A whole number in [min, max], both included. */
  int(min: number, max: number): number;
}

export function seededRandom(seed: number, stream = 0): Random {
  // Mix the stream into the seed so neighbouring station ids do not get correlated sequences.
  // Station ids go up to 2^53 - 1: the bits above 32 are mixed in too (they are 0 for smaller ids,
  // whose sequences stay as they were), so ids 2^32 apart do not share a sequence.
  const high = Math.floor(stream / 2 ** 32) | 0;
  const mixed = Math.imul(seed | 0, 0x9e3779b1) ^ Math.imul(stream | 0, 0x85ebca6b) ^ Math.imul(high, 0xc2b2ae35);
  const rng: RandomGenerator = xoroshiro128plus(mixed | 0);
  return {
    int: (min, max) => unsafeUniformIntDistribution(min, max, rng),
  };
}

/**
 * Mixed into the run's seed for the reconnect backoff's stream, so it never coincides with the
 * station model's stream (`seededRandom(seed, stationId)`): a reconnect draws nothing from the
 * stream unlock delays come from.
 */
export const RECONNECT_SEED_SALT = 0x2f6b_1d35;

/** The reconnect jitter stream of one station: seeded, and apart from the station model's. */
export function reconnectRandom(seed: number, stationId: number): Random {
  return seededRandom((seed ^ RECONNECT_SEED_SALT) | 0, stationId);
}

/** Mixed into the run's seed for a station's link (src/mqtt/link-shaping.ts): apart from both streams above. */
export const LINK_SEED_SALT = 0x5bd1_e995;

/** A uniform number in [0, 1) from one station's link stream: seeded, so a shaped run replays. */
export function linkDraw(seed: number, stationId: number): () => number {
  const random = seededRandom((seed ^ LINK_SEED_SALT) | 0, stationId);
  return () => random.int(0, 0x3fff_ffff) / 0x4000_0000;
}

/** An unseeded stream, for jitter that need not replay (a station built without a seed of its own). */
export function unseededRandom(): Random {
  return { int: (min, max) => min + Math.floor(Math.random() * (max - min + 1)) };
}
