/** The daily cap that holds for a member: the one rule every reader of a cap calls. */
import { describe, expect, it } from 'vitest';
import { effectiveDailyCap } from '../../../src/credits/index.js';

describe('effectiveDailyCap', () => {
  it('is the guild cap when none of the member’s roles has its own, and none when the guild has none', () => {
    expect(effectiveDailyCap(50, [])).toBe(50);
    expect(effectiveDailyCap(null, [])).toBeNull();
  });

  it('is the most generous of the member’s role caps, above the guild cap or below it', () => {
    expect(effectiveDailyCap(50, [80, 120])).toBe(120);
    expect(effectiveDailyCap(50, [10])).toBe(10);
    expect(effectiveDailyCap(null, [0, 5])).toBe(5);
  });
});
