import { randomUUID } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { dailyFlows, grant, guildUsage, reserveForJob, returnJobCredits, setFrozen, setLowBalanceAlert, utcMonthStart } from '../../../src/credits/index.js';
import { loadCharts } from '../../../src/dashboard/data/charts.js';
import { ledgerCsvStream, loadHistory, parseHistoryFilter } from '../../../src/dashboard/data/history.js';
import { loadOverview } from '../../../src/dashboard/data/overview.js';
import { creditLedger, jobs, type JobKind } from '../../../src/db/schema.js';
import { createTestDatabase } from '../../support/database.js';
import { guildWith } from '../credits/support.js';

const db = await createTestDatabase();
const DAY = 86_400_000;

/** A charged job of `kind`, its row and its charge dated `at`. */
async function chargedJob(guildId: string, kind: JobKind, amount: number, at: Date, userId = '111'): Promise<string> {
  const id = randomUUID();
  await db.db.insert(jobs).values({
    id, guildId, channelId: '1', userId, kind, request: { kind, prompt: 'a tune' }, state: kind === 'song' ? 'succeeded' : 'submitted', cost: amount, createdAt: at,
  });
  await reserveForJob(db.db, { guildId, jobId: id, userId, amount });
  await db.db.update(creditLedger).set({ createdAt: at }).where(eq(creditLedger.jobId, id));
  return id;
}

