import { and, eq, sql } from 'drizzle-orm';
import type { Database } from '../../src/db/client.js';
import { creditLedger, guilds, jobs } from '../../src/db/schema.js';

export async function ledgerOfJob(db: Database, jobId: string) {
  return db
    .select({ kind: creditLedger.kind, amount: creditLedger.amount, key: creditLedger.key })
    .from(creditLedger)
    .where(eq(creditLedger.jobId, jobId))
    .orderBy(creditLedger.id);
}

export async function balanceOf(db: Database, guildId: string): Promise<number> {
  const [row] = await db.select({ balance: guilds.balance }).from(guilds).where(eq(guilds.id, guildId));
  return row?.balance ?? Number.NaN;
}

/** The balance must always equal the sum of the guild's ledger. */
export async function ledgerSum(db: Database, guildId: string): Promise<number> {
  const [row] = await db
    .select({ sum: sql<number>`coalesce(sum(${creditLedger.amount}), 0)::int` })
    .from(creditLedger)
    .where(eq(creditLedger.guildId, guildId));
  return row?.sum ?? Number.NaN;
}

export async function jobRow(db: Database, jobId: string) {
  const [row] = await db.select().from(jobs).where(and(eq(jobs.id, jobId)));
  return row;
}

/**
 * Writes `count` movements for `guildId` in one set-based statement (as test/bench/history-seed.ts
 * does), continuing the guild's chain: each `balance_after` is the running sum, and the guild's
 * balance ends as its ledger's sum, so `verifyLedger` holds; then the table is analyzed. Reasons carry what CSV must quote
 * (commas, quotes, line breaks, a formula's `=`); every 97th row is `otherUserId`'s.
 */
export async function seedMovements(
  pool: { query(text: string, values?: unknown[]): Promise<unknown> },
  guildId: string,
  count: number,
  options: { userId?: string; otherUserId?: string; tag?: string } = {},
): Promise<void> {
  const tag = options.tag ?? `bulk-${Date.now()}`;
  await pool.query(
    `with base as (select coalesce(sum(amount), 0)::int as total from credit_ledger where guild_id = $1)
     insert into credit_ledger (guild_id, key, kind, amount, balance_after, job_id, user_id, actor_id, reason, created_at)
     select $1, $3 || ':' || i, m.kind, m.amount, (select total from base) + sum(m.amount) over (order by i)::int,
            case when m.kind in ('reserve', 'release') then md5($3 || ':' || i)::uuid end,
            case when m.kind in ('reserve', 'release') then (case when i % 97 = 0 then $5 else $4 end) end,
            case when m.kind = 'grant' then 'moderator' end,
            case when m.kind = 'grant' then (array['a gift, with "quotes"', e'two\\r\\nlines', '=1+1', 'für die Band ♪'])[1 + i % 4] end,
            now() - interval '1 second' * ($2 - i)
       from generate_series(1, $2::int) i
       cross join lateral (select (array['reserve', 'reserve', 'release', 'grant'])[1 + i % 4] as kind) k
       cross join lateral (select k.kind, case k.kind when 'reserve' then -3 when 'release' then 2 else 5 end as amount) m`,
    [guildId, count, tag, options.userId ?? 'member-a', options.otherUserId ?? 'member-b'],
  );
  await pool.query('update guilds set balance = (select sum(amount)::int from credit_ledger where guild_id = $1) where id = $1', [guildId]);
  // What autovacuum does after a bulk write: without statistics the planner takes the guild for a few rows.
  await pool.query('analyze credit_ledger');
}
