/**
 * The daily usage summaries (`credit_usage_member`, `credit_usage_guild`) that `usage` and
 * `guildUsage` read: kept by triggers on `credit_ledger`, they equal a recount from the ledger
 * after a storm of grouped and single charges, releases and refunds on several guilds at once,
 * after backdating and deleting, and from the moment the migration runs under live traffic.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { grant, guildUsage, reserveForJob, returnJobCredits, usage, utcMonthStart, verifyLedger } from '../../../src/credits/index.js';
import type { Executor } from '../../../src/db/client.js';
import { runMigrations } from '../../../src/db/migrate.js';
import { committedMigrationTags, createTestDatabase } from '../../support/database.js';
import { guildWith } from './support.js';

const test = await createTestDatabase();
const db = test.db;

/** The summaries against the same sums taken from the ledger itself, every member day. */
async function expectSummariesMatchLedger(executor: Executor): Promise<number> {
  const { rows } = await executor.execute<{ source: string; guild_id: string; user_id: string; day: string; jobs: number; charged: number; returned: number }>(sql`
    with recount as (
      select r.guild_id, coalesce(r.user_id, '') as user_id, (r.created_at at time zone 'UTC')::date as day,
        count(*)::int as jobs, sum(-r.amount)::int as charged, coalesce(sum(back.amount), 0)::int as returned
      from credit_ledger r
      left join lateral (select sum(b.amount) as amount from credit_ledger b where b.job_id = r.job_id and b.kind in ('release', 'refund')) back on true
      where r.kind = 'reserve'
      group by 1, 2, 3
    ), kept as (
      select guild_id, user_id, day, jobs, charged::int, returned::int from credit_usage_member where jobs > 0 or charged <> 0 or returned <> 0
    ), guild_recount as (
      select guild_id, day, sum(jobs)::int as jobs, sum(charged)::int as charged, sum(returned)::int as returned from recount group by 1, 2
    ), guild_kept as (
      select guild_id, day, jobs, charged::int, returned::int from credit_usage_guild where jobs > 0 or charged <> 0 or returned <> 0
    )
    (select 'missing from the summary' as source, guild_id, user_id, day::text, jobs, charged, returned from (select * from recount except select * from kept) a)
    union all
    (select 'not in the ledger', guild_id, user_id, day::text, jobs, charged, returned from (select * from kept except select * from recount) b)
    union all
    (select 'guild missing', guild_id, '', day::text, jobs, charged, returned from (select * from guild_recount except select * from guild_kept) c)
    union all
    (select 'guild not in the ledger', guild_id, '', day::text, jobs, charged, returned from (select * from guild_kept except select * from guild_recount) d)`);
  expect(rows).toEqual([]);
  const { rows: counted } = await executor.execute<{ n: number }>(sql`select count(*)::int as n from credit_usage_member`);
  return counted[0]!.n;
}

