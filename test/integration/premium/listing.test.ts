/**
 * The entitlement listing, the backstop for events that never came, against the emulator set to
 * each order Discord's List Entitlements may answer in (it documents none): every entitlement of
 * the SKUs sold is taken, over several pages, whichever order the pages come in.
 */
import { inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDiscordEmulator, type DiscordEmulator, type EntitlementOrder } from '@music-bot/discord-emulator';
import { entitlements } from '../../../src/db/schema.js';
import { createEntitlementsApi } from '../../../src/discord-rest/entitlements-api.js';
import { silentLogger } from '../../../src/logger.js';
import { createCatalog } from '../../../src/premium/catalog.js';
import { createPurchases } from '../../../src/premium/purchases.js';
import { createTestDatabase } from '../../support/database.js';

const db = await createTestDatabase();
const PACK = '1700000000000000001';
const OTHER = '1700000000000000002';
/** Bought per order: more than two pages of 100. */
const BOUGHT = 230;

let emulator: DiscordEmulator;
beforeAll(async () => {
  emulator = await startDiscordEmulator({
    rateLimits: false,
    skus: [
      { id: PACK, name: '100 credits', type: 'consumable' },
      { id: OTHER, name: 'Not sold by the bot', type: 'consumable' },
    ],
  });
});
afterAll(async () => emulator?.close());

/** `count` packs bought by members of a new server, a few refunded, and some of a SKU the bot does not sell between them. */
function buy(count: number): string[] {
  const guild = emulator.createGuild({ name: 'Shop' });
  const ids: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const userId = emulator.addMember(guild.id, { username: `buyer${i}` }).id;
    ids.push(emulator.purchase({ userId, skuId: PACK, delivery: 'never' }).id);
    if (i % 10 === 0) emulator.purchase({ userId, skuId: OTHER, delivery: 'never' });
    if (i % 25 === 0) emulator.refund(ids.at(-1)!, { delivery: 'never' });
  }
  return ids;
}

describe('the entitlement listing', () => {
  it.each<EntitlementOrder>(['newest-first', 'oldest-first', 'from-cursor'])('takes every entitlement when Discord lists %s', async (order) => {
    emulator.setEntitlementOrder(order);
    const bought = buy(BOUGHT);
    const premium = createPurchases({
      db: db.db,
      api: createEntitlementsApi({ apiUrl: emulator.apiUrl, token: emulator.botToken, applicationId: emulator.applicationId }),
      catalog: createCatalog({ creditPacks: [{ skuId: PACK, credits: 100 }], subscriptionAllowances: [] }),
      logger: silentLogger,
      applicationId: emulator.applicationId,
      startingCredits: 0,
      // The packs wait for their buyers: the listing only records them here.
      packClaimMinutes: 60,
    });
    try {
      const { listed } = await premium.reconcile();
      const recorded = await db.db.select({ id: entitlements.id, deletedAt: entitlements.deletedAt }).from(entitlements).where(inArray(entitlements.id, bought));
      expect(recorded.map((row) => row.id).sort()).toEqual([...bought].sort());
      expect(recorded.filter((row) => row.deletedAt !== null)).toHaveLength(Math.ceil(BOUGHT / 25));
      expect(listed).toBeGreaterThanOrEqual(BOUGHT);
      expect(emulator.findings).toEqual([]);
    } finally {
      await premium.stop();
    }
  });
});
