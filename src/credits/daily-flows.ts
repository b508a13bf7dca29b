import { sql } from 'drizzle-orm';
import { executeNamed, type Executor } from '../db/client.js';

/** What credits are spent on, as the dashboard charts them: a persona's songs count as voice (`credit_flow_kind`, migration 0026). */
export const SPEND_KINDS = ['song', 'lyrics', 'video', 'download', 'upload', 'voice'] as const;
export type SpendKind = (typeof SPEND_KINDS)[number];

/** Where credits come from, as the dashboard charts them: subscriptions' allowances count as allowances. */
export const INCOMING_KINDS = ['grant', 'allowance', 'purchase'] as const;
export type IncomingKind = (typeof INCOMING_KINDS)[number];

export interface DayFlows {
  /** The UTC day, `YYYY-MM-DD`. */
  readonly day: string;
  /** Credits spent on each kind that day: charges net of what came back the same day or later for them. */
  readonly spent: Readonly<Record<SpendKind, number>>;
  /** Credits added that day, by where they came from. */
  readonly incoming: Readonly<Record<IncomingKind, number>>;
}

const zero = <K extends string>(keys: readonly K[]): Record<K, number> => Object.fromEntries(keys.map((key) => [key, 0])) as Record<K, number>;

/** The UTC days `[since, until)` as `YYYY-MM-DD`, oldest first. */
export function utcDays(since: Date, until: Date): string[] {
  const days: string[] = [];
  for (let at = since.getTime(); at < until.getTime(); at += 86_400_000) days.push(new Date(at).toISOString().slice(0, 10));
  return days;
}

/**
 * The guild's credits spent per UTC day and kind of job, and added per day and source, over
 * `[since, until)` (day starts), every day present (zeros where nothing moved). A job's return
 * counts against its charge's day, as `/credits` counts a month, so the days add up to the same
 * use. Reads the daily flows the ledger's triggers keep (migration 0026): 90 days are at most
 * 810 rows of one primary-key range, whatever the history. Until their online fill of the
 * history before that migration is recorded done, it counts the same from the ledger (the range
 * by (guild_id, created_at), each charge's job kind by the job's key, its returns by job_id); one
 * statement, which asks once whether the fill is done. The jobs table is read by its name, as
 * `history` reads it: its reads live in the pipeline, which imports credits.
 */
export async function dailyFlows(executor: Executor, query: { guildId: string; since: Date; until: Date }): Promise<DayFlows[]> {
  const from = query.since.toISOString().slice(0, 10);
  const to = query.until.toISOString().slice(0, 10);
  const { rows } = await executeNamed(
    executor,
    'daily_flows',
    sql`
    with filled as materialized (select credit_flows_filled() as done)
    select to_char(f.day, 'YYYY-MM-DD') as day, f.kind, (f.charged - f.returned)::bigint as amount
      from credit_flows_daily f
     where f.guild_id = ${query.guildId} and f.day >= ${from}::date and f.day < ${to}::date and (select done from filled)
    union all
    select to_char((l.created_at at time zone 'UTC')::date, 'YYYY-MM-DD'),
           case when l.kind = 'reserve' then credit_flow_kind(j.kind) when l.kind = 'subscription' then 'allowance' else l.kind end,
           sum(case when l.kind = 'reserve' then -l.amount - coalesce(back.amount, 0) else l.amount end)::bigint
      from credit_ledger l
      left join jobs j on l.kind = 'reserve' and j.id = l.job_id
      left join lateral (
        select sum(b.amount) as amount from credit_ledger b where l.kind = 'reserve' and b.job_id = l.job_id and b.kind in ('release', 'refund')
      ) back on true
     where l.guild_id = ${query.guildId} and l.created_at >= ${query.since.toISOString()}::timestamptz and l.created_at < ${query.until.toISOString()}::timestamptz
       and l.kind in ('reserve', 'grant', 'allowance', 'subscription', 'purchase') and not (select done from filled)
     group by 1, 2`,
  );
  const byDay = new Map(utcDays(query.since, query.until).map((day) => [day, { day, spent: zero(SPEND_KINDS), incoming: zero(INCOMING_KINDS) }]));
  for (const row of rows as Array<{ day: string; kind: string; amount: string }>) {
    const entry = byDay.get(row.day);
    if (!entry) continue;
    const amount = Number(row.amount);
    if ((SPEND_KINDS as readonly string[]).includes(row.kind)) entry.spent[row.kind as SpendKind] += amount;
    else if ((INCOMING_KINDS as readonly string[]).includes(row.kind)) entry.incoming[row.kind as IncomingKind] += amount;
  }
  return [...byDay.values()];
}
