/**
 * Charges on one guild made at once go in groups: one statement takes the guild's
 * row for many of them. Seen from outside, nothing else changes: the balance covers exactly
 * as many as it can, each charge gets the balance it left, a replayed job moves nothing, a
 * frozen guild refuses them all, and each charged job has its row. Entries written by one
 * statement share its transaction id (`xmin`), which shows the grouping itself.
 */
import { randomUUID } from 'node:crypto';
import { eq, inArray, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { reserveForJob, setFrozen } from '../../../src/credits/index.js';
import { creditLedger, jobs } from '../../../src/db/schema.js';
import { createTestDatabase } from '../../support/database.js';
import { balanceOf, expectConsistent, guildWith } from './support.js';

const test = await createTestDatabase();
const db = test.db;

function jobRow(jobId: string, guildId: string) {
  const now = new Date();
  return {
    table: jobs,
    values: { id: jobId, guildId, channelId: 'c', userId: 'u', kind: 'song' as const, request: { kind: 'song', prompt: jobId }, cost: 10, webhookSecret: 's', createdAt: now, updatedAt: now },
  };
}

async function statementsThatWrote(guildId: string): Promise<number> {
  const [row] = await db
    .select({ n: sql<number>`count(distinct xmin::text)::integer` })
    .from(creditLedger)
    .where(sql`${creditLedger.guildId} = ${guildId} and ${creditLedger.kind} = 'reserve'`);
  return row!.n;
}

describe('charges on one guild, at once', () => {
  it('take exactly what the balance covers, each with the balance it left, in a few statements', async () => {
    const guildId = await guildWith(db, 250);
    const jobIds = Array.from({ length: 40 }, () => randomUUID());
    const results = await Promise.all(jobIds.map((jobId, i) => reserveForJob(db, { guildId, jobId, userId: `member-${i}`, amount: 10, alongside: jobRow(jobId, guildId) })));

    const charged = results.flatMap((result, i) => (result.ok ? [{ jobId: jobIds[i]!, balance: result.balance, alongside: result.alongside }] : []));
    expect(charged).toHaveLength(25);
    expect(results.filter((result) => !result.ok)).toEqual(Array.from({ length: 15 }, () => ({ ok: false, reason: 'insufficient_credits', balance: 0 })));
    expect(charged.map((charge) => charge.balance).sort((a, b) => b - a)).toEqual(Array.from({ length: 25 }, (_, i) => 240 - i * 10));
    expect(await balanceOf(db, guildId)).toBe(0);
    await expectConsistent(db, guildId);

    // Each charged job has its row, given back with its charge; no refused job has one.
    expect(charged.every((charge) => charge.alongside?.['id'] === charge.jobId)).toBe(true);
    const rows = await db.select({ id: jobs.id }).from(jobs).where(inArray(jobs.id, jobIds));
    expect(rows.map((row) => row.id).sort()).toEqual(charged.map((charge) => charge.jobId).sort());

    // The first went alone; the 39 that came while it ran went in groups of at most 32.
    expect(await statementsThatWrote(guildId)).toBeLessThanOrEqual(3);
  });

  it('move nothing for a job charged before, and charge the others', async () => {
    const guildId = await guildWith(db, 100);
    const charged = randomUUID();
    expect(await reserveForJob(db, { guildId, jobId: charged, userId: 'u', amount: 10 })).toMatchObject({ ok: true, balance: 90 });
    const others = Array.from({ length: 5 }, () => randomUUID());
    const results = await Promise.all([charged, ...others, charged].map((jobId) => reserveForJob(db, { guildId, jobId, userId: 'u', amount: 10 })));
    expect(results.filter((result) => result.ok && result.replayed)).toHaveLength(2);
    expect(results.filter((result) => result.ok && !result.replayed)).toHaveLength(5);
    expect(await balanceOf(db, guildId)).toBe(40);
    const entries = await db.select().from(creditLedger).where(eq(creditLedger.jobId, charged));
    expect(entries).toHaveLength(1);
    await expectConsistent(db, guildId);
  });

  it('are all refused while the guild is frozen', async () => {
    const guildId = await guildWith(db, 100);
    await setFrozen(db, { guildId, frozen: true, actorId: 'moderator' });
    const results = await Promise.all(Array.from({ length: 6 }, () => reserveForJob(db, { guildId, jobId: randomUUID(), userId: 'u', amount: 10 })));
    expect(results).toEqual(Array.from({ length: 6 }, () => ({ ok: false, reason: 'frozen', balance: 100 })));
    expect(await balanceOf(db, guildId)).toBe(100);
  });

  it('on two guilds do not wait for each other, and each guild adds up', async () => {
    const [a, b] = await Promise.all([guildWith(db, 50), guildWith(db, 50)]);
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => reserveForJob(db, { guildId: i % 2 === 0 ? a : b, jobId: randomUUID(), userId: 'u', amount: 10 })),
    );
    expect(results.filter((result) => result.ok)).toHaveLength(10);
    expect([await balanceOf(db, a), await balanceOf(db, b)]).toEqual([0, 0]);
    await expectConsistent(db, a);
    await expectConsistent(db, b);
  });
});
