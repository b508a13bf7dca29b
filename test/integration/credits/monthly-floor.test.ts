/**
 * One floor per server and month: the largest live allowance (the owners' or a subscription's),
 * applied once, whichever of the month's first use, the hourly pass, an entitlement event or the
 * listing comes first. A subscription first seen later in the month adds only the difference to
 * what the month already gave; later events and listings move nothing. The clock is the test's.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  applyDueAllowances,
  applyMonthlyAllowance,
  grant,
  reserveForJob,
  reverseEntitlement,
  setMonthlyAllowance,
  startSubscription,
  utcMonth,
} from '../../../src/credits/index.js';
import { entitlements } from '../../../src/db/schema.js';
import { salesReport } from '../../../src/premium/sales.js';
import { createTestDatabase } from '../../support/database.js';
import { balanceOf, expectConsistent, guildWith, ledgerOf } from './support.js';

const db = await createTestDatabase();

const november = new Date('2031-11-03T08:00:00Z');
const december = new Date('2031-12-01T00:00:10Z');
const midDecember = new Date('2031-12-15T12:00:00Z');
const lateDecember = new Date('2031-12-28T12:00:00Z');
const january = new Date('2032-01-01T00:00:10Z');

let next = 1_600_000_000_000_000_000n;
function entitlementId(): string {
  next += 1n;
  return String(next);
}

async function subscription(guildId: string, credits: number, window: { startsAt?: Date; endsAt?: Date } = {}): Promise<string> {
  const id = entitlementId();
  await db.db
    .insert(entitlements)
    .values({ id, skuId: '1600000000000000001', kind: 'subscription', type: 8, userId: 'subscriber', guildId, credits, startsAt: window.startsAt ?? null, endsAt: window.endsAt ?? null });
  return id;
}

async function allowanceOf(guildId: string, amount: number, now: Date): Promise<void> {
  await setMonthlyAllowance(db.db, { guildId, amount, actorId: 'owner', key: randomUUID(), now });
}

/** Members spend everything the server has. */
async function spendAll(guildId: string): Promise<void> {
  const balance = await balanceOf(db.db, guildId);
  if (balance > 0) expect(await reserveForJob(db.db, { guildId, jobId: randomUUID(), userId: 'member', amount: balance })).toMatchObject({ ok: true });
}

/** What the month's allowances gave the server: the owners' and the subscriptions', by ledger key. */
async function allowanceCredits(guildId: string, month: string): Promise<Array<[string, number]>> {
  return (await ledgerOf(db.db, guildId))
    .filter((entry) => (entry.kind === 'allowance' || entry.kind === 'subscription') && entry.key.endsWith(`:${month}`))
    .map((entry) => [entry.key, entry.amount]);
}

