/**
 * Randomness a failing test can repeat: draws from a seed, TEST_SEED when set, else a random
 * one. The seed is added to a failing test's error, so `TEST_SEED=<seed> npx vitest run <file>`
 * draws the same again.
 */
import { onTestFailed } from 'vitest';

export interface SeededRandom {
  readonly seed: number;
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [0, below). */
  below(below: number): number;
}

/** mulberry32: small, fast, and the same sequence for the same seed on every machine. */
export function seededRandom(seed: number): SeededRandom {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { seed, next, below: (below) => Math.floor(next() * below) };
}

/** The run's seed: TEST_SEED, or a random one. */
export function testSeed(): number {
  const given = process.env['TEST_SEED'];
  if (given !== undefined && given !== '') {
    const seed = Number(given);
    if (!Number.isInteger(seed)) throw new Error(`TEST_SEED should be an integer, not ${given}`);
    return seed;
  }
  return Math.floor(Math.random() * 2 ** 32);
}

/** Inside a test: draws from the run's seed, and names the seed in the test's failure. */
export function randomForTest(): SeededRandom {
  const random = seededRandom(testSeed());
  onTestFailed(({ task }) => {
    for (const error of task.result?.errors ?? []) error.message = `${error.message} (TEST_SEED=${random.seed})`;
  });
  return random;
}
