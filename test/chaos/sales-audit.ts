/**
 * What the purchases scenario audits beside the packs (world.ts): the monthly allowances, counted
 * per server and month from the ledger, and the owners' sales report set against the ledger.
 */
import { drizzle } from 'drizzle-orm/node-postgres';
import type pg from 'pg';
import * as schema from '../../src/db/schema.js';
import { salesReport } from '../../src/premium/sales.js';

export interface AllowanceAudit {
  /** Server-months with allowance credits (the owners' or a subscription's). */
  readonly serverMonths: number;
  /** Those credits, all server-months together. */
  readonly credits: number;
  /** Credits a server-month got above the largest allowance live in it (each server gets one floor a month). */
  readonly over: number;
  readonly details: string[];
}

/**
 * The allowance credits of each server and month (the month in the movement's key: the floor
 * `allowance:<guild>:<month>`, a subscription's raise `entitlement:<id>:<month>`), against the
 * largest allowance that month could give: the owners', or a subscription's that was live in it.
 */
export async function auditAllowances(db: pg.Pool): Promise<AllowanceAudit> {
  const { rows } = await db.query<{ guild_id: string; month: string; credits: number; movements: number; largest: number }>(`
    with given as (
      select guild_id, substring(key from '(\\d{4}-\\d{2})$') as month, sum(amount)::int as credits, count(*)::int as movements
      from credit_ledger where kind in ('allowance', 'subscription') group by 1, 2
    )
    select given.*, greatest(g.monthly_allowance, coalesce((
      select max(e.credits) from entitlements e
      where e.guild_id = given.guild_id and e.kind = 'subscription'
        and (e.starts_at is null or e.starts_at < (to_date(given.month, 'YYYY-MM') + interval '1 month'))
        and (e.ends_at is null or e.ends_at > to_date(given.month, 'YYYY-MM'))
    ), 0))::int as largest
    from given join guilds g on g.id = given.guild_id
    order by given.guild_id, given.month`);
  const details: string[] = [];
  let over = 0;
  for (const row of rows) {
    if (row.credits <= row.largest) continue;
    over += row.credits - row.largest;
    details.push(`allowance: guild ${row.guild_id} got ${row.credits} allowance credits in ${row.month} (${row.movements} movements), above its largest allowance, ${row.largest}`);
  }
  return { serverMonths: rows.length, credits: rows.reduce((sum, row) => sum + row.credits, 0), over, details };
}

/**
 * The owners' sales report of the month of `now` against the ledger: the subscriptions' credits
 * are the month's `subscription` movements; the packs', the `purchase` movements of the month's
 * packs plus those of its packs in no server (waiting, or refunded before a claim); the refunds'
 * credits taken back, the `reversal` movements of the entitlements refunded in the month.
 * `off` sums the differences.
 */
export async function auditSalesReport(db: pg.Pool, now: Date = new Date()): Promise<{ readonly off: number; readonly details: string[] }> {
  const report = await salesReport(drizzle(db, { schema }), now);
  const { rows } = await db.query<{ subscriptions: number; packs: number; unclaimed: number; taken: number }>(
    `select
       (select coalesce(sum(amount), 0) from credit_ledger where kind = 'subscription' and created_at >= $1 and created_at < $2)::int as subscriptions,
       (select coalesce(sum(l.amount), 0) from credit_ledger l join entitlements e on l.key = 'entitlement:' || e.id
         where l.kind = 'purchase' and e.created_at >= $1 and e.created_at < $2)::int as packs,
       (select coalesce(sum(credits), 0) from entitlements where kind = 'pack' and claimed_at is null and created_at >= $1 and created_at < $2)::int as unclaimed,
       (select coalesce(-sum(l.amount), 0) from credit_ledger l join entitlements e on l.key = 'entitlement:' || e.id || ':reversal'
         where l.kind = 'reversal' and e.deleted_at >= $1 and e.deleted_at < $2)::int as taken`,
    [report.since, report.until],
  );
  const ledger = rows[0]!;
  const details: string[] = [];
  const compare = (what: string, reported: number, recorded: number) => {
    if (reported !== recorded) details.push(`sales report: ${what} ${reported}, the ledger says ${recorded}`);
    return Math.abs(reported - recorded);
  };
  const off =
    compare('subscription credits', report.subscriptions.credits, ledger.subscriptions) +
    compare('pack credits', report.packs.credits, ledger.packs + ledger.unclaimed) +
    compare('credits taken back by refunds', report.refunds.taken, ledger.taken) +
    compare('credits sold', report.sold, ledger.packs + ledger.unclaimed + ledger.subscriptions);
  return { off, details };
}
