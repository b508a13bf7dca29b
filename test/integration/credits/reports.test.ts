import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { exportCsv, grant, history, reserveForJob, returnJobCredits, usage, verifyLedger } from '../../../src/credits/index.js';
import { creditLedger, guilds } from '../../../src/db/schema.js';
import { createTestDatabase } from '../../support/database.js';
import { guildWith, ledgerOf } from './support.js';

const db = await createTestDatabase();

describe('history', () => {
  it('pages the ledger newest first without gaps or repeats', async () => {
    const guildId = await guildWith(db.db, 500);
    const other = await guildWith(db.db, 500);
    for (let i = 0; i < 11; i += 1) {
      await reserveForJob(db.db, { guildId, jobId: randomUUID(), userId: i % 2 === 0 ? 'even' : 'odd', amount: 1 });
      await reserveForJob(db.db, { guildId: other, jobId: randomUUID(), userId: 'even', amount: 1 });
    }
    const all = await ledgerOf(db.db, guildId);
    expect(all).toHaveLength(12);

    const first = await history(db.db, { guildId, limit: 5 });
    const second = await history(db.db, { guildId, limit: 5, beforeId: first.nextBeforeId ?? undefined });
    const third = await history(db.db, { guildId, limit: 5, beforeId: second.nextBeforeId ?? undefined });
    expect(first.entries).toHaveLength(5);
    expect(second.entries).toHaveLength(5);
    expect(third.entries).toHaveLength(2);
    expect(third.nextBeforeId).toBeNull();
    const paged = [...first.entries, ...second.entries, ...third.entries].map((entry) => entry.id);
    expect(paged).toEqual(all.map((entry) => entry.id).reverse());

    const evens = await history(db.db, { guildId, userId: 'even', limit: 100 });
    expect(evens.entries).toHaveLength(6);
    expect(evens.entries.every((entry) => entry.userId === 'even' && entry.guildId === guildId)).toBe(true);
    expect(evens.nextBeforeId).toBeNull();

    expect((await history(db.db, { guildId })).entries).toHaveLength(12);
    const exact = await history(db.db, { guildId, limit: 12 });
    expect(exact.nextBeforeId).toBeNull();
  });

  it('pages back to newer entries from any page, the same pages however many entries come meanwhile', async () => {
    const guildId = await guildWith(db.db, 500);
    for (let i = 0; i < 11; i += 1) await reserveForJob(db.db, { guildId, jobId: randomUUID(), userId: 'u', amount: 1 });
    const ids = (await ledgerOf(db.db, guildId)).map((entry) => entry.id).reverse();

    const first = await history(db.db, { guildId, limit: 5 });
    expect(first.newerAfterId).toBeNull();
    const second = await history(db.db, { guildId, limit: 5, beforeId: first.nextBeforeId! });
    const third = await history(db.db, { guildId, limit: 5, beforeId: second.nextBeforeId! });
    expect(third.entries.map((entry) => entry.id)).toEqual(ids.slice(10));
    expect(third.nextBeforeId).toBeNull();
    expect(third.newerAfterId).toBe(ids[10]);

    await reserveForJob(db.db, { guildId, jobId: randomUUID(), userId: 'u', amount: 1 });
    const backToSecond = await history(db.db, { guildId, limit: 5, afterId: third.newerAfterId! });
    expect(backToSecond.entries.map((entry) => entry.id)).toEqual(ids.slice(5, 10));
    expect(backToSecond).toMatchObject({ nextBeforeId: ids[9], newerAfterId: ids[5] });
    const backToFirst = await history(db.db, { guildId, limit: 5, afterId: backToSecond.newerAfterId! });
    expect(backToFirst.entries.map((entry) => entry.id)).toEqual(ids.slice(0, 5));
    // The entry written meanwhile is one page newer still, and that page is the newest.
    const newest = await history(db.db, { guildId, limit: 5, afterId: backToFirst.newerAfterId! });
    expect(newest.entries).toHaveLength(1);
    expect(newest.entries[0]).toMatchObject({ kind: 'reserve', jobKind: null });
    expect(newest.newerAfterId).toBeNull();
    expect(newest.nextBeforeId).toBe(newest.entries[0]!.id);
  });

  it('exports what history returns as CSV', async () => {
    const guildId = await guildWith(db.db, 0);
    await grant(db.db, { guildId, amount: 10, actorId: 'mod', reason: '=HYPERLINK("x"), thanks', key: 'i-csv' });
    const page = await history(db.db, { guildId });
    const csv = exportCsv(page.entries);
    const [header, row] = csv.split('\r\n');
    expect(header).toBe('id,time,kind,amount,balance_after,user,actor,job,reason,entitlement');
    expect(row).toBe(
      `${page.entries[0]?.id},${page.entries[0]?.createdAt.toISOString()},grant,10,10,,mod,,"'=HYPERLINK(""x""), thanks",`,
    );
  });
});

