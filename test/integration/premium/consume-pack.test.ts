/**
 * consumePack: a claimed pack is consumed at Discord and marked; an attempt Discord does not take
 * leaves the pack unmarked and is queued for retry (its worker: consume-retries.test.ts).
 */
import { eq } from 'drizzle-orm';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDiscordEmulator, type DiscordEmulator } from '@music-bot/discord-emulator';
import { claimPack } from '../../../src/credits/index.js';
import { entitlements } from '../../../src/db/schema.js';
import { consumePack } from '../../../src/premium/consume-pack.js';
import { recordPurchase } from '../../../src/premium/record-purchase.js';
import { createQueues, entryId, type Queues } from '../../../src/queue/queues.js';
import { createTestDatabase, testRedis } from '../../support/database.js';
import { PACK, SKUS, stepsFor, type TestSteps } from './support.js';

const db = await createTestDatabase();

let emulator: DiscordEmulator;
let queues: Queues;
let redis: Redis;
beforeAll(async () => {
  emulator = await startDiscordEmulator({ rateLimits: false, skus: SKUS });
  const { url, prefix } = testRedis();
  redis = new Redis(url, { maxRetriesPerRequest: null });
  queues = createQueues(redis, { prefix });
});
afterAll(async () => {
  await queues?.close();
  await redis?.quit();
  await emulator?.close();
});

/** A pack bought and put into a server, not yet consumed. */
async function claimedPack(steps: TestSteps): Promise<string> {
  const guild = emulator.createGuild({ name: 'Shop' });
  const buyer = emulator.addMember(guild.id, { username: 'buyer' }).id;
  const pack = emulator.purchase({ userId: buyer, skuId: PACK, delivery: 'never' });
  await recordPurchase(steps, pack, { kind: 'pack', credits: 100, defaultGuildId: null, deletedAt: null });
  await claimPack(db.db, { entitlementId: pack.id, guildId: guild.id });
  return pack.id;
}

async function consumedAt(entitlementId: string): Promise<Date | null | undefined> {
  return (await db.db.select({ at: entitlements.consumedAt }).from(entitlements).where(eq(entitlements.id, entitlementId)))[0]?.at;
}

describe('consumePack', () => {
  it('consumes the pack at Discord and marks it, with the time of the step', async () => {
    const at = new Date('2031-05-01T12:00:00Z');
    const steps = stepsFor(db.db, emulator, { consumeRetries: queues, now: () => at });
    const id = await claimedPack(steps);
    expect(await consumePack(steps, id)).toBe(true);
    expect(emulator.entitlement(id)?.consumed).toBe(true);
    expect(await consumedAt(id)).toEqual(at);
    expect(await queues.consume.getJob(entryId.consume(id))).toBeUndefined();
  });

  it('marks a pack Discord consumed already (a consume sent before a crash), without a retry', async () => {
    const steps = stepsFor(db.db, emulator, { consumeRetries: queues });
    const id = await claimedPack(steps);
    await steps.api.consume(id);
    const failing = { ...steps, api: { ...steps.api, consume: () => Promise.reject(new Error('Discord answered 500')) } };
    expect(await consumePack(failing, id)).toBe(true);
    expect(await consumedAt(id)).toBeInstanceOf(Date);
    expect(await queues.consume.getJob(entryId.consume(id))).toBeUndefined();
  });

  it('leaves a pack Discord did not take unmarked, and queues its retry; without retry, queues nothing', async () => {
    const away = stepsFor(db.db, emulator, { consumeRetries: queues });
    const refusing = { ...away, api: { ...away.api, consume: () => Promise.reject(new Error('Discord is away')) } };
    const [retried, swept] = [await claimedPack(away), await claimedPack(away)];

    expect(await consumePack(refusing, retried)).toBe(false);
    expect(await consumedAt(retried)).toBeNull();
    expect(emulator.entitlement(retried)?.consumed).toBe(false);
    expect((await queues.consume.getJob(entryId.consume(retried)))?.data).toEqual({ entitlementId: retried });

    expect(await consumePack(refusing, swept, { retry: false })).toBe(false);
    expect(await consumedAt(swept)).toBeNull();
    expect(await queues.consume.getJob(entryId.consume(swept))).toBeUndefined();
  });
});
