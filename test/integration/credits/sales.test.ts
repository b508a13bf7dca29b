/**
 * The owners' sales report (`/credits-admin account`): this month's packs and subscriptions,
 * the credits sold beside what the music service charged, and refunds with what could not be
 * taken back, read from the real entitlements and ledger.
 */
import { randomUUID } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { claimPack, history, reserveForJob, reverseEntitlement, startSubscription, exportCsv, utcMonthStart } from '../../../src/credits/index.js';
import { creditLedger, entitlements, jobs } from '../../../src/db/schema.js';
import { liveSubscriptionSkus, salesReport } from '../../../src/premium/sales.js';
import { createTestDatabase } from '../../support/database.js';
import { guildWith } from './support.js';

const db = await createTestDatabase();

const PACK_SKU = '900000000000000001';
const SUBSCRIPTION_SKU = '900000000000000002';
let next = 1_300_000_000_000_000_000n;
const entitlementId = () => String((next += 1n));

async function pack(credits: number, values: Partial<typeof entitlements.$inferInsert> = {}): Promise<string> {
  const id = entitlementId();
  await db.db.insert(entitlements).values({ id, skuId: PACK_SKU, kind: 'pack', type: 1, userId: 'buyer', credits, ...values });
  return id;
}

async function subscription(guildId: string, credits: number, values: Partial<typeof entitlements.$inferInsert> = {}): Promise<string> {
  const id = entitlementId();
  await db.db.insert(entitlements).values({ id, skuId: SUBSCRIPTION_SKU, kind: 'subscription', type: 8, userId: 'subscriber', guildId, credits, ...values });
  return id;
}

/** A job the service took (it has a task id), charged `cost`, its charge dated `at`. */
async function chargedJob(guildId: string, cost: number, at: Date): Promise<void> {
  const id = randomUUID();
  await db.db.insert(jobs).values({ id, guildId, channelId: 'c', userId: 'member', kind: 'lyrics', request: {}, cost, upstreamTaskId: `task-${id}`, state: 'succeeded' });
  const reserved = await reserveForJob(db.db, { guildId, jobId: id, userId: 'member', amount: cost });
  expect(reserved.ok).toBe(true);
  await db.db.update(creditLedger).set({ createdAt: at }).where(eq(creditLedger.jobId, id));
}

describe('the sales report', () => {
  it('counts this month’s packs and subscriptions, the credits sold beside the service’s charges, and refunds with what could not be taken back', async () => {
    // The report's month, and every row it reads dated in it or before it: not the wall clock's.
    const now = new Date('2021-05-14T12:00:00Z');
    const lastMonth = new Date(utcMonthStart(now).getTime() - 24 * 60 * 60_000);
    const empty = await salesReport(db.db, now);
    expect(empty).toMatchObject({ packs: { count: 0, credits: 0, waiting: 0 }, subscriptions: { live: 0, credits: 0 }, sold: 0, serviceCharged: 0, refunds: { count: 0 } });

    const guildId = await guildWith(db.db, 0);
    const claimed = await pack(100, { createdAt: now });
    expect(await claimPack(db.db, { entitlementId: claimed, guildId, now })).toMatchObject({ status: 'claimed', balance: 100 });
    await pack(500, { createdAt: now });
    // Bought last month: not this month's sale.
    await pack(1_000, { createdAt: lastMonth });

    const subscribed = await guildWith(db.db, 10);
    const live = await subscription(subscribed, 300, { startsAt: lastMonth });
    expect(await startSubscription(db.db, { entitlementId: live, now })).toMatchObject({ amount: 290 });
    await db.db.update(creditLedger).set({ createdAt: now }).where(and(eq(creditLedger.guildId, subscribed), eq(creditLedger.kind, 'subscription')));
    // Ended: not live.
    await subscription(await guildWith(db.db, 0), 700, { startsAt: lastMonth, endsAt: lastMonth });

    await chargedJob(guildId, 30, now);
    // The service's charges of last month do not count in this one.
    await chargedJob(subscribed, 5, lastMonth);

    // A refund after 30 of the pack's 100 credits were spent: 70 come back, 30 cannot.
    const refunded = await reverseEntitlement(db.db, { entitlementId: claimed, now });
    expect(refunded).toMatchObject({ status: 'reversed', taken: 70, unrecovered: 30 });

    const report = await salesReport(db.db, now);
    expect(report).toEqual({
      since: utcMonthStart(now),
      until: expect.any(Date),
      packs: { count: 2, credits: 600, waiting: 1 },
      subscriptions: { live: 1, credits: 290 },
      sold: 890,
      serviceCharged: 30,
      refunds: { count: 1, taken: 70, unrecovered: 30 },
    });
    // Next month sees none of it, but the live subscription.
    const later = await salesReport(db.db, report.until);
    expect(later).toMatchObject({ packs: { count: 0 }, subscriptions: { live: 1, credits: 0 }, sold: 0, serviceCharged: 0, refunds: { count: 0 } });
    expect(await liveSubscriptionSkus(db.db, subscribed, now)).toEqual([SUBSCRIPTION_SKU]);
    expect(await liveSubscriptionSkus(db.db, guildId, now)).toEqual([]);
  });
});

describe('history and CSV of purchases', () => {
  it('shows the claimed pack, the subscription month and each refund’s take-back under its entitlement id', async () => {
    const now = new Date();
    const guildId = await guildWith(db.db, 0);
    const packId = await pack(100);
    await claimPack(db.db, { entitlementId: packId, guildId, actorId: 'buyer' });
    const subscriptionId = await subscription(guildId, 250);
    await startSubscription(db.db, { entitlementId: subscriptionId, now });
    await reverseEntitlement(db.db, { entitlementId: packId, now });
    await reverseEntitlement(db.db, { entitlementId: subscriptionId, now });

    const { entries } = await history(db.db, { guildId, limit: 50 });
    const month = now.toISOString().slice(0, 7);
    expect(entries.map(({ kind, amount, key }) => ({ kind, amount, key })).reverse()).toEqual([
      { kind: 'purchase', amount: 100, key: `entitlement:${packId}` },
      // The month's floor, the server's one key for it: the subscription's, as its reason says.
      { kind: 'subscription', amount: 150, key: `allowance:${guildId}:${month}` },
      { kind: 'reversal', amount: -100, key: `entitlement:${packId}:reversal` },
      { kind: 'reversal', amount: -150, key: `entitlement:${subscriptionId}:reversal` },
    ]);

    const rows = exportCsv(entries.slice().reverse())
      .trimEnd()
      .split('\r\n')
      .map((row) => row.split(','));
    expect(rows[0]).toEqual(['id', 'time', 'kind', 'amount', 'balance_after', 'user', 'actor', 'job', 'reason', 'entitlement']);
    expect(rows.slice(1).map((row) => [row[2], row[3], row[5], row[6], row[8], row[9]])).toEqual([
      ['purchase', '100', 'buyer', 'buyer', `credit pack ${PACK_SKU}`, packId],
      ['subscription', '150', 'subscriber', '', `subscription ${SUBSCRIPTION_SKU} ${month} entitlement ${subscriptionId}`, subscriptionId],
      ['reversal', '-100', 'buyer', '', `refund of credit pack ${PACK_SKU}`, packId],
      ['reversal', '-150', 'subscriber', '', `refund of subscription ${SUBSCRIPTION_SKU}`, subscriptionId],
    ]);
  });
});
