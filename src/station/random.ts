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
  const rng: RandomGenerator = xoroshiro128plus((Math.imul(seed | 0, 0x9e3779b1) ^ Math.imul(stream | 0, 0x85ebca6b)) | 0);
  return {
    int: (min, max) => unsafeUniformIntDistribution(min, max, rng),
  };
}
