/**
 * Ids that replay: UUID-shaped (version 4, RFC 9562 section 5.4) strings drawn from a seeded
 * generator instead of the system's random source. Under a manual clock the simulator names its
 * unlock commands with these, so the same fixture and seed give the same command ids, and so the
 * same transcript byte for byte (docs/fixtures.md, "Reproducible runs"). Never for anything that
 * must be unguessable: the sequence follows from the seed.
 */
import { unsafeUniformIntDistribution, xoroshiro128plus } from 'pure-rand';

/** Mixed into the seed so these ids share nothing with any other stream drawn from the same seed. */
const ID_SEED_SALT = 0x5eed_1d5;

/** A function that returns the next id of the sequence of `seed` on each call. */
export function seededUuids(seed: number): () => string {
  const rng = xoroshiro128plus((seed ^ ID_SEED_SALT) | 0);
  const word = (): string => (unsafeUniformIntDistribution(0, 0xffff, rng) >>> 0).toString(16).padStart(4, '0');
  return () => {
    const w = Array.from({ length: 8 }, word);
    // Version 4 in the 13th digit, variant 10xx in the 17th, as randomUUID() writes them.
    const version = `4${w[3]!.slice(1)}`;
    const variant = `${((parseInt(w[4]!.slice(0, 1), 16) & 0x3) | 0x8).toString(16)}${w[4]!.slice(1)}`;
    return `${w[0]}${w[1]}-${w[2]}-${version}-${variant}-${w[5]}${w[6]}${w[7]}`;
  };
}
