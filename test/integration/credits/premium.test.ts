import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import {
  applyMonthlyAllowance,
  claimPack,
  reserveForJob,
  reverseEntitlement,
  setMonthlyAllowance,
  startSubscription,
} from '../../../src/credits/index.js';
import { entitlements, guilds } from '../../../src/db/schema.js';
import { createTestDatabase } from '../../support/database.js';
import { randomForTest } from '../../support/seeded-random.js';
import { balanceOf, expectConsistent, guildWith, ledgerOf, newGuildId } from './support.js';

const db = await createTestDatabase();

const december = new Date('2031-12-10T12:00:00Z');
const january = new Date('2032-01-02T00:00:00Z');
const february = new Date('2032-02-01T00:00:00Z');

let next = 1_000_000_000_000_000_000n;
function entitlementId(): string {
  next += 1n;
  return String(next);
}

async function pack(credits = 100, userId = 'buyer'): Promise<string> {
  const id = entitlementId();
  await db.db.insert(entitlements).values({ id, skuId: '900000000000000001', kind: 'pack', type: 1, userId, credits });
  return id;
}

async function subscription(guildId: string, credits: number, window: { startsAt?: Date; endsAt?: Date } = {}): Promise<string> {
  const id = entitlementId();
  await db.db
    .insert(entitlements)
    .values({ id, skuId: '900000000000000002', kind: 'subscription', type: 8, userId: 'subscriber', guildId, credits, startsAt: window.startsAt ?? null, endsAt: window.endsAt ?? null });
  return id;
}

describe('credit packs', () => {
  it('go into the first server claimed for, once, under the entitlement id', async () => {
    const [first, second] = [await guildWith(db.db, 5), await guildWith(db.db, 0)];
    const id = await pack(100);
    const outcomes = await Promise.all([
      claimPack(db.db, { entitlementId: id, guildId: first }),
      claimPack(db.db, { entitlementId: id, guildId: second }),
      claimPack(db.db, { entitlementId: id, guildId: first }),
    ]);
    expect(outcomes.filter((outcome) => outcome.status === 'claimed')).toHaveLength(1);
    const winner = outcomes.find((outcome) => outcome.status === 'claimed')!.guildId;
    expect(outcomes.every((outcome) => 'guildId' in outcome && outcome.guildId === winner)).toBe(true);
    expect((await balanceOf(db.db, first)) + (await balanceOf(db.db, second))).toBe(105);
    const [entry] = (await ledgerOf(db.db, winner)).filter((row) => row.kind === 'purchase');
    expect(entry).toMatchObject({ key: `entitlement:${id}`, amount: 100, userId: 'buyer' });
    await expectConsistent(db.db, first);
    await expectConsistent(db.db, second);
  });

  it('create the account of a server that never used the bot, with its starting credits', async () => {
    const guildId = newGuildId();
    const id = await pack(50);
    expect(await claimPack(db.db, { entitlementId: id, guildId, startingCredits: 10 })).toMatchObject({ status: 'claimed', balance: 60 });
    await expectConsistent(db.db, guildId);
  });

  it('refunded after the claim take the credits back as far as the balance allows, and record the rest', async () => {
    const guildId = await guildWith(db.db, 0);
    const id = await pack(100);
    await claimPack(db.db, { entitlementId: id, guildId });
    await reserveForJob(db.db, { guildId, jobId: randomUUID(), userId: 'member', amount: 70 });
    const outcome = await reverseEntitlement(db.db, { entitlementId: id });
    expect(outcome).toMatchObject({ status: 'reversed', taken: 30, unrecovered: 70, guildId });
    expect(await balanceOf(db.db, guildId)).toBe(0);
    expect(await reverseEntitlement(db.db, { entitlementId: id })).toMatchObject({ status: 'already', taken: 30, unrecovered: 70 });
    const [row] = await db.db.select().from(entitlements).where(eq(entitlements.id, id));
    expect(row).toMatchObject({ reversedCredits: 30, unrecoveredCredits: 70 });
    expect(row!.deletedAt).toBeInstanceOf(Date);
    expect(await claimPack(db.db, { entitlementId: id, guildId })).toEqual({ status: 'refunded' });
    await expectConsistent(db.db, guildId);
  });

  it('refunded before any claim move nothing, and cannot be claimed after', async () => {
    const guildId = await guildWith(db.db, 0);
    const id = await pack(100);
    expect(await reverseEntitlement(db.db, { entitlementId: id })).toMatchObject({ status: 'reversed', taken: 0, unrecovered: 0 });
    expect(await claimPack(db.db, { entitlementId: id, guildId })).toEqual({ status: 'refunded' });
    expect(await balanceOf(db.db, guildId)).toBe(0);
  });

  it('claim racing a refund: credits in and back out, or never in', async () => {
    const random = randomForTest();
    // Rounds in which the refund went out while the claim was still in flight: the race itself.
    let overlapped = 0;
    for (let round = 0; round < 5; round += 1) {
      const guildId = await guildWith(db.db, 0);
      const id = await pack(40);
      // The claim first by a few milliseconds, or the refund, or both at once (the first round; the seed says the others).
      let claimSettled = false;
      const claim = claimPack(db.db, { entitlementId: id, guildId }).finally(() => (claimSettled = true));
      const pauseMs = round === 0 ? 0 : random.below(6);
      if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
      if (!claimSettled) overlapped += 1;
      await Promise.all([claim, reverseEntitlement(db.db, { entitlementId: id })]);
      expect(await balanceOf(db.db, guildId)).toBe(0);
      await expectConsistent(db.db, guildId);
    }
    expect(overlapped, 'no round had the claim and the refund in flight at once').toBeGreaterThan(0);
  });
});