describe('usage', () => {
  it('sums each member net of what came back, for jobs charged in the range', async () => {
    const guildId = await guildWith(db.db, 1000);
    const since = new Date('2031-05-01T00:00:00Z');
    const until = new Date('2031-06-01T00:00:00Z');
    const charge = async (userId: string, amount: number, at: Date) => {
      const jobId = randomUUID();
      await reserveForJob(db.db, { guildId, jobId, userId, amount });
      await db.db.update(creditLedger).set({ createdAt: at }).where(eq(creditLedger.jobId, jobId));
      return jobId;
    };
    const inMay = new Date('2031-05-15T10:00:00Z');
    await charge('alice', 10, inMay);
    const refunded = await charge('alice', 20, inMay);
    await charge('bob', 50, inMay);
    await charge('bob', 70, new Date('2031-06-01T00:00:00Z'));
    await charge('carol', 5, new Date('2031-04-30T23:59:59Z'));
    await returnJobCredits(db.db, { jobId: refunded, kind: 'refund', reason: 'failed' });

    const report = await usage(db.db, { guildId, since, until });
    expect(report).toEqual({
      jobs: 3,
      charged: 80,
      returned: 20,
      spent: 60,
      byMember: [
        { userId: 'bob', jobs: 1, charged: 50, returned: 0, spent: 50 },
        { userId: 'alice', jobs: 2, charged: 30, returned: 20, spent: 10 },
      ],
    });
    const alice = await usage(db.db, { guildId, userId: 'alice', since, until });
    expect(alice.byMember).toEqual([{ userId: 'alice', jobs: 2, charged: 30, returned: 20, spent: 10 }]);
    expect((await usage(db.db, { guildId, since })).spent).toBe(130);
  });
});

describe('verifyLedger', () => {
  it('finds a guild whose balance was changed outside the ledger', async () => {
    const healthy = await guildWith(db.db, 100);
    const tampered = await guildWith(db.db, 100);
    await reserveForJob(db.db, { guildId: tampered, jobId: randomUUID(), userId: 'u', amount: 30 });
    expect(await verifyLedger(db.db, tampered)).toEqual([]);

    await db.db.update(guilds).set({ balance: 1000 }).where(eq(guilds.id, tampered));
    expect(await verifyLedger(db.db, tampered)).toEqual([{ guildId: tampered, balance: 1000, ledgerSum: 70 }]);
    expect(await verifyLedger(db.db, healthy)).toEqual([]);
    const everywhere = await verifyLedger(db.db);
    expect(everywhere).toContainEqual({ guildId: tampered, balance: 1000, ledgerSum: 70 });
    expect(everywhere.map((mismatch) => mismatch.guildId)).not.toContain(healthy);

    // A guild with a balance but no ledger at all is also caught.
    const [row] = await db.db.insert(guilds).values({ id: `guild-${randomUUID()}`, balance: 5 }).returning();
    expect(await verifyLedger(db.db, row?.id)).toEqual([{ guildId: row?.id, balance: 5, ledgerSum: 0 }]);
  });
});
