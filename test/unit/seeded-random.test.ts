import { describe, expect, it } from 'vitest';
import { seededRandom } from '../support/seeded-random.js';

describe('seeded randomness', () => {
  it('draws the same sequence from the same seed, and another from another', () => {
    const draws = (seed: number) => Array.from({ length: 8 }, seededRandom(seed).next);
    expect(draws(42)).toEqual(draws(42));
    expect(draws(42)).not.toEqual(draws(43));
    expect(draws(7).every((draw) => draw >= 0 && draw < 1)).toBe(true);
  });
});
