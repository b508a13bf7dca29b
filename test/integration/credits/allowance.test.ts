import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import {
  applyDueAllowances,
  applyMonthlyAllowance,
  getGuildCredits,
  grant,
  reserveForJob,
  setMonthlyAllowance,
} from '../../../src/credits/index.js';
import { auditLog } from '../../../src/db/schema.js';
import { createTestDatabase } from '../../support/database.js';
import { balanceOf, expectConsistent, guildWith, ledgerOf } from './support.js';

const db = await createTestDatabase();

const june = new Date('2031-06-01T00:00:05Z');
const lateJune = new Date('2031-06-30T23:59:59Z');
const july = new Date('2031-07-01T00:00:00Z');

describe('monthly allowance', () => {
  it('set to start next month, leaves this month’s balance alone and tops up on the first of the next', async () => {
    const guildId = await guildWith(db.db, 40);
    await setMonthlyAllowance(db.db, { guildId, amount: 100, actorId: 'owner', key: 'i-next', fromNextMonth: true, now: june });
    expect(await applyMonthlyAllowance(db.db, guildId, lateJune)).toMatchObject({ applied: false, balance: 40 });
    expect(await applyMonthlyAllowance(db.db, guildId, july)).toMatchObject({ period: '2031-07', applied: true, amount: 60, balance: 100 });
    const [audit] = await db.db.select().from(auditLog).where(eq(auditLog.guildId, guildId));
    expect(audit?.details).toMatchObject({ amount: 100, previous: 0, fromNextMonth: true });
    await expectConsistent(db.db, guildId);
  });

  it('tops the balance up to the allowance once per UTC month', async () => {
    const guildId = await guildWith(db.db, 0);
    await setMonthlyAllowance(db.db, { guildId, amount: 100, actorId: 'owner', key: 'i-a' });

    expect(await applyMonthlyAllowance(db.db, guildId, june)).toMatchObject({
      period: '2031-06',
      applied: true,
      amount: 100,
      balance: 100,
    });
    expect(await applyMonthlyAllowance(db.db, guildId, lateJune)).toMatchObject({ applied: false, amount: 0, balance: 100 });

    await reserveForJob(db.db, { guildId, jobId: randomUUID(), userId: 'u', amount: 70 });
    expect(await applyMonthlyAllowance(db.db, guildId, lateJune)).toMatchObject({ applied: false, balance: 30 });

    expect(await applyMonthlyAllowance(db.db, guildId, july)).toMatchObject({
      period: '2031-07',
      applied: true,
      amount: 70,
      balance: 100,
    });
    // A clock that goes back does not re-apply an earlier month.
    expect(await applyMonthlyAllowance(db.db, guildId, lateJune)).toMatchObject({ applied: false, balance: 100 });

    const allowances = (await ledgerOf(db.db, guildId)).filter((row) => row.kind === 'allowance');
    expect(allowances.map((row) => [row.key, row.amount, row.balanceAfter])).toEqual([
      [`allowance:${guildId}:2031-06`, 100, 100],
      [`allowance:${guildId}:2031-07`, 70, 100],
    ]);
    expect((await getGuildCredits(db.db, guildId))?.allowancePeriod).toBe('2031-07');
    await expectConsistent(db.db, guildId);
  });

  it('keeps credits granted above the allowance and adds nothing then', async () => {
    const guildId = await guildWith(db.db, 0);
    await setMonthlyAllowance(db.db, { guildId, amount: 100, actorId: 'owner', key: 'i-b' });
    await grant(db.db, { guildId, amount: 250, actorId: 'owner', key: 'i-bought' });
    expect(await applyMonthlyAllowance(db.db, guildId, june)).toMatchObject({ applied: true, amount: 0, balance: 250 });
    expect((await ledgerOf(db.db, guildId)).filter((row) => row.kind === 'allowance')).toEqual([]);
    expect((await getGuildCredits(db.db, guildId))?.allowancePeriod).toBe('2031-06');
  });

  it('applies once when many first uses of the month race', async () => {
    const guildId = await guildWith(db.db, 10);
    await setMonthlyAllowance(db.db, { guildId, amount: 60, actorId: 'owner', key: 'i-c' });
    const results = await Promise.all(Array.from({ length: 8 }, () => applyMonthlyAllowance(db.db, guildId, june)));
    expect(results.filter((result) => result.applied)).toHaveLength(1);
    expect(await balanceOf(db.db, guildId)).toBe(60);
    await expectConsistent(db.db, guildId);
  });

  it('leaves a guild without allowance alone', async () => {
    const guildId = await guildWith(db.db, 5);
    expect(await applyMonthlyAllowance(db.db, guildId, june)).toMatchObject({ applied: false, balance: 5 });
    expect((await getGuildCredits(db.db, guildId))?.allowancePeriod).toBeNull();
  });

  it('setMonthlyAllowance records who set it and ignores a replayed interaction', async () => {
    const guildId = await guildWith(db.db, 0);
    expect(await setMonthlyAllowance(db.db, { guildId, amount: 100, actorId: 'owner', key: 'i-d1' })).toEqual({
      monthlyAllowance: 100,
      previous: 0,
      replayed: false,
    });
    await setMonthlyAllowance(db.db, { guildId, amount: 200, actorId: 'mod', key: 'i-d2' });
    // The first interaction retried late must not undo the second.
    expect(await setMonthlyAllowance(db.db, { guildId, amount: 100, actorId: 'owner', key: 'i-d1' })).toMatchObject({
      monthlyAllowance: 200,
      replayed: true,
    });
    expect((await getGuildCredits(db.db, guildId))?.monthlyAllowance).toBe(200);
    const audit = await db.db.select().from(auditLog).where(eq(auditLog.guildId, guildId)).orderBy(auditLog.id);
    expect(audit.map((row) => [row.actorId, row.action, row.details])).toEqual([
      ['owner', 'credits.monthly_allowance', { amount: 100, previous: 0, key: 'i-d1' }],
      ['mod', 'credits.monthly_allowance', { amount: 200, previous: 100, key: 'i-d2' }],
    ]);
  });

  it('applyDueAllowances tops up every due guild once', async () => {
    await db.truncateAll();
    const due = await guildWith(db.db, 0);
    const alsoDue = await guildWith(db.db, 30);
    const none = await guildWith(db.db, 0);
    await setMonthlyAllowance(db.db, { guildId: due, amount: 50, actorId: 'o', key: 'k1' });
    await setMonthlyAllowance(db.db, { guildId: alsoDue, amount: 50, actorId: 'o', key: 'k2' });

    const first = await applyDueAllowances(db.db, june);
    expect(first.failed).toEqual([]);
    expect(first.applied.map((result) => [result.guildId, result.amount]).sort()).toEqual(
      [
        [due, 50],
        [alsoDue, 20],
      ].sort(),
    );
    expect((await applyDueAllowances(db.db, lateJune)).applied).toEqual([]);
    expect((await applyDueAllowances(db.db, july)).applied).toHaveLength(2);
    expect(await balanceOf(db.db, due)).toBe(50);
    expect(await balanceOf(db.db, alsoDue)).toBe(50);
    expect(await balanceOf(db.db, none)).toBe(0);
    for (const guildId of [due, alsoDue, none]) await expectConsistent(db.db, guildId);
  });
});
