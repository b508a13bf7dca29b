/**
 * The guild lease in Redis: one process plays a guild, the lease is renewed while it plays,
 * and the holder hears when another process has taken it.
 */
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { RedisGuildLease } from '../../../src/voice/guild-lease.js';
import { testRedis } from '../../support/database.js';

const { url, prefix } = testRedis();
const redis = new Redis(url, { maxRetriesPerRequest: null });
const leases: RedisGuildLease[] = [];
afterAll(async () => {
  for (const lease of leases) await lease.close();
  await redis.quit();
});

/** A lease as one process holds it. */
function processLease(durationMs: number): RedisGuildLease {
  const lease = new RedisGuildLease({ redis, prefix, durationMs });
  leases.push(lease);
  return lease;
}

const key = (guildId: string) => `${prefix}:voice:owner:${guildId}`;

describe('the guild lease', () => {
  it('gives a guild to one process until that process releases it, and never releases another process’s lease', async () => {
    const first = processLease(15_000);
    const second = processLease(15_000);
    expect(await first.claim('g1')).toBe(true);
    expect(await first.claim('g1')).toBe(true);
    expect(await second.claim('g1')).toBe(false);

    await second.release('g1');
    expect(await second.claim('g1')).toBe(false);

    await first.release('g1');
    expect(await second.claim('g1')).toBe(true);
    expect(await first.claim('g1')).toBe(false);
  });

  it('lets a claim that nobody holds lapse, so another process takes over from one that died', async () => {
    const died = processLease(300);
    const next = processLease(15_000);
    expect(await died.claim('g2')).toBe(true);
    expect(await next.claim('g2')).toBe(false);
    await expect.poll(() => next.claim('g2'), { timeout: 3_000, interval: 100 }).toBe(true);
  });

  it('renews a held lease past its duration, and takes it again when it expired unclaimed', async () => {
    const holder = processLease(1_500);
    const other = processLease(15_000);
    const lapsed = vi.fn();
    expect(await holder.claim('g3')).toBe(true);
    holder.hold('g3', lapsed);
    // Its time runs down, and a renewal sets it back to the whole duration.
    await expect.poll(() => redis.pttl(key('g3')), { timeout: 3_000, interval: 50 }).toBeLessThan(1_000);
    await expect.poll(() => redis.pttl(key('g3')), { timeout: 3_000, interval: 50 }).toBeGreaterThan(1_000);

    // The key gone (a Redis that restarted empty): the next renewal takes it back.
    await redis.del(key('g3'));
    await expect.poll(() => redis.get(key('g3')), { timeout: 3_000, interval: 50 }).not.toBeNull();
    expect(await other.claim('g3')).toBe(false);
    expect(lapsed).not.toHaveBeenCalled();
  });

  it('reports a lapse when another process has taken the guild, and stops renewing it', async () => {
    const holder = processLease(1_500);
    const other = processLease(15_000);
    const lapsed = vi.fn();
    expect(await holder.claim('g4')).toBe(true);
    holder.hold('g4', lapsed);

    // The holder's lease expired while it stalled, and the other process claimed the guild.
    await redis.del(key('g4'));
    expect(await other.claim('g4')).toBe(true);

    await vi.waitFor(() => expect(lapsed).toHaveBeenCalledTimes(1), { timeout: 3_000 });
    expect(await other.claim('g4')).toBe(true);
    expect(await holder.claim('g4')).toBe(false);
    // Closing lets go of what it still holds, not the guild it lost.
    await holder.close();
    expect(await other.claim('g4')).toBe(true);
  });

  it('lets every held guild go on close', async () => {
    const holder = processLease(15_000);
    const other = processLease(15_000);
    expect(await holder.claim('g5')).toBe(true);
    expect(await holder.claim('g6')).toBe(true);
    holder.hold('g5', () => {});
    holder.hold('g6', () => {});
    await holder.close();
    expect(await other.claim('g5')).toBe(true);
    expect(await other.claim('g6')).toBe(true);
  });
});
