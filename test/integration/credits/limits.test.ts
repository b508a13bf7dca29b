import { randomUUID } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import {
  checkSpendingLimits,
  getGuildCredits,
  reserveForJob,
  returnJobCredits,
  setFrozen,
  setUserDailyCap,
  spentToday,
} from '../../../src/credits/index.js';
import { connectDatabase } from '../../../src/db/client.js';
import { auditLog, creditLedger } from '../../../src/db/schema.js';
import { createTestDatabase } from '../../support/database.js';
import { balanceOf, expectConsistent, guildWith } from './support.js';

const db = await createTestDatabase();

const day = new Date('2031-03-10T12:00:00Z');
const dayBefore = new Date('2031-03-09T23:59:59Z');

/** Charges a job and dates its ledger rows, so tests need not depend on the wall clock. */
async function chargeAt(guildId: string, userId: string, amount: number, at: Date): Promise<string> {
  const jobId = randomUUID();
  const reserved = await reserveForJob(db.db, { guildId, jobId, userId, amount });
  expect(reserved.ok).toBe(true);
  await db.db.update(creditLedger).set({ createdAt: at }).where(eq(creditLedger.jobId, jobId));
  return jobId;
}

describe('spentToday', () => {
  it('counts the UTC day of the charge, net of refunds and releases for those jobs', async () => {
    const guildId = await guildWith(db.db, 1000);
    const refunded = await chargeAt(guildId, 'alice', 40, day);
    const released = await chargeAt(guildId, 'alice', 15, day);
    await chargeAt(guildId, 'alice', 25, day);
    await chargeAt(guildId, 'bob', 100, day);
    const yesterdays = await chargeAt(guildId, 'alice', 60, dayBefore);

    expect(await spentToday(db.db, { guildId, userId: 'alice', now: day })).toBe(80);
    await returnJobCredits(db.db, { jobId: refunded, kind: 'refund', reason: 'failed upstream' });
    await returnJobCredits(db.db, { jobId: released, kind: 'release', reason: 'rejected' });
    // A refund today for yesterday's job does not make room today.
    await returnJobCredits(db.db, { jobId: yesterdays, kind: 'refund', reason: 'timed out' });

    expect(await spentToday(db.db, { guildId, userId: 'alice', now: day })).toBe(25);
    expect(await spentToday(db.db, { guildId, userId: 'alice', now: dayBefore })).toBe(0);
    expect(await spentToday(db.db, { guildId, userId: 'bob', now: day })).toBe(100);
    expect(await spentToday(db.db, { guildId, userId: 'carol', now: day })).toBe(0);
    await expectConsistent(db.db, guildId);
  });
});

