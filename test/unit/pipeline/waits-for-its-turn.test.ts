import { describe, expect, it } from 'vitest';
import { TAKEN_AT_ONCE_AHEAD, waitsForItsTurn } from '../../../src/pipeline/accept-request.js';

describe('waitsForItsTurn (whether an acknowledgement offers Cancel)', () => {
  it('is false for a job the workers take at once: a free slot and few ahead', () => {
    expect(waitsForItsTurn({ ahead: 0, inFlight: 0, cap: 10 })).toBe(false);
    expect(waitsForItsTurn({ ahead: 5, inFlight: 4, cap: 10 })).toBe(false);
    expect(waitsForItsTurn({ ahead: TAKEN_AT_ONCE_AHEAD - 1, inFlight: 0, cap: 100_000 })).toBe(false);
  });

  it('is true when the in-flight cap holds the job, or many wait ahead of it', () => {
    expect(waitsForItsTurn({ ahead: 0, inFlight: 10, cap: 10 })).toBe(true);
    expect(waitsForItsTurn({ ahead: 6, inFlight: 4, cap: 10 })).toBe(true);
    expect(waitsForItsTurn({ ahead: TAKEN_AT_ONCE_AHEAD, inFlight: 0, cap: 100_000 })).toBe(true);
  });
});
