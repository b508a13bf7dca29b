/**
 * A pack's consume that Discord does not take is tried again from the queue, so a process that
 * stops with it unfinished leaves it to the next worker; a consume already taken is not sent again.
 */
import { eq } from 'drizzle-orm';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDiscordEmulator, type DiscordEmulator } from '@music-bot/discord-emulator';
import { getBalance } from '../../../src/credits/index.js';
import { entitlements } from '../../../src/db/schema.js';
import { createEntitlementsApi, type EntitlementsApi } from '../../../src/discord-rest/entitlements-api.js';
import { silentLogger } from '../../../src/logger.js';
import { createCatalog } from '../../../src/premium/catalog.js';
import { startConsumeRetries } from '../../../src/premium/consume-retries.js';
import { createPurchases, type PurchasesDeps } from '../../../src/premium/purchases.js';
import { createQueues, type Queues } from '../../../src/queue/queues.js';
import { createTestDatabase, testRedis } from '../../support/database.js';

const db = await createTestDatabase();
const PACK = '1900000000000000001';
const cleanups: Array<() => Promise<unknown>> = [];

let emulator: DiscordEmulator;
let queues: Queues;
let redisUrl: string;
let redis: Redis;
let prefix: string;
beforeAll(async () => {
  emulator = await startDiscordEmulator({ rateLimits: false, skus: [{ id: PACK, name: '100 credits', type: 'consumable' }] });
  ({ url: redisUrl, prefix } = testRedis());
  redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
  queues = createQueues(redis, { prefix });
});
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await queues?.close();
  await redis?.quit();
  await emulator?.close();
});

function premiumWith(api: EntitlementsApi, extra: Partial<PurchasesDeps> = {}) {
  return createPurchases({
    db: db.db,
    api,
    catalog: createCatalog({ creditPacks: [{ skuId: PACK, credits: 100 }], subscriptionAllowances: [] }),
    logger: silentLogger,
    applicationId: emulator.applicationId,
    startingCredits: 0,
    packClaimMinutes: 0,
    consumeRetries: queues,
    ...extra,
  });
}

describe('consume retries', () => {
  it("survive the process: a consume Discord refused goes through at the next worker's retry, once", async () => {
    const api = createEntitlementsApi({ apiUrl: emulator.apiUrl, token: emulator.botToken, applicationId: emulator.applicationId });
    const guild = emulator.createGuild({ name: 'Shop' });
    const buyer = emulator.addMember(guild.id, { username: 'buyer' }).id;
    const pack = emulator.purchase({ userId: buyer, skuId: PACK, delivery: 'never' });

    // The first process: Discord does not take its consume, and it stops.
    const first = premiumWith({ ...api, consume: () => Promise.reject(new Error('Discord is away')) });
    await first.recordOffer(buyer, guild.id);
    expect(await first.receive(pack, 'gateway')).toBe('recorded');
    expect(await getBalance(db.db, guild.id)).toBe(100);
    await first.stop();
    expect(emulator.entitlement(pack.id)?.consumed).toBe(false);

    // The next process's worker takes the retry from Redis.
    const next = premiumWith(api);
    const worker = startConsumeRetries(next, new Redis(redisUrl, { maxRetriesPerRequest: null }), { prefix, logger: silentLogger });
    cleanups.push(() => worker.close(), () => next.stop());
    await expect.poll(() => emulator.entitlement(pack.id)?.consumed, { timeout: 10_000 }).toBe(true);
    await expect.poll(async () => (await db.db.select().from(entitlements).where(eq(entitlements.id, pack.id)))[0]?.consumedAt, { timeout: 5_000 }).toBeInstanceOf(Date);

    // A retry of a pack consumed already sends nothing.
    await next.consumeAgain(pack.id);
    const consumes = emulator.entitlementRecords.filter((record) => record.action === 'consume' && record.entitlementId === pack.id);
    expect(consumes.map((record) => record.repeated)).toEqual([false]);
    expect(await getBalance(db.db, guild.id)).toBe(100);
  });
});
