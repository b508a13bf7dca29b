/**
 * claimPackFor and claimOwnPack: a pack goes into one server, once, and is then consumed in the
 * background; only its buyer can pick the server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDiscordEmulator, type DiscordEmulator } from '@music-bot/discord-emulator';
import { getBalance } from '../../../src/credits/index.js';
import { claimOwnPack, claimPackFor } from '../../../src/premium/claim-pack.js';
import { recordPurchase } from '../../../src/premium/record-purchase.js';
import { createTestDatabase } from '../../support/database.js';
import { movementsOf, PACK, PLAN, SKUS, stepsFor } from './support.js';

const db = await createTestDatabase();

let emulator: DiscordEmulator;
beforeAll(async () => {
  emulator = await startDiscordEmulator({ rateLimits: false, skus: SKUS });
});
afterAll(async () => emulator?.close());

describe('claimPackFor', () => {
  it('puts the pack into the first server claimed for, once, and consumes it in the background', async () => {
    const steps = stepsFor(db.db, emulator, { startingCredits: 5 });
    const [first, second] = [emulator.createGuild({ name: 'First' }), emulator.createGuild({ name: 'Second' })];
    const buyer = emulator.addMember(first.id, { username: 'buyer' }).id;
    const pack = emulator.purchase({ userId: buyer, skuId: PACK, delivery: 'never' });
    await recordPurchase(steps, pack, { kind: 'pack', credits: 100, defaultGuildId: null, deletedAt: null });

    expect(await claimPackFor(steps, { entitlementId: pack.id, guildId: first.id })).toMatchObject({ status: 'claimed', guildId: first.id, credits: 100, balance: 105 });
    await steps.settled();
    // Claimed and consumed already: nothing moves, and the consume is not sent again.
    expect(await claimPackFor(steps, { entitlementId: pack.id, guildId: second.id })).toMatchObject({ status: 'already', guildId: first.id });
    await steps.settled();
    expect(await getBalance(db.db, first.id)).toBe(105);
    expect(await movementsOf(db.db, pack.id)).toEqual([{ guildId: first.id, key: `entitlement:${pack.id}`, kind: 'purchase', amount: 100 }]);
    expect(emulator.entitlement(pack.id)?.consumed).toBe(true);
    const consumes = emulator.entitlementRecords.filter((record) => record.action === 'consume' && record.entitlementId === pack.id);
    expect(consumes.map((record) => record.repeated)).toEqual([false]);
  });
});

describe('claimOwnPack', () => {
  it("takes the buyer's choice, and refuses another member's and what is not a pack", async () => {
    const steps = stepsFor(db.db, emulator);
    const guild = emulator.createGuild({ name: 'Picked' });
    const [buyer, other] = ['buyer', 'other'].map((username) => emulator.addMember(guild.id, { username }).id);
    const pack = emulator.purchase({ userId: buyer!, skuId: PACK, delivery: 'never' });
    await recordPurchase(steps, pack, { kind: 'pack', credits: 100, defaultGuildId: null, deletedAt: null });
    const plan = emulator.subscribe({ userId: buyer!, guildId: guild.id, skuId: PLAN, delivery: 'never' });
    await recordPurchase(steps, plan, { kind: 'subscription', credits: 300, defaultGuildId: null, deletedAt: null });

    expect(await claimOwnPack(steps, { entitlementId: pack.id, userId: other!, guildId: guild.id })).toEqual({ status: 'not_yours' });
    expect(await claimOwnPack(steps, { entitlementId: plan.id, userId: buyer!, guildId: guild.id })).toEqual({ status: 'unknown' });
    expect(await movementsOf(db.db, pack.id)).toEqual([]);

    expect(await claimOwnPack(steps, { entitlementId: pack.id, userId: buyer!, guildId: guild.id })).toMatchObject({ status: 'claimed', guildId: guild.id });
    await steps.settled();
    expect(await movementsOf(db.db, pack.id)).toMatchObject([{ guildId: guild.id, amount: 100 }]);
    expect(emulator.entitlement(pack.id)?.consumed).toBe(true);
  });
});
