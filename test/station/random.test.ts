import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../src/station/random.js';

const draws = (seed: number, stream: number): number[] => {
  const random = seededRandom(seed, stream);
  return Array.from({ length: 8 }, () => random.int(0, 1_000_000));
};

describe('seededRandom', () => {
  it('replays a sequence from the same seed and station id', () => {
    expect(draws(7, 12)).toEqual(draws(7, 12));
  });

  it('gives station ids 2^32 apart sequences of their own (ids go up to 2^53 - 1)', () => {
    expect(draws(1, 5 + 2 ** 32)).not.toEqual(draws(1, 5));
    expect(draws(1, 2 ** 40)).not.toEqual(draws(1, 0));
    expect(draws(1, 5 + 2 ** 32)).toEqual(draws(1, 5 + 2 ** 32));
  });
});