describe('usage summaries', () => {
  it('equal a recount of the ledger through a storm of grouped charges, releases and refunds', async () => {
    const guildIds = [await guildWith(db, 100_000), await guildWith(db, 100_000), await guildWith(db, 100_000)];
    const members = ['alice', 'bob', 'carol', 'dave'];
    const charged: Array<{ jobId: string }> = [];
    // Many charges per guild at once: the reservation lanes group them into shared statements.
    const charges = Array.from({ length: 240 }, async (_, i) => {
      const jobId = randomUUID();
      const result = await reserveForJob(db, { guildId: guildIds[i % 3]!, jobId, userId: members[i % 4]!, amount: 1 + (i % 7) });
      if (result.ok) charged.push({ jobId });
      // A fifth come back, as releases or refunds, while other charges still go.
      if (i % 5 === 0) await returnJobCredits(db, { jobId, kind: i % 2 === 0 ? 'release' : 'refund', reason: 'storm' });
    });
    await Promise.all(charges);
    // A second return of the same job moves nothing, and must count nothing.
    await returnJobCredits(db, { jobId: charged[0]!.jobId, kind: 'refund', reason: 'twice' });
    await grant(db, { guildId: guildIds[0]!, amount: 5, key: `usage-test-grant-${randomUUID()}`, actorId: 'mod' });

    expect(charged).toHaveLength(240);
    expect(await expectSummariesMatchLedger(db)).toBeGreaterThanOrEqual(12);
    expect(await verifyLedger(db)).toEqual([]);

    // What the commands read agrees with the summaries: the guild's month is its members' month.
    const since = utcMonthStart(new Date());
    for (const guildId of guildIds) {
      const report = await usage(db, { guildId, since });
      const totals = await guildUsage(db, { guildId, since });
      expect(report.jobs).toBe(80);
      expect({ jobs: totals.jobs, charged: totals.charged, returned: totals.returned, spent: totals.spent }).toEqual({
        jobs: report.jobs,
        charged: report.charged,
        returned: report.returned,
        spent: report.spent,
      });
      expect(totals.returned).toBeGreaterThan(0);
    }
  });

  it('follow a charge backdated to another day and a deleted movement', async () => {
    const guildId = await guildWith(db, 1000);
    const jobId = randomUUID();
    await reserveForJob(db, { guildId, jobId, userId: 'erin', amount: 40 });
    await returnJobCredits(db, { jobId, kind: 'refund', reason: 'failed' });
    // One statement moves the charge and its refund to another month (as the report tests do).
    await db.execute(sql`update credit_ledger set created_at = '2031-03-10T12:00:00Z' where job_id = ${jobId}`);
    await expectSummariesMatchLedger(db);
    const march = await usage(db, { guildId, userId: 'erin', since: new Date('2031-03-01T00:00:00Z'), until: new Date('2031-04-01T00:00:00Z') });
    expect(march).toMatchObject({ jobs: 1, charged: 40, returned: 40, spent: 0 });
    expect((await guildUsage(db, { guildId, since: utcMonthStart(new Date()), until: new Date('2031-03-01T00:00:00Z') })).jobs).toBe(0);

    // A repair that deletes the refund: the charge counts in full again.
    await db.execute(sql`delete from credit_ledger where job_id = ${jobId} and kind = 'refund'`);
    await expectSummariesMatchLedger(db);
    expect(await guildUsage(db, { guildId, since: new Date('2031-03-01T00:00:00Z'), until: new Date('2031-04-01T00:00:00Z') })).toEqual({
      jobs: 1,
      charged: 40,
      returned: 0,
      spent: 40,
    });
  });

  it('refuses a range that does not start and end on UTC days', async () => {
    const guildId = await guildWith(db, 10);
    await expect(usage(db, { guildId, since: new Date('2031-03-01T10:00:00Z') })).rejects.toThrow(/whole UTC days/);
    await expect(guildUsage(db, { guildId, since: new Date('2031-03-01T00:00:00Z'), until: new Date('2031-03-02T00:00:01Z') })).rejects.toThrow(/until/);
  });

  it('start exact when the migration runs while charges and refunds go on', async () => {
    const before = await createTestDatabase({ migrations: committedMigrationTags().indexOf('0011_usage_summaries') });
    const guildIds = [await guildWith(before.db, 1_000_000), await guildWith(before.db, 1_000_000)];
    const charge = async (i: number) => {
      const jobId = randomUUID();
      await reserveForJob(before.db, { guildId: guildIds[i % 2]!, jobId, userId: `member-${i % 5}`, amount: 3 });
      if (i % 4 === 0) await returnJobCredits(before.db, { jobId, kind: 'refund', reason: 'failed' });
    };
    // History from before the upgrade, over several days.
    for (let i = 0; i < 200; i += 1) await charge(i);
    await before.db.execute(sql`update credit_ledger set created_at = created_at - (id % 9) * interval '1 day'`);

    // The previous release keeps charging while the new one migrates.
    let migrated = false;
    let chargesAfter = 0;
    let n = 1000;
    const charger = async () => {
      while (chargesAfter < 60) {
        await charge((n += 1));
        if (migrated) chargesAfter += 1;
      }
    };
    const chargers = [charger(), charger(), charger()];
    await runMigrations(before.url);
    migrated = true;
    await Promise.all(chargers);

    expect(await expectSummariesMatchLedger(before.db)).toBeGreaterThan(10);
    const all = await usage(before.db, { guildId: guildIds[0]!, since: new Date('2000-01-01T00:00:00Z') });
    const { rows } = await before.db.execute<{ n: number }>(sql`select count(*)::int as n from credit_ledger where guild_id = ${guildIds[0]!} and kind = 'reserve'`);
    expect(all.jobs).toBe(rows[0]!.n);
  });
});