describe('checkSpendingLimits', () => {
  it('applies the guild cap, or the most generous override among the member roles', async () => {
    const guildId = await guildWith(db.db, 1000);
    const check = (roleIds: string[], amount: number) =>
      checkSpendingLimits(db.db, { guildId, userId: 'alice', roleIds, amount, now: day });

    expect(await check([], 10_000)).toEqual({ ok: true });
    await setUserDailyCap(db.db, { guildId, amount: 50, actorId: 'mod' });
    await setUserDailyCap(db.db, { guildId, amount: 200, roleId: 'vip', actorId: 'mod' });
    await setUserDailyCap(db.db, { guildId, amount: 10, roleId: 'newcomer', actorId: 'mod' });
    await chargeAt(guildId, 'alice', 30, day);

    expect(await check([], 20)).toEqual({ ok: true });
    expect(await check([], 21)).toEqual({ ok: false, reason: 'user_cap', limit: 50, spent: 30 });
    expect(await check(['unrelated'], 21)).toEqual({ ok: false, reason: 'user_cap', limit: 50, spent: 30 });
    expect(await check(['vip'], 170)).toEqual({ ok: true });
    expect(await check(['vip'], 171)).toEqual({ ok: false, reason: 'user_cap', limit: 200, spent: 30 });
    expect(await check(['newcomer', 'vip'], 170)).toEqual({ ok: true });
    // An override is an override: it can hold a role below the guild cap.
    expect(await check(['newcomer'], 1)).toEqual({ ok: false, reason: 'user_cap', limit: 10, spent: 30 });

    // Another member's spending does not count against alice.
    expect(await checkSpendingLimits(db.db, { guildId, userId: 'bob', roleIds: [], amount: 50, now: day })).toEqual({
      ok: true,
    });

    await setUserDailyCap(db.db, { guildId, amount: null, roleId: 'newcomer', actorId: 'mod' });
    expect(await check(['newcomer'], 20)).toEqual({ ok: true });
    await setUserDailyCap(db.db, { guildId, amount: null, actorId: 'mod' });
    expect(await check([], 5000)).toEqual({ ok: true });
    expect((await getGuildCredits(db.db, guildId))?.roleLimits).toEqual([{ roleId: 'vip', dailyCap: 200 }]);
  });

  it('refuses a frozen guild and records who froze it', async () => {
    const guildId = await guildWith(db.db, 100);
    expect(await setFrozen(db.db, { guildId, frozen: true, actorId: 'mod-7' })).toEqual({ frozen: true, changed: true });
    expect(await setFrozen(db.db, { guildId, frozen: true, actorId: 'mod-8' })).toEqual({ frozen: true, changed: false });
    expect(await checkSpendingLimits(db.db, { guildId, userId: 'u', roleIds: [], amount: 1, now: day })).toEqual({
      ok: false,
      reason: 'frozen',
    });
    await setFrozen(db.db, { guildId, frozen: false, actorId: 'mod-9' });
    expect(await checkSpendingLimits(db.db, { guildId, userId: 'u', roleIds: [], amount: 1, now: day })).toEqual({
      ok: true,
    });
    const audit = await db.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.guildId, guildId), eq(auditLog.action, 'credits.frozen')))
      .orderBy(auditLog.id);
    expect(audit.map((row) => [row.actorId, row.details])).toEqual([
      ['mod-7', { frozen: true }],
      ['mod-9', { frozen: false }],
    ]);
    expect(await balanceOf(db.db, guildId)).toBe(100);
  });

  it("serialises one member's check-then-reserve when each runs in a transaction", async () => {
    const guildId = await guildWith(db.db, 1000);
    await setUserDailyCap(db.db, { guildId, amount: 10, actorId: 'mod' });
    const pool = connectDatabase(db.url, { max: 6 });
    try {
      const attempts = await Promise.all(
        Array.from({ length: 6 }, () =>
          pool.db.transaction(async (tx) => {
            const allowed = await checkSpendingLimits(tx, { guildId, userId: 'spammer', roleIds: [], amount: 10, now: day });
            if (!allowed.ok) return allowed;
            const jobId = randomUUID();
            const reserved = await reserveForJob(tx, { guildId, jobId, userId: 'spammer', amount: 10 });
            // Dated on the day checked, before the lock is let go (Postgres's clock may be on the next day).
            await tx.update(creditLedger).set({ createdAt: day }).where(eq(creditLedger.jobId, jobId));
            return reserved;
          }),
        ),
      );
      expect(attempts.filter((attempt) => attempt.ok)).toHaveLength(1);
      expect(attempts.filter((attempt) => !attempt.ok && attempt.reason === 'user_cap')).toHaveLength(5);
    } finally {
      await pool.close();
    }
    expect(await balanceOf(db.db, guildId)).toBe(990);
  });

  it('records cap changes with who made them', async () => {
    const guildId = await guildWith(db.db, 0);
    await setUserDailyCap(db.db, { guildId, amount: 50, actorId: 'mod-1', key: 'i-1' });
    expect(await setUserDailyCap(db.db, { guildId, amount: 50, actorId: 'mod-1', key: 'i-1' })).toMatchObject({
      replayed: true,
    });
    await setUserDailyCap(db.db, { guildId, amount: 80, roleId: 'vip', actorId: 'mod-2' });
    const audit = await db.db.select().from(auditLog).where(eq(auditLog.guildId, guildId)).orderBy(auditLog.id);
    expect(audit.map((row) => [row.actorId, row.action, row.details])).toEqual([
      ['mod-1', 'credits.daily_cap', { roleId: null, amount: 50, previous: null, key: 'i-1' }],
      ['mod-2', 'credits.daily_cap', { roleId: 'vip', amount: 80, previous: null }],
    ]);
  });
});
