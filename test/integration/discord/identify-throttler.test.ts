/**
 * The identify queue that every gateway process shares, on a real Redis: one IDENTIFY per
 * bucket per window across throttlers on connections of their own (processes, as far as Redis
 * can tell), buckets apart at max_concurrency above 1, a slot that a dead process held freed by
 * its expiry, and a shard that closes while it waits leaving the queue.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { identifySlotKey, RedisIdentifyThrottler } from '../../../src/discord/identify-throttler.js';
import { testRedis } from '../../support/database.js';

/** Shorter than Discord's 5 s, so the test runs in seconds; the pacing is the same. */
const WINDOW_MS = 600;
const MARGIN_MS = 50;

const { url, prefix } = testRedis();
const connections: Redis[] = [];
let probe: Redis;

beforeAll(() => {
  probe = new Redis(url);
});
afterAll(async () => {
  const keys = await probe.keys(`${prefix}*`);
  if (keys.length > 0) await probe.del(...keys);
  await Promise.all([probe, ...connections].map((connection) => connection.quit()));
});

/** A throttler on a Redis connection of its own, as each gateway process has. */
function throttler(maxConcurrency: number, keyPrefix: string): RedisIdentifyThrottler {
  const redis = new Redis(url);
  connections.push(redis);
  return new RedisIdentifyThrottler({ redis, prefix: keyPrefix, maxConcurrency, windowMs: WINDOW_MS, marginMs: MARGIN_MS });
}

/** When each shard was let through, in ms since `start`. */
async function identifyAll(plan: ReadonlyArray<[RedisIdentifyThrottler, number]>): Promise<Map<number, number>> {
  const start = performance.now();
  const at = new Map<number, number>();
  await Promise.all(
    plan.map(async ([throttle, shardId]) => {
      await throttle.waitForIdentify(shardId, new AbortController().signal);
      at.set(shardId, performance.now() - start);
    }),
  );
  return at;
}

function gaps(times: readonly number[]): number[] {
  const sorted = [...times].sort((a, b) => a - b);
  return sorted.slice(1).map((time, i) => time - sorted[i]!);
}

describe('RedisIdentifyThrottler', () => {
  it('lets one shard identify per window across processes at max_concurrency 1', async () => {
    const keys = `${prefix}-one`;
    const [a, b] = [throttler(1, keys), throttler(1, keys)];
    // Two processes with three shards each, asking at the same moment.
    const at = await identifyAll([0, 1, 2, 3, 4, 5].map((shardId) => [shardId < 3 ? a : b, shardId]));
    expect(at.size).toBe(6);
    for (const gap of gaps([...at.values()])) expect(gap).toBeGreaterThanOrEqual(WINDOW_MS);
    // Paced, not slower than the pacing needs: five windows (with their margin) and some polling.
    expect(Math.max(...at.values())).toBeLessThan(5 * (WINDOW_MS + MARGIN_MS) + 600);
    // Within a process, in order.
    expect(at.get(0)!).toBeLessThan(at.get(1)!);
    expect(at.get(4)!).toBeLessThan(at.get(5)!);
  });

  it('keeps the buckets of max_concurrency apart: one identify per bucket per window', async () => {
    const keys = `${prefix}-two`;
    const [a, b] = [throttler(2, keys), throttler(2, keys)];
    const at = await identifyAll([0, 1, 2, 3].map((shardId) => [shardId % 2 === 0 ? a : b, shardId]));
    // Buckets 0 (shards 0, 2) and 1 (shards 1, 3): each paced, side by side.
    expect(gaps([at.get(0)!, at.get(2)!])[0]).toBeGreaterThanOrEqual(WINDOW_MS);
    expect(gaps([at.get(1)!, at.get(3)!])[0]).toBeGreaterThanOrEqual(WINDOW_MS);
    expect(Math.max(at.get(2)!, at.get(3)!)).toBeLessThan(2 * WINDOW_MS + 400);
  });

  it("keeps its keys under the prefix, so a hash-tag prefix holds them in one cluster slot", async () => {
    const keys = `{${prefix}-tag}`;
    await throttler(1, keys).waitForIdentify(7, new AbortController().signal);
    expect(await probe.keys(`${keys}:*`)).toEqual([identifySlotKey(keys, 0)]);
    expect(identifySlotKey(keys, 0).startsWith(`${keys}:`)).toBe(true);
    const ttl = await probe.pttl(identifySlotKey(keys, 0));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(WINDOW_MS + MARGIN_MS);
  });

  it('waits out a slot held by a process that died, and no longer', async () => {
    const keys = `${prefix}-dead`;
    // A process took the slot and was killed before anything released it.
    await probe.set(identifySlotKey(keys, 0), 'dead:0', 'PX', WINDOW_MS, 'NX');
    const start = performance.now();
    await throttler(1, keys).waitForIdentify(3, new AbortController().signal);
    const waited = performance.now() - start;
    expect(waited).toBeGreaterThanOrEqual(WINDOW_MS - 50);
    expect(waited).toBeLessThan(WINDOW_MS + 400);
  });

  it('lets a shard that closed while waiting leave the queue, and the others go on', async () => {
    const keys = `${prefix}-abort`;
    const throttle = throttler(1, keys);
    await throttle.waitForIdentify(0, new AbortController().signal);
    const closed = new AbortController();
    const leaving = throttle.waitForIdentify(1, closed.signal);
    const next = throttle.waitForIdentify(2, new AbortController().signal);
    closed.abort();
    await expect(leaving).rejects.toThrow();
    const start = performance.now();
    await next;
    // Shard 2 took the window after shard 0's, not one more for the shard that left.
    expect(performance.now() - start).toBeLessThan(WINDOW_MS + MARGIN_MS + 300);
  });
});
