import { describe, expect, it } from 'vitest';
import { backoffWithJitter } from '../../../../src/pipeline/processors/deliver-now-or-later.js';

describe('backoffWithJitter', () => {
  it('grows exponentially, stays within [bound/2, bound], and respects the cap', () => {
    expect(backoffWithJitter(1, 1000, 60_000, () => 0)).toBe(500);
    expect(backoffWithJitter(1, 1000, 60_000, () => 1)).toBe(1000);
    expect(backoffWithJitter(4, 1000, 60_000, () => 1)).toBe(8000);
    expect(backoffWithJitter(20, 1000, 60_000, () => 1)).toBe(60_000);
    const spread = new Set(Array.from({ length: 50 }, () => backoffWithJitter(3, 1000, 60_000)));
    expect(spread.size).toBeGreaterThan(10);
  });
});
