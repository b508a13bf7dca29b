/**
 * A gateway replica's shards from its ordinal: SHARD_COUNT split into GATEWAY_REPLICAS contiguous
 * ranges, the one for GATEWAY_ORDINAL (a StatefulSet pod's index), and what the configuration refuses.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig, shardIdsForOrdinal } from '../../src/config.js';
import { COMPLETE_ENV, problemsOf } from '../support/config-env.js';

const complete = COMPLETE_ENV;


describe('shardIdsForOrdinal', () => {
  it('gives each ordinal a contiguous range, the ranges covering every shard exactly once', () => {
    for (const shardCount of [1, 2, 5, 12, 16, 20, 24, 97, 128]) {
      for (const replicas of [1, 2, 3, 4, 5, 7, 12].filter((count) => count <= shardCount)) {
        const ranges = Array.from({ length: replicas }, (_, ordinal) => shardIdsForOrdinal(shardCount, replicas, ordinal));
        expect(ranges.flat(), `${shardCount} shards on ${replicas}`).toEqual(Array.from({ length: shardCount }, (_, id) => id));
        for (const range of ranges) {
          expect(range.length).toBeGreaterThan(0);
          expect(range.at(-1)! - range[0]!).toBe(range.length - 1);
        }
        // As even as whole shards allow: sizes differ by at most one.
        const sizes = ranges.map((range) => range.length);
        expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
      }
    }
  });

  it('splits 12 shards on 2 replicas as 0-5 and 6-11, and 20 on 3 as 0-6, 7-13, 14-19', () => {
    expect(shardIdsForOrdinal(12, 2, 0)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(shardIdsForOrdinal(12, 2, 1)).toEqual([6, 7, 8, 9, 10, 11]);
    expect([0, 1, 2].map((ordinal) => shardIdsForOrdinal(20, 3, ordinal)).map((range) => [range[0], range.at(-1)])).toEqual([
      [0, 6],
      [7, 13],
      [14, 19],
    ]);
  });

  it('refuses an ordinal outside the replicas, and more replicas than shards', () => {
    expect(() => shardIdsForOrdinal(12, 2, 2)).toThrow(RangeError);
    expect(() => shardIdsForOrdinal(12, 2, -1)).toThrow(RangeError);
    expect(() => shardIdsForOrdinal(2, 3, 0)).toThrow(RangeError);
    expect(() => shardIdsForOrdinal(12, 0, 0)).toThrow(RangeError);
  });
});

describe('GATEWAY_REPLICAS and GATEWAY_ORDINAL', () => {
  it("set this process's shards from SHARD_COUNT", () => {
    const config = loadConfig({ env: { ...complete, SHARD_COUNT: '12', GATEWAY_REPLICAS: '3', GATEWAY_ORDINAL: '1' } });
    expect(config.shardCount).toBe(12);
    expect(config.shardIds).toEqual([4, 5, 6, 7]);
    expect(Object.isFrozen(config.shardIds)).toBe(true);
  });

  it('refuses an ordinal at or past the replica count', () => {
    expect(problemsOf({ ...complete, SHARD_COUNT: '12', GATEWAY_REPLICAS: '3', GATEWAY_ORDINAL: '3' })).toEqual([
      expect.stringMatching(/^GATEWAY_ORDINAL: expected .*below GATEWAY_REPLICAS \(3\)/),
    ]);
  });

  it('refuses more replicas than shards', () => {
    expect(problemsOf({ ...complete, SHARD_COUNT: '2', GATEWAY_REPLICAS: '3', GATEWAY_ORDINAL: '0' })).toEqual([
      expect.stringMatching(/^GATEWAY_REPLICAS: expected at most SHARD_COUNT \(2\)/),
    ]);
  });

  it('refuses SHARD_IDS beside them: one way to say which shards', () => {
    expect(problemsOf({ ...complete, SHARD_COUNT: '12', SHARD_IDS: '0-5', GATEWAY_REPLICAS: '2', GATEWAY_ORDINAL: '0' })).toEqual([
      expect.stringMatching(/^SHARD_IDS: expected .*not both/),
    ]);
  });

  it('needs SHARD_COUNT, and each of the two with the other', () => {
    expect(problemsOf({ ...complete, GATEWAY_REPLICAS: '2', GATEWAY_ORDINAL: '0' })).toEqual([expect.stringMatching(/^SHARD_COUNT is not set: GATEWAY_REPLICAS/)]);
    expect(problemsOf({ ...complete, SHARD_COUNT: '12', GATEWAY_REPLICAS: '2' })).toEqual([expect.stringMatching(/^GATEWAY_ORDINAL is not set/)]);
    expect(problemsOf({ ...complete, SHARD_COUNT: '12', GATEWAY_ORDINAL: '0' })).toEqual([expect.stringMatching(/^GATEWAY_REPLICAS is not set/)]);
  });

  it('reads an ordinal as the whole number it is, and refuses anything else', () => {
    expect(problemsOf({ ...complete, SHARD_COUNT: '12', GATEWAY_REPLICAS: '2', GATEWAY_ORDINAL: 'gateway-1' })[0]).toMatch(/^GATEWAY_ORDINAL: expected/);
    expect(problemsOf({ ...complete, SHARD_COUNT: '12', GATEWAY_REPLICAS: '0', GATEWAY_ORDINAL: '0' })[0]).toMatch(/^GATEWAY_REPLICAS: expected/);
  });
});