describe('the dashboard data', () => {
  it('charts each day\'s spend by kind (returns on the charge\'s day) beside what came in, adding up to the same use as /credits', async () => {
    const now = new Date();
    const today = new Date(Math.floor(now.getTime() / DAY) * DAY);
    const guildId = await guildWith(db.db, 1_000);
    const yesterday = new Date(today.getTime() - DAY + 3_600_000);
    await chargedJob(guildId, 'song', 10, yesterday, '111');
    const refunded = await chargedJob(guildId, 'lyrics', 4, yesterday, '222');
    await chargedJob(guildId, 'persona_song', 7, new Date(today.getTime() + 60_000), '222');
    await chargedJob(guildId, 'video', 3, new Date(today.getTime() + 60_000), '111');
    // Refunded today, for yesterday's charge: it counts against yesterday, as /credits counts it.
    await returnJobCredits(db.db, { jobId: refunded, kind: 'refund', reason: 'failed' });
    await grant(db.db, { guildId, amount: 50, actorId: '999', reason: 'thanks', key: `t-${randomUUID()}` });

    const charts = await loadCharts(db.db, guildId, now);
    expect(charts.flows).toHaveLength(90);
    const [before, last] = charts.flows.slice(-2);
    expect(before!.spent).toMatchObject({ song: 10, lyrics: 0, voice: 0, video: 0 });
    expect(last!.day).toBe(today.toISOString().slice(0, 10));
    expect(last!.spent).toMatchObject({ song: 0, lyrics: 0, voice: 7, video: 3 });
    expect(last!.incoming).toMatchObject({ grant: 1_050, allowance: 0, purchase: 0 });
    const charted = charts.flows.reduce((sum, day) => sum + Object.values(day.spent).reduce((a, b) => a + b, 0), 0);
    const since = new Date(today.getTime() - 89 * DAY);
    expect(charted).toBe((await guildUsage(db.db, { guildId, since })).spent);
    expect(charts.topMembers.map((member) => [member.userId, member.spent])).toEqual([['111', 13], ['222', 7]]);
    expect(charts.songs.at(-2)).toBe(1);

    // The triggers' running counts are what a count from the ledger gives.
    const flowsOf = async () =>
      (await db.db.execute<Record<string, unknown>>(sql`select day::text, kind, jobs, charged, returned from credit_flows_daily where guild_id = ${guildId} order by day, kind`)).rows;
    const kept = await flowsOf();
    expect(kept.length).toBeGreaterThan(3);
    await db.db.execute(sql`select credit_flows_recount_guild(${guildId}, '-infinity', 'infinity')`);
    expect(await flowsOf()).toEqual(kept);
    expect((await db.db.execute<{ done: boolean }>(sql`select credit_flows_filled() as done`)).rows[0]?.done).toBe(true);
    // Before the online fill is recorded, the same days come from the ledger.
    const since90 = new Date(today.getTime() - 89 * DAY);
    const fromLedger = await db.db
      .transaction(async (tx) => {
        await tx.execute(sql`delete from drizzle.__online_steps where name = '0010_credit_flows_backfill.sql'`);
        throw Object.assign(new Error('rollback'), { flows: await dailyFlows(tx, { guildId, since: since90, until: new Date(today.getTime() + DAY) }) });
      })
      .catch((error: { flows?: unknown }) => error.flows);
    expect(fromLedger).toEqual(charts.flows);
    expect(charts.songs.reduce((a, b) => a + b, 0)).toBe(1);
  });

  it('gives the overview the same balance and month as /credits, the pace, the alert and the freeze', async () => {
    const now = new Date();
    const guildId = await guildWith(db.db, 300);
    await chargedJob(guildId, 'song', 60, new Date(now.getTime() - 1_000));
    await setLowBalanceAlert(db.db, { guildId, channelId: '555', below: 250, actorId: '999' });
    let overview = await loadOverview(db.db, guildId, now);
    const month = await guildUsage(db.db, { guildId, since: utcMonthStart(now) });
    expect(overview).toMatchObject({ balance: 240, frozen: false, allowance: 0, month: { spent: month.spent, jobs: 1 }, alert: { state: 'below', below: 250, channelId: '555' } });
    expect(month.spent).toBe(60);
    // 60 credits over 30 days and part of today: the 240 left last 120 to 124 days, to the start of that day.
    const daysLeft = (overview!.runsOutOn!.getTime() - now.getTime()) / DAY;
    expect(daysLeft).toBeGreaterThan(119);
    expect(daysLeft).toBeLessThan(124);
    await setFrozen(db.db, { guildId, frozen: true, actorId: '999' });
    overview = await loadOverview(db.db, guildId, now);
    expect(overview?.frozen).toBe(true);
    expect(await loadOverview(db.db, `guild-${randomUUID()}`, now)).toBeNull();
    const quiet = await guildWith(db.db, 10);
    expect(await loadOverview(db.db, quiet, now)).toMatchObject({ runsOutOn: null, pacePerDay: 0, alert: { state: 'off' } });
  });

  it('filters the history by kind, member and dates, paging within the filter', async () => {
    const now = new Date();
    const guildId = await guildWith(db.db, 1_000);
    const old = new Date(now.getTime() - 10 * DAY);
    for (let i = 0; i < 4; i += 1) await chargedJob(guildId, 'song', 1, old, '111');
    for (let i = 0; i < 3; i += 1) await chargedJob(guildId, 'song', 1, new Date(now.getTime() - 1_000), i === 0 ? '222' : '111');

    const parsed = (query: Record<string, string>) => {
      const result = parseHistoryFilter(query);
      expect(result.badFields).toEqual([]);
      return result.filter;
    };
    const spent = await loadHistory(db.db, guildId, parsed({ kind: 'reserve', member: '', from: '', to: '' }));
    expect(spent.entries).toHaveLength(7);
    expect(spent.entries.every((entry) => entry.kind === 'reserve' && entry.jobKind === 'song')).toBe(true);
    expect((await loadHistory(db.db, guildId, parsed({ kind: 'grant' }))).entries.map((entry) => entry.amount)).toEqual([1_000]);
    expect((await loadHistory(db.db, guildId, parsed({ member: '222' }))).entries).toHaveLength(1);
    const oldDay = old.toISOString().slice(0, 10);
    const onOldDay = await loadHistory(db.db, guildId, parsed({ from: oldDay, to: oldDay }));
    expect(onOldDay.entries).toHaveLength(4);
    expect(onOldDay.entries.every((entry) => entry.createdAt.toISOString().slice(0, 10) === oldDay)).toBe(true);
    const untilOld = await loadHistory(db.db, guildId, parsed({ to: oldDay, kind: 'reserve', member: '111' }));
    expect(untilOld.entries).toHaveLength(4);

    expect(parseHistoryFilter({ member: '<script>', from: 'yesterday', kind: 'grant' })).toEqual({ filter: { kind: 'grant' }, badFields: ['member', 'from'] });
  });

  it('streams the same CSV as /credits-admin history and leaves no file behind', async () => {
    const guildId = await guildWith(db.db, 1_000);
    await chargedJob(guildId, 'song', 5, new Date(), '111');
    const stream = await ledgerCsvStream(db.db, guildId, undefined);
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    const lines = Buffer.concat(chunks).toString('utf8').trim().split(/\r?\n/);
    expect(lines).toHaveLength(3);
    expect(lines[1]).toContain('reserve');
    expect(lines[2]).toContain('grant');
    const { rows } = await db.db.execute<{ n: number }>(sql`select count(*)::int as n from credit_ledger where guild_id = ${guildId}`);
    expect(rows[0]?.n).toBe(2);
  });
});
