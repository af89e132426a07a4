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
