import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { startDiscordEmulator } from '@music-bot/discord-emulator';
import { recordOffer, startSubscription } from '../../../src/credits/index.js';
import { entitlements, guilds } from '../../../src/db/schema.js';
import { silentLogger } from '../../../src/logger.js';
import { createCatalog } from '../../../src/premium/catalog.js';
import { createPurchases } from '../../../src/premium/purchases.js';
import { receiveEntitlement } from '../../../src/premium/receive-entitlement.js';
import { sweepEntitlements } from '../../../src/premium/sweep-entitlements.js';
import type { EntitlementsApi } from '../../../src/discord-rest/entitlements-api.js';
import { createTestDatabase } from '../../support/database.js';
import { guildWith } from '../credits/support.js';
import { movementsOf, PACK, SKUS, stepsFor } from './support.js';

const db = await createTestDatabase();
const PLAN = '1500000000000000001';

/** The sweep of guild allowances never calls Discord: any call fails the test. */
const noDiscord: EntitlementsApi = {
  get: () => Promise.reject(new Error('the sweep called Discord')),
  list: () => Promise.reject(new Error('the sweep called Discord')),
  consume: () => Promise.reject(new Error('the sweep called Discord')),
};

async function allowanceOf(guildId: string): Promise<number | undefined> {
  return (await db.db.select({ allowance: guilds.subscriptionAllowance }).from(guilds).where(eq(guilds.id, guildId)))[0]?.allowance;
}

describe('the minute sweep', () => {
  it("stops a subscription's allowance once its end has passed, and not before", async () => {
    const start = new Date('2031-03-01T00:00:00Z');
    const end = new Date('2031-03-20T00:00:00Z');
    const [ending, lasting] = [await guildWith(db.db, 0), await guildWith(db.db, 0)];
    for (const [id, guildId, endsAt] of [['1500000000000000010', ending, end], ['1500000000000000011', lasting, null]] as const) {
      await db.db.insert(entitlements).values({ id, skuId: PLAN, kind: 'subscription', type: 8, userId: 'subscriber', guildId, credits: 300, startsAt: start, endsAt });
      await startSubscription(db.db, { entitlementId: id, now: start });
    }
    let now = new Date('2031-03-10T00:00:00Z');
    const premium = createPurchases({
      db: db.db,
      api: noDiscord,
      catalog: createCatalog({ creditPacks: [], subscriptionAllowances: [{ skuId: PLAN, credits: 300 }] }),
      logger: silentLogger,
      applicationId: '1500000000000000000',
      startingCredits: 0,
      packClaimMinutes: 10,
      now: () => now,
    });
    await premium.sweep();
    expect([await allowanceOf(ending), await allowanceOf(lasting)]).toEqual([300, 300]);
    now = new Date('2031-03-21T00:00:00Z');
    await premium.sweep();
    expect([await allowanceOf(ending), await allowanceOf(lasting)]).toEqual([0, 300]);
    await premium.stop();
  });
});

describe('sweepEntitlements', () => {
  it('gives a pack whose claim window passed to its default server, and leaves one still in its window', async () => {
    const emulator = await startDiscordEmulator({ rateLimits: false, skus: SKUS });
    try {
      const seen = new Date();
      let now = seen;
      const steps = stepsFor(db.db, emulator, { packClaimMinutes: 10, now: () => now });
      const guild = emulator.createGuild({ name: 'Default' });
      const buyer = emulator.addMember(guild.id, { username: 'buyer' }).id;
      await recordOffer(db.db, { userId: buyer, guildId: guild.id, at: seen });
      const pack = emulator.purchase({ userId: buyer, skuId: PACK, delivery: 'never' });
      expect(await receiveEntitlement(steps, pack, 'gateway')).toBe('recorded');

      now = new Date(seen.getTime() + 9 * 60_000);
      expect(await sweepEntitlements(steps)).toEqual({ claimed: 0, consumed: 0 });
      expect(await movementsOf(db.db, pack.id)).toEqual([]);

      now = new Date(seen.getTime() + 11 * 60_000);
      expect((await sweepEntitlements(steps)).claimed).toBe(1);
      await steps.settled();
      expect(await movementsOf(db.db, pack.id)).toEqual([{ guildId: guild.id, key: `entitlement:${pack.id}`, kind: 'purchase', amount: 100 }]);
      expect(emulator.entitlement(pack.id)?.consumed).toBe(true);
      expect(await sweepEntitlements(steps)).toEqual({ claimed: 0, consumed: 0 });
    } finally {
      await emulator.close();
    }
  });
});