describe('one floor per server and month', () => {
  it("the owners' 100 beside a subscription of 80: spending to 0 brings nothing more that month, and nothing is sold", async () => {
    // The report reads the ledger's own times: this test runs in the current month.
    const now = new Date();
    const month = utcMonth(now);
    const soldBefore = (await salesReport(db.db, now)).subscriptions.credits;
    const guildId = await guildWith(db.db, 0);
    await allowanceOf(guildId, 100, now);
    expect(await applyMonthlyAllowance(db.db, guildId, now)).toMatchObject({ applied: true, amount: 100 });
    const id = await subscription(guildId, 80, { startsAt: now });
    // Its event, then members spend, then the listing and a late second event.
    expect(await startSubscription(db.db, { entitlementId: id, now })).toEqual({ amount: 0, guildId });
    await spendAll(guildId);
    expect(await startSubscription(db.db, { entitlementId: id, now })).toEqual({ amount: 0, guildId });
    expect(await startSubscription(db.db, { entitlementId: id, now })).toEqual({ amount: 0, guildId });
    expect(await balanceOf(db.db, guildId)).toBe(0);
    expect(await allowanceCredits(guildId, month)).toEqual([[`allowance:${guildId}:${month}`, 100]]);
    expect((await salesReport(db.db, now)).subscriptions.credits - soldBefore).toBe(0);
    await expectConsistent(db.db, guildId);
  });

  it('two subscriptions of 300 and 200: the smaller adds nothing, before or after members spend', async () => {
    const guildId = await guildWith(db.db, 0);
    const [large, small] = [await subscription(guildId, 300, { startsAt: november }), await subscription(guildId, 200, { startsAt: november })];
    expect(await startSubscription(db.db, { entitlementId: large, now: december })).toEqual({ amount: 300, guildId });
    expect(await startSubscription(db.db, { entitlementId: small, now: december })).toEqual({ amount: 0, guildId });
    await spendAll(guildId);
    expect(await startSubscription(db.db, { entitlementId: small, now: midDecember })).toEqual({ amount: 0, guildId });
    expect(await startSubscription(db.db, { entitlementId: large, now: lateDecember })).toEqual({ amount: 0, guildId });
    expect(await applyMonthlyAllowance(db.db, guildId, lateDecember)).toMatchObject({ applied: false, amount: 0 });
    expect(await balanceOf(db.db, guildId)).toBe(0);
    expect(await allowanceCredits(guildId, '2031-12')).toEqual([[`allowance:${guildId}:2031-12`, 300]]);
    await expectConsistent(db.db, guildId);
  });

  describe('at the month boundary', () => {
    it("the listing first: the owners' larger allowance is the month's floor, and their pass adds nothing after", async () => {
      const guildId = await guildWith(db.db, 0);
      await allowanceOf(guildId, 100, november);
      const id = await subscription(guildId, 80, { startsAt: november });
      await startSubscription(db.db, { entitlementId: id, now: november });
      await spendAll(guildId);

      expect(await startSubscription(db.db, { entitlementId: id, now: january })).toEqual({ amount: 100, guildId });
      expect(await applyMonthlyAllowance(db.db, guildId, january)).toMatchObject({ applied: false, amount: 0, balance: 100 });
      expect(await applyDueAllowances(db.db, january)).toMatchObject({ failed: [] });
      await spendAll(guildId);
      expect(await startSubscription(db.db, { entitlementId: id, now: january })).toEqual({ amount: 0, guildId });
      expect(await balanceOf(db.db, guildId)).toBe(0);
      expect((await ledgerOf(db.db, guildId)).find((entry) => entry.key === `allowance:${guildId}:2032-01`)).toMatchObject({ kind: 'allowance', amount: 100 });
      expect(await allowanceCredits(guildId, '2032-01')).toHaveLength(1);
      await expectConsistent(db.db, guildId);
    });

    it("the owners' pass first: the subscription's larger allowance is the floor, under the server's key, and its event adds nothing after", async () => {
      const guildId = await guildWith(db.db, 0);
      await allowanceOf(guildId, 100, november);
      const id = await subscription(guildId, 300, { startsAt: november });
      await startSubscription(db.db, { entitlementId: id, now: november });
      await spendAll(guildId);

      expect(await applyMonthlyAllowance(db.db, guildId, january)).toMatchObject({ applied: true, amount: 300, balance: 300 });
      expect(await startSubscription(db.db, { entitlementId: id, now: january })).toEqual({ amount: 0, guildId });
      await spendAll(guildId);
      expect(await startSubscription(db.db, { entitlementId: id, now: january })).toEqual({ amount: 0, guildId });
      const floor = (await ledgerOf(db.db, guildId)).find((entry) => entry.key === `allowance:${guildId}:2032-01`);
      // The subscriber's: sold, and named by its entitlement.
      expect(floor).toMatchObject({ kind: 'subscription', amount: 300, userId: 'subscriber' });
      expect(await allowanceCredits(guildId, '2032-01')).toEqual([[`allowance:${guildId}:2032-01`, 300]]);
      await expectConsistent(db.db, guildId);
    });

    it("the owners' pass first with their allowance the larger, then the listing after members spent: nothing more", async () => {
      const guildId = await guildWith(db.db, 0);
      await allowanceOf(guildId, 100, november);
      const id = await subscription(guildId, 80, { startsAt: november });
      await startSubscription(db.db, { entitlementId: id, now: november });
      await spendAll(guildId);

      expect((await applyDueAllowances(db.db, january)).applied).toContainEqual(expect.objectContaining({ guildId, amount: 100 }));
      expect(await startSubscription(db.db, { entitlementId: id, now: january })).toEqual({ amount: 0, guildId });
      await spendAll(guildId);
      expect(await startSubscription(db.db, { entitlementId: id, now: january })).toEqual({ amount: 0, guildId });
      expect(await allowanceCredits(guildId, '2032-01')).toEqual([[`allowance:${guildId}:2032-01`, 100]]);
      await expectConsistent(db.db, guildId);
    });

    it('events, listings and first uses racing at the turn of the month apply one floor', async () => {
      const guildId = await guildWith(db.db, 0);
      await allowanceOf(guildId, 100, november);
      const [large, small] = [await subscription(guildId, 250, { startsAt: november }), await subscription(guildId, 200, { startsAt: november })];
      await startSubscription(db.db, { entitlementId: large, now: november });
      await spendAll(guildId);
      await Promise.all([
        ...[large, small, large, small].map((entitlementId) => startSubscription(db.db, { entitlementId, now: january })),
        applyMonthlyAllowance(db.db, guildId, january),
        applyMonthlyAllowance(db.db, guildId, january),
        applyDueAllowances(db.db, january),
      ]);
      expect(await balanceOf(db.db, guildId)).toBe(250);
      expect(await allowanceCredits(guildId, '2032-01')).toEqual([[`allowance:${guildId}:2032-01`, 250]]);
      await expectConsistent(db.db, guildId);
    });
  });

  it('a subscription first seen mid-month, larger than the month gave, adds the difference only, once', async () => {
    const guildId = await guildWith(db.db, 20);
    await allowanceOf(guildId, 100, december);
    expect(await applyMonthlyAllowance(db.db, guildId, december)).toMatchObject({ amount: 80, balance: 100 });
    await reserveForJob(db.db, { guildId, jobId: randomUUID(), userId: 'member', amount: 90 });

    const id = await subscription(guildId, 500, { startsAt: midDecember });
    // The month gave a floor of 100: the subscription's 500 adds 400, not the 490 up to 500.
    expect(await startSubscription(db.db, { entitlementId: id, now: midDecember })).toEqual({ amount: 400, guildId });
    expect(await balanceOf(db.db, guildId)).toBe(410);
    await spendAll(guildId);
    expect(await startSubscription(db.db, { entitlementId: id, now: lateDecember })).toEqual({ amount: 0, guildId });
    expect(await allowanceCredits(guildId, '2031-12')).toEqual([
      [`allowance:${guildId}:2031-12`, 80],
      [`entitlement:${id}:2031-12`, 400],
    ]);
    // January: the subscription's 500 is the floor.
    expect(await applyMonthlyAllowance(db.db, guildId, january)).toMatchObject({ applied: true, amount: 500 });
    await expectConsistent(db.db, guildId);
  });

  it('a subscription first seen mid-month tops up to its allowance at most', async () => {
    const guildId = await guildWith(db.db, 0);
    await allowanceOf(guildId, 100, december);
    await applyMonthlyAllowance(db.db, guildId, december);
    // Credits granted meanwhile: the balance is nearly at the subscription's allowance.
    await grant(db.db, { guildId, amount: 15, actorId: 'owner', key: randomUUID() });
    const id = await subscription(guildId, 120, { startsAt: midDecember });
    expect(await startSubscription(db.db, { entitlementId: id, now: midDecember })).toEqual({ amount: 5, guildId });
    expect(await balanceOf(db.db, guildId)).toBe(120);
    await spendAll(guildId);
    expect(await startSubscription(db.db, { entitlementId: id, now: lateDecember })).toEqual({ amount: 0, guildId });
    await expectConsistent(db.db, guildId);
  });

  it('a subscription that ends mid-month: the smaller one left adds nothing that month, and is the floor the next', async () => {
    const guildId = await guildWith(db.db, 0);
    const ending = await subscription(guildId, 300, { startsAt: november, endsAt: midDecember });
    const lasting = await subscription(guildId, 200, { startsAt: november });
    expect(await startSubscription(db.db, { entitlementId: ending, now: december })).toEqual({ amount: 300, guildId });
    expect(await startSubscription(db.db, { entitlementId: lasting, now: december })).toEqual({ amount: 0, guildId });
    await spendAll(guildId);
    // After its end: the listing brings both again.
    expect(await startSubscription(db.db, { entitlementId: ending, now: lateDecember })).toEqual({ amount: 0, guildId });
    expect(await startSubscription(db.db, { entitlementId: lasting, now: lateDecember })).toEqual({ amount: 0, guildId });
    expect(await balanceOf(db.db, guildId)).toBe(0);
    expect(await allowanceCredits(guildId, '2031-12')).toEqual([[`allowance:${guildId}:2031-12`, 300]]);

    expect(await startSubscription(db.db, { entitlementId: lasting, now: january })).toEqual({ amount: 200, guildId });
    expect(await allowanceCredits(guildId, '2032-01')).toEqual([[`allowance:${guildId}:2032-01`, 200]]);
    await expectConsistent(db.db, guildId);
  });

  it("a refunded subscription takes back only what the month gives without it: the owners' allowance stays, and a later one adds its difference", async () => {
    const guildId = await guildWith(db.db, 0);
    await allowanceOf(guildId, 100, november);
    const refunded = await subscription(guildId, 300, { startsAt: november });
    expect(await applyMonthlyAllowance(db.db, guildId, december)).toMatchObject({ amount: 300 });
    expect(await reverseEntitlement(db.db, { entitlementId: refunded, now: midDecember })).toMatchObject({ status: 'reversed', taken: 200, unrecovered: 0 });
    expect(await balanceOf(db.db, guildId)).toBe(100);
    const next = await subscription(guildId, 250, { startsAt: midDecember });
    expect(await startSubscription(db.db, { entitlementId: next, now: midDecember })).toEqual({ amount: 150, guildId });
    expect(await balanceOf(db.db, guildId)).toBe(250);
    await expectConsistent(db.db, guildId);
  });
});
