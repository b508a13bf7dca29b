/**
 * A request's job id is derived from its key (the interaction id) in every process. Processes of
 * two versions can serve one shard during an upgrade, so the derivation must never change: the
 * value below is pinned.
 */
import { describe, expect, it } from 'vitest';
import { jobIdFor } from '../../../src/pipeline/accept-request.js';

describe('jobIdFor', () => {
  it('derives the same name-based UUID (version 8, RFC 9562 variant) as every earlier version', () => {
    expect(jobIdFor('1180000000000000001')).toBe('0e9ab6e7-5934-8101-b662-5afd26203472');
  });

  it('gives different keys different ids', () => {
    expect(jobIdFor('1180000000000000002')).not.toBe(jobIdFor('1180000000000000001'));
  });
});
