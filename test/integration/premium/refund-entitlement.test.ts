/** refundEntitlement: a refunded pack's credits go back through the ledger once, however often the refund is told. */
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDiscordEmulator, type DiscordEmulator } from '@music-bot/discord-emulator';
import { claimPack, getBalance } from '../../../src/credits/index.js';
import { entitlements } from '../../../src/db/schema.js';
import { recordPurchase } from '../../../src/premium/record-purchase.js';
import { refundEntitlement } from '../../../src/premium/refund-entitlement.js';
import { createTestDatabase } from '../../support/database.js';
import { movementsOf, PACK, SKUS, stepsFor } from './support.js';

const db = await createTestDatabase();

let emulator: DiscordEmulator;
beforeAll(async () => {
  emulator = await startDiscordEmulator({ rateLimits: false, skus: SKUS });
});
afterAll(async () => emulator?.close());

describe('refundEntitlement', () => {
  it('takes a claimed pack back once: told again, it reverses nothing more', async () => {
    const steps = stepsFor(db.db, emulator);
    const guild = emulator.createGuild({ name: 'Refunds' });
    const buyer = emulator.addMember(guild.id, { username: 'buyer' }).id;
    const pack = emulator.purchase({ userId: buyer, skuId: PACK, delivery: 'never' });
    await recordPurchase(steps, pack, { kind: 'pack', credits: 100, defaultGuildId: null, deletedAt: null });
    await claimPack(db.db, { entitlementId: pack.id, guildId: guild.id });
    expect(await getBalance(db.db, guild.id)).toBe(100);

    const outcomes = [await refundEntitlement(steps, pack.id), await refundEntitlement(steps, pack.id)];
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['reversed', 'already']);
    expect(await getBalance(db.db, guild.id)).toBe(0);
    expect((await movementsOf(db.db, pack.id)).map((entry) => [entry.kind, entry.amount])).toEqual([
      ['purchase', 100],
      ['reversal', -100],
    ]);
    const [row] = await db.db.select().from(entitlements).where(eq(entitlements.id, pack.id));
    expect(row).toMatchObject({ reversedCredits: 100, unrecoveredCredits: 0 });
    expect(row!.deletedAt).toBeInstanceOf(Date);
  });

  it('of a pack never claimed, marks it refunded and moves nothing', async () => {
    const steps = stepsFor(db.db, emulator);
    const guild = emulator.createGuild({ name: 'Waiting' });
    const buyer = emulator.addMember(guild.id, { username: 'buyer' }).id;
    const pack = emulator.purchase({ userId: buyer, skuId: PACK, delivery: 'never' });
    await recordPurchase(steps, pack, { kind: 'pack', credits: 100, defaultGuildId: guild.id, deletedAt: null });

    expect((await refundEntitlement(steps, pack.id)).status).toBe('reversed');
    expect(await movementsOf(db.db, pack.id)).toEqual([]);
    expect(await claimPack(db.db, { entitlementId: pack.id, guildId: guild.id })).toMatchObject({ status: 'refunded' });
  });
});
