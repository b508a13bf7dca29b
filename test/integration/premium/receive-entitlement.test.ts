/**
 * receiveEntitlement, the one step every path that brings an entitlement ends in: only what
 * Discord's REST confirms, of the application and the SKUs sold, is recorded and moves credits;
 * a subscription tops its server up once, and a refund Discord tells of is reversed once.
 */
import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDiscordEmulator, type DiscordEmulator } from '@music-bot/discord-emulator';
import { getBalance, recordOffer, reserveForJob } from '../../../src/credits/index.js';
import { creditLedger, entitlements } from '../../../src/db/schema.js';
import { receiveEntitlement } from '../../../src/premium/receive-entitlement.js';
import { createTestDatabase } from '../../support/database.js';
import { movementsOf, OTHER_PLAN, PACK, PLAN, SKUS, STRAY, stepsFor } from './support.js';

const db = await createTestDatabase();

let emulator: DiscordEmulator;
beforeAll(async () => {
  emulator = await startDiscordEmulator({ rateLimits: false, skus: SKUS });
});
afterAll(async () => emulator?.close());

/** A new server with a buyer who was shown the Buy buttons there: a pack they buy goes there. */
async function shop() {
  const guild = emulator.createGuild({ name: 'Shop' });
  const buyer = emulator.addMember(guild.id, { username: 'buyer' }).id;
  await recordOffer(db.db, { userId: buyer, guildId: guild.id, at: new Date() });
  return { guildId: guild.id, buyer };
}

async function rowOf(entitlementId: string) {
  return (await db.db.select().from(entitlements).where(eq(entitlements.id, entitlementId)))[0];
}

async function ledgerOf(guildId: string) {
  return db.db.select().from(creditLedger).where(eq(creditLedger.guildId, guildId));
}

describe('receiveEntitlement', () => {
  it("puts a confirmed pack into the server its buyer was offered it in, once, and consumes it", async () => {
    const steps = stepsFor(db.db, emulator);
    const { guildId, buyer } = await shop();
    const pack = emulator.purchase({ userId: buyer, skuId: PACK, delivery: 'never' });
    expect(await receiveEntitlement(steps, pack, 'gateway')).toBe('recorded');
    expect(await receiveEntitlement(steps, pack, 'webhook')).toBe('recorded');
    await steps.settled();
    expect(await getBalance(db.db, guildId)).toBe(100);
    expect(await movementsOf(db.db, pack.id)).toEqual([{ guildId, key: `entitlement:${pack.id}`, kind: 'purchase', amount: 100 }]);
    expect(emulator.entitlement(pack.id)?.consumed).toBe(true);
    expect((await rowOf(pack.id))?.consumedAt).toBeInstanceOf(Date);
  });

  it('records nothing and moves no credits for an unknown SKU, another application, or an entitlement Discord does not confirm', async () => {
    const steps = stepsFor(db.db, emulator);
    const { guildId, buyer } = await shop();
    const stray = emulator.purchase({ userId: buyer, skuId: STRAY, delivery: 'never' });
    const foreign = { id: '2100000000000009001', sku_id: PACK, application_id: '2100000000000009999', user_id: buyer, type: 1, deleted: false, consumed: false };
    const forged = { ...foreign, id: '2100000000000009002', application_id: emulator.applicationId };

    expect(await receiveEntitlement(steps, stray, 'gateway')).toBe('unknown_sku');
    expect(await receiveEntitlement(steps, foreign, 'webhook')).toBe('foreign_application');
    expect(await receiveEntitlement(steps, forged, 'interaction')).toBe('unconfirmed');
    // The listing's record is taken as Discord's own, and is still checked.
    expect(await receiveEntitlement(steps, { ...foreign, id: '2100000000000009003' }, 'listing')).toBe('foreign_application');
    await steps.settled();

    for (const entitlement of [stray, foreign, forged]) {
      expect(await rowOf(entitlement.id)).toBeUndefined();
      expect(await movementsOf(db.db, entitlement.id)).toEqual([]);
    }
    expect(await ledgerOf(guildId)).toEqual([]);
    expect(emulator.entitlement(stray.id)?.consumed).toBe(false);
  });

  it("gives a subscription's allowance to its server once: received again, or a second subscription of the server, tops up nothing", async () => {
    const steps = stepsFor(db.db, emulator);
    const guild = emulator.createGuild({ name: 'Subscribed' });
    const [first, second] = ['first', 'second'].map((username) => emulator.addMember(guild.id, { username }).id);
    const plan = emulator.subscribe({ userId: first!, guildId: guild.id, skuId: PLAN, delivery: 'never' });
    expect(await receiveEntitlement(steps, plan, 'gateway')).toBe('recorded');
    expect(await getBalance(db.db, guild.id)).toBe(300);
    // The server spends some: what the month gave is not given again.
    await reserveForJob(db.db, { guildId: guild.id, jobId: randomUUID(), userId: first!, amount: 120 });

    expect(await receiveEntitlement(steps, plan, 'webhook')).toBe('recorded');
    const again = emulator.subscribe({ userId: second!, guildId: guild.id, skuId: OTHER_PLAN, delivery: 'never' });
    expect(await receiveEntitlement(steps, again, 'gateway')).toBe('recorded');
    await steps.settled();

    expect(await getBalance(db.db, guild.id)).toBe(180);
    expect((await ledgerOf(guild.id)).filter((entry) => entry.amount > 0).map((entry) => [entry.kind, entry.amount])).toEqual([['subscription', 300]]);
    expect((await rowOf(again.id))?.guildId).toBe(guild.id);
  });

  it('takes back a recorded pack Discord says is refunded, once; one first seen refunded is recorded and moves nothing', async () => {
    const steps = stepsFor(db.db, emulator);
    const { guildId, buyer } = await shop();
    const pack = emulator.purchase({ userId: buyer, skuId: PACK, delivery: 'never' });
    await receiveEntitlement(steps, pack, 'gateway');
    await steps.settled();
    expect(await getBalance(db.db, guildId)).toBe(100);

    emulator.refund(pack.id, { delivery: 'never' });
    expect(await receiveEntitlement(steps, pack, 'gateway')).toBe('refunded');
    expect(await receiveEntitlement(steps, pack, 'webhook')).toBe('refunded');
    expect(await getBalance(db.db, guildId)).toBe(0);
    expect((await movementsOf(db.db, pack.id)).map((entry) => [entry.kind, entry.amount])).toEqual([
      ['purchase', 100],
      ['reversal', -100],
    ]);

    const late = await shop();
    const refunded = emulator.purchase({ userId: late.buyer, skuId: PACK, delivery: 'never' });
    emulator.refund(refunded.id, { delivery: 'never' });
    expect(await receiveEntitlement(steps, refunded, 'gateway')).toBe('refunded');
    expect((await rowOf(refunded.id))?.deletedAt).toBeInstanceOf(Date);
    expect(await movementsOf(db.db, refunded.id)).toEqual([]);
    expect(await ledgerOf(late.guildId)).toEqual([]);
  });
});
