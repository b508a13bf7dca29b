/**
 * The daily usage summaries (`credit_usage_member`, `credit_usage_guild`) that `usage` and
 * `guildUsage` read: kept by triggers on `credit_ledger`, they equal a recount from the ledger
 * after a storm of grouped and single charges, releases and refunds on several guilds at once,
 * after backdating and deleting, and once the migration and its online fill have run under live
 * traffic, which goes on while the fill runs.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { describe, expect, it, vi } from 'vitest';
import { grant, guildUsage, reserveForJob, returnJobCredits, usage, utcMonthStart, verifyLedger } from '../../../src/credits/index.js';
import type { Executor } from '../../../src/db/client.js';
import { committedMigrationTags, createTestDatabase, migrateTo } from '../../support/database.js';
import { guildOnEarlierSchema, guildWith } from './support.js';

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

    // What the commands read agrees with the summaries: the guild's month is its members' month,
    // from the month of the first charge (the ledger's clock, which may have passed midnight since).
    const { rows: first } = await db.execute<{ month: string }>(
      sql`select to_char(min(created_at) at time zone 'UTC', 'YYYY-MM') as month from credit_ledger where kind = 'reserve' and guild_id in ${guildIds}`,
    );
    const since = new Date(`${first[0]!.month}-01T00:00:00Z`);
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
    // The UTC day the ledger dated the charge: it counts there until it is moved.
    const { rows: charged } = await db.execute<{ day: string }>(
      sql`select (created_at at time zone 'UTC')::date::text as day from credit_ledger where job_id = ${jobId} and kind = 'reserve'`,
    );
    const dayStart = new Date(`${charged[0]!.day}T00:00:00Z`);
    const chargeDay = { since: dayStart, until: new Date(dayStart.getTime() + 86_400_000) };
    expect((await guildUsage(db, { guildId, ...chargeDay })).jobs).toBe(1);
    // One statement moves the charge and its refund to another month, long past (as the report tests do).
    await db.execute(sql`update credit_ledger set created_at = '2021-03-10T12:00:00Z' where job_id = ${jobId}`);
    await expectSummariesMatchLedger(db);
    const march = await usage(db, { guildId, userId: 'erin', since: new Date('2021-03-01T00:00:00Z'), until: new Date('2021-04-01T00:00:00Z') });
    expect(march).toMatchObject({ jobs: 1, charged: 40, returned: 40, spent: 0 });
    expect((await guildUsage(db, { guildId, ...chargeDay })).jobs).toBe(0);

    // A repair that deletes the refund: the charge counts in full again.
    await db.execute(sql`delete from credit_ledger where job_id = ${jobId} and kind = 'refund'`);
    await expectSummariesMatchLedger(db);
    expect(await guildUsage(db, { guildId, since: new Date('2021-03-01T00:00:00Z'), until: new Date('2021-04-01T00:00:00Z') })).toEqual({
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

  it('are read by a report that asks once whether the fill is done', async () => {
    const guildId = await guildWith(db, 10);
    const since = utcMonthStart(new Date());
    const undo = new Error('undo the counting function');
    const asked = await db
      .transaction(async (tx) => {
        // The same answer as the migration's function, counting its calls in a sequence.
        await tx.execute(sql`create temporary sequence usage_filled_asked`);
        await tx.execute(sql.raw(`
          create or replace function credit_usage_filled() returns boolean language plpgsql volatile as $$
          begin
            perform nextval('usage_filled_asked');
            return exists (select 1 from drizzle.__online_steps where name = '0006_credit_usage_backfill.sql');
          end $$`));
        await usage(tx, { guildId, since });
        await guildUsage(tx, { guildId, since });
        const { rows } = await tx.execute<{ n: string }>(sql`select last_value as n from usage_filled_asked`);
        throw Object.assign(undo, { asked: Number(rows[0]!.n) });
      })
      .catch((error: unknown) => (error === undo ? (undo as Error & { asked: number }).asked : Promise.reject(error)));
    expect(asked).toBe(2);
    const { rows } = await db.execute<{ volatility: string }>(sql`select provolatile as volatility from pg_proc where proname = 'credit_usage_filled'`);
    expect(rows).toEqual([{ volatility: 's' }]);
  });

  it('start exact when the migration and its online fill run while charges and refunds go on, which never wait for the fill', async () => {
    const before = await createTestDatabase({ migrations: committedMigrationTags().indexOf('0011_usage_summaries') });
    const created = [await guildOnEarlierSchema(before.db, 1_000_000), await guildOnEarlierSchema(before.db, 1_000_000), await guildOnEarlierSchema(before.db, 1_000_000)];
    // The fill goes through the guilds in the database's order: the middle one is held below.
    const { rows: ordered } = await before.db.execute<{ id: string }>(sql`select id from guilds where id in ${created} order by id`);
    const [first, held, last] = ordered.map((row) => row.id) as [string, string, string];
    const charge = async (guildId: string, i: number) => {
      const jobId = randomUUID();
      await reserveForJob(before.db, { guildId, jobId, userId: `member-${i % 5}`, amount: 3 });
      if (i % 4 === 0) await returnJobCredits(before.db, { jobId, kind: 'refund', reason: 'failed' });
    };
    // History from before the upgrade, over several days.
    for (let i = 0; i < 210; i += 1) await charge(ordered[i % 3]!.id, i);
    await before.db.execute(sql`update credit_ledger set created_at = created_at - (id % 9) * interval '1 day'`);

    // A transaction holds the middle guild's row, as a long movement would: the fill waits there.
    const holder = await before.pool.connect();
    await holder.query('begin');
    await holder.query('select 1 from guilds where id = $1 for no key update', [held]);
    const { rows: holderRows } = await holder.query<{ pid: number }>('select pg_backend_pid() as pid');

    // The previous release keeps charging the other two guilds while the new one migrates and fills.
    let n = 1000;
    let stop = false;
    const done = [0, 0, 0];
    const writer = async (w: number, guildId: string) => {
      while (!stop) {
        await charge(guildId, (n += 1));
        done[w]! += 1;
      }
    };
    const writers = [writer(0, first), writer(1, last), writer(2, first)];
    // The release that brought the summaries: later migrations take other locks, which are not this test's subject.
    const migrating = migrateTo(before.url, committedMigrationTags().indexOf('0012_usage_backfill') + 1, { online: '0006_credit_usage_backfill.sql' });
    try {
      // The fill has reached the held guild (so the first is filled, the last not yet)…
      await vi.waitFor(
        async () => {
          const { rows } = await before.db.execute<{ n: number }>(
            sql`select count(*)::int as n from pg_stat_activity where query ilike 'CALL credit_usage_backfill%' and ${holderRows[0]!.pid}::int = any(pg_blocking_pids(pid))`,
          );
          expect(rows[0]!.n).toBe(1);
        },
        { timeout: 30_000, interval: 20 },
      );
      // …and while it is under way, every writer keeps completing movements.
      const whenReached = [...done];
      await expect.poll(() => done.every((count, w) => count >= whenReached[w]! + 10), { timeout: 30_000 }).toBe(true);

      // The held guild's summaries have only what moved since the migration (nothing): usage counts from the ledger meanwhile.
      const { rows: heldCharges } = await before.db.execute<{ n: number }>(sql`select count(*)::int as n from credit_ledger where guild_id = ${held} and kind = 'reserve'`);
      const { rows: heldKept } = await before.db.execute<{ n: number }>(sql`select count(*)::int as n from credit_usage_member where guild_id = ${held}`);
      expect(heldKept[0]!.n).toBe(0);
      expect((await usage(before.db, { guildId: held, since: new Date('2000-01-01T00:00:00Z') })).jobs).toBe(heldCharges[0]!.n);
      expect((await guildUsage(before.db, { guildId: held, since: new Date('2000-01-01T00:00:00Z') })).jobs).toBe(heldCharges[0]!.n);
    } finally {
      await holder.query('commit');
      holder.release();
    }
    await migrating;
    // Some more movements after the fill, then the writers stop.
    const whenFilled = [...done];
    await expect.poll(() => done.every((count, w) => count >= whenFilled[w]! + 10), { timeout: 30_000 }).toBe(true);
    stop = true;
    await Promise.all(writers);

    expect(await expectSummariesMatchLedger(before.db)).toBeGreaterThan(10);
    const { rows: filled } = await before.db.execute<{ filled: boolean }>(sql`select credit_usage_filled() as filled`);
    expect(filled[0]!.filled).toBe(true);
    for (const guildId of ordered.map((row) => row.id)) {
      const all = await usage(before.db, { guildId, since: new Date('2000-01-01T00:00:00Z') });
      const { rows } = await before.db.execute<{ n: number }>(sql`select count(*)::int as n from credit_ledger where guild_id = ${guildId} and kind = 'reserve'`);
      expect(all.jobs).toBe(rows[0]!.n);
    }
  });

  it('are filled a slice of days at a time, and a second fill changes nothing', async () => {
    const guildId = await guildWith(db, 10_000);
    for (let i = 0; i < 30; i += 1) {
      const jobId = randomUUID();
      await reserveForJob(db, { guildId, jobId, userId: `member-${i % 3}`, amount: 2 });
      if (i % 3 === 0) await returnJobCredits(db, { jobId, kind: 'release', reason: 'cancelled' });
    }
    await db.execute(sql`update credit_ledger set created_at = created_at - (id % 11) * interval '1 day' where guild_id = ${guildId}`);
    const kept = sql`select guild_id, user_id, day::text, jobs, charged::int, returned::int from credit_usage_member where guild_id = ${guildId} order by 1, 2, 3`;
    const { rows: exact } = await db.execute(kept);
    // Summaries gone wrong (emptied, and a stray day): slices of two charges, then of the default size.
    await db.execute(sql`delete from credit_usage_member where guild_id = ${guildId}`);
    await db.execute(sql`insert into credit_usage_member values (${guildId}, 'nobody', '2001-01-01', 1, 1, 0)`);
    await db.execute(sql`call credit_usage_backfill(2)`);
    expect((await db.execute(kept)).rows).toEqual(exact);
    await expectSummariesMatchLedger(db);
    await db.execute(sql`call credit_usage_backfill()`);
    expect((await db.execute(kept)).rows).toEqual(exact);
  });
});