describe('server subscriptions', () => {
  it('top up at the start, then monthly as the largest allowance, and stop at their end', async () => {
    const guildId = await guildWith(db.db, 20);
    await setMonthlyAllowance(db.db, { guildId, amount: 100, actorId: 'owner', key: randomUUID() });
    expect(await applyMonthlyAllowance(db.db, guildId, december)).toMatchObject({ amount: 80, balance: 100 });
    await reserveForJob(db.db, { guildId, jobId: randomUUID(), userId: 'member', amount: 90 });

    // Started mid-month: the month gave a floor of 100, so its 500 adds the difference, 400.
    const id = await subscription(guildId, 500, { startsAt: december });
    expect(await startSubscription(db.db, { entitlementId: id, now: december })).toEqual({ amount: 400, guildId });
    expect(await startSubscription(db.db, { entitlementId: id, now: december })).toEqual({ amount: 0, guildId });
    expect(await balanceOf(db.db, guildId)).toBe(410);
    const [cached] = await db.db.select({ allowance: guilds.subscriptionAllowance }).from(guilds).where(eq(guilds.id, guildId));
    expect(cached?.allowance).toBe(500);

    await reserveForJob(db.db, { guildId, jobId: randomUUID(), userId: 'member', amount: 360 });
    // January: the subscription's 500 beats the owners' 100, under the guild's one key for the month.
    expect(await applyMonthlyAllowance(db.db, guildId, january)).toMatchObject({ applied: true, amount: 450, balance: 500 });
    const january_ = (await ledgerOf(db.db, guildId)).at(-1);
    expect(january_).toMatchObject({ kind: 'subscription', key: `allowance:${guildId}:2032-01`, userId: 'subscriber' });

    // It ends on the last day of January: February is the owners' allowance again, and January's credits stay.
    await db.db.update(entitlements).set({ endsAt: new Date('2032-01-31T00:00:00Z') }).where(eq(entitlements.id, id));
    await reserveForJob(db.db, { guildId, jobId: randomUUID(), userId: 'member', amount: 480 });
    expect(await applyMonthlyAllowance(db.db, guildId, february)).toMatchObject({ applied: true, amount: 80, balance: 100 });
    expect((await ledgerOf(db.db, guildId)).at(-1)).toMatchObject({ kind: 'allowance', key: `allowance:${guildId}:2032-02` });
    await expectConsistent(db.db, guildId);
  });

  it('of two, the larger gives the allowance; a refund stops it and takes back its top-up of the month', async () => {
    const guildId = await guildWith(db.db, 0);
    const small = await subscription(guildId, 200, { startsAt: december });
    const large = await subscription(guildId, 300, { startsAt: december });
    await startSubscription(db.db, { entitlementId: small, now: december });
    await startSubscription(db.db, { entitlementId: large, now: december });
    expect(await balanceOf(db.db, guildId)).toBe(300);

    const outcome = await reverseEntitlement(db.db, { entitlementId: large, now: december });
    expect(outcome).toMatchObject({ status: 'reversed', taken: 100, unrecovered: 0 });
    expect(await balanceOf(db.db, guildId)).toBe(200);
    const [cached] = await db.db.select({ allowance: guilds.subscriptionAllowance }).from(guilds).where(eq(guilds.id, guildId));
    expect(cached?.allowance).toBe(200);
    await reserveForJob(db.db, { guildId, jobId: randomUUID(), userId: 'member', amount: 200 });
    expect(await applyMonthlyAllowance(db.db, guildId, january)).toMatchObject({ amount: 200 });
    expect((await ledgerOf(db.db, guildId)).at(-1)).toMatchObject({ key: `allowance:${guildId}:2032-01`, kind: 'subscription', reason: `subscription 900000000000000002 2032-01 entitlement ${small}` });
    await expectConsistent(db.db, guildId);
  });

  it('started twice at once (Discord sends its event twice): the buyer’s notice goes with the start that added the credits', async () => {
    for (let round = 0; round < 5; round += 1) {
      const guildId = await guildWith(db.db, 5);
      const id = await subscription(guildId, 1_000, { startsAt: december });
      const starts = await Promise.all([1, 2].map(() => startSubscription(db.db, { entitlementId: id, now: december, takeNotice: true })));
      expect(starts.map((start) => start.amount).sort((a, b) => a - b)).toEqual([0, 995]);
      expect(starts.find((start) => start.noticeTaken)).toEqual({ amount: 995, guildId, noticeTaken: true });
      expect(starts.filter((start) => start.noticeTaken)).toHaveLength(1);
      // Seen again later: the notice is taken already.
      expect(await startSubscription(db.db, { entitlementId: id, now: december, takeNotice: true })).toEqual({ amount: 0, guildId, noticeTaken: false });
    }
  });

  it('already ended give nothing', async () => {
    const guildId = await guildWith(db.db, 0);
    const id = await subscription(guildId, 300, { startsAt: december, endsAt: new Date('2031-12-01T00:00:00Z') });
    expect(await startSubscription(db.db, { entitlementId: id, now: december })).toEqual({ amount: 0, guildId });
    expect(await balanceOf(db.db, guildId)).toBe(0);
  });
});
