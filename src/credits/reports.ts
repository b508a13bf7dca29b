import { and, asc, desc, eq, gt, gte, inArray, lt, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { creditLedger, creditUsageGuild, creditUsageMember, type JobKind, type LedgerKind } from '../db/schema.js';
import type { LedgerEntry } from './ledger.js';
import { utcDay } from './periods.js';

export interface UsageQuery {
  readonly guildId: string;
  /** Only this member's usage; all members, one row each, when absent. */
  readonly userId?: string;
  /** Inclusive; the start of a UTC day. */
  readonly since: Date;
  /** Exclusive, the start of a UTC day; no end when absent. */
  readonly until?: Date;
}

export interface UsageTotals {
  /** Jobs charged in the range. */
  readonly jobs: number;
  /** What those jobs were charged. */
  readonly charged: number;
  /** What was given back for those jobs (releases and refunds), whenever it was given. */
  readonly returned: number;
  /** `charged - returned`. */
  readonly spent: number;
}

export interface MemberUsage extends UsageTotals {
  readonly userId: string;
}

export interface UsageReport extends UsageTotals {
  /** Highest spender first. */
  readonly byMember: MemberUsage[];
}

/** The UTC days `[since, until)` as `date` strings; the instants must be day starts. */
function dayRange(query: { since: Date; until?: Date }): { from: string; to?: string } {
  const day = (at: Date, name: string) => {
    if (at.getTime() % 86_400_000 !== 0) throw new RangeError(`usage counts whole UTC days: ${name} ${at.toISOString()} is not a day's start`);
    return at.toISOString().slice(0, 10);
  };
  return { from: day(query.since, 'since'), ...(query.until && { to: day(query.until, 'until') }) };
}

/**
 * The usage rows of `[since, until)`: the daily summaries the ledger's triggers keep, or, until
 * their online fill of the history before migration 0011 is recorded done (`credit_usage_filled()`),
 * one row per charge read from the ledger, with what came back for its job. One statement, which
 * asks once whether the fill is done: the branch not taken is never run. Why: docs/decisions/usage-summaries.md
 */
function usageRows(query: UsageQuery, columns: { summaries: SQL; ledger: SQL }, table: 'member' | 'guild'): SQL {
  const { from, to } = dayRange(query);
  const summaries = table === 'member' ? creditUsageMember : creditUsageGuild;
  const member = query.userId;
  const filled = sql`(select done from filled)`;
  return sql`
    with filled as materialized (select credit_usage_filled() as done)
    select ${columns.summaries} from ${summaries} u
    where u.guild_id = ${query.guildId} and u.day >= ${from}::date ${to === undefined ? sql`` : sql`and u.day < ${to}::date`}
      ${member === undefined ? sql`` : sql`and u.user_id = ${member}`}
      and ${filled}
    union all
    select ${columns.ledger} from credit_ledger r
    cross join lateral (
      select sum(b.amount)::bigint as amount from credit_ledger b where b.job_id = r.job_id and b.kind in ('release', 'refund')
    ) back
    where r.guild_id = ${query.guildId} and r.kind = 'reserve'
      and r.created_at >= ${query.since.toISOString()}::timestamptz ${query.until === undefined ? sql`` : sql`and r.created_at < ${query.until.toISOString()}::timestamptz`}
      ${member === undefined ? sql`` : member === '' ? sql`and r.user_id is null` : sql`and r.user_id = ${member}`}
      and not ${filled}`;
}

/**
 * Credits spent on jobs charged within `[since, until)`, net of what came back for those
 * same jobs. A refund counts against its job's charge, not against the day it happened, so a
 * late refund for yesterday's job does not make room under today's cap. Reads the daily
 * summaries the ledger's triggers keep: a member's month is at most 31 rows, whatever the history.
 */
export async function usage(executor: Executor, query: UsageQuery): Promise<UsageReport> {
  const rowsOf = usageRows(
    query,
    {
      summaries: sql`u.user_id, u.jobs, u.charged, u.returned`,
      ledger: sql`coalesce(r.user_id, ''), 1, -r.amount::bigint, coalesce(back.amount, 0)`,
    },
    'member',
  );
  const { rows } = await executor.execute<{ user_id: string; jobs: string; charged: string; returned: string }>(sql`
    select user_id, sum(jobs) as jobs, sum(charged) as charged, sum(returned) as returned
    from (${rowsOf}) t (user_id, jobs, charged, returned)
    group by user_id`);

  const byMember = rows
    .map((row) => {
      const [jobs, charged, returned] = [Number(row.jobs), Number(row.charged), Number(row.returned)];
      return { userId: row.user_id, jobs, charged, returned, spent: charged - returned };
    })
    .sort((a, b) => b.spent - a.spent || a.userId.localeCompare(b.userId));
  const total = (pick: (member: MemberUsage) => number) => byMember.reduce((sum, member) => sum + pick(member), 0);
  return {
    jobs: total((member) => member.jobs),
    charged: total((member) => member.charged),
    returned: total((member) => member.returned),
    spent: total((member) => member.spent),
    byMember,
  };
}

/** The guild's usage over `[since, until)`, all members together: one row per day read, however many members. */
export async function guildUsage(executor: Executor, query: Omit<UsageQuery, 'userId'>): Promise<UsageTotals> {
  const rowsOf = usageRows(
    query,
    { summaries: sql`u.jobs, u.charged, u.returned`, ledger: sql`1, -r.amount::bigint, coalesce(back.amount, 0)` },
    'guild',
  );
  const { rows } = await executor.execute<{ jobs: string; charged: string; returned: string }>(sql`
    select coalesce(sum(jobs), 0) as jobs, coalesce(sum(charged), 0) as charged, coalesce(sum(returned), 0) as returned
    from (${rowsOf}) t (jobs, charged, returned)`);
  const [jobs, charged, returned] = [Number(rows[0]?.jobs ?? 0), Number(rows[0]?.charged ?? 0), Number(rows[0]?.returned ?? 0)];
  return { jobs, charged, returned, spent: charged - returned };
}

/** What a member spent on jobs charged during the UTC day of `now`, net of refunds and releases. */
export async function spentToday(
  executor: Executor,
  query: { guildId: string; userId: string; now?: Date },
): Promise<number> {
  const { start, end } = utcDay(query.now ?? new Date());
  const report = await usage(executor, { guildId: query.guildId, userId: query.userId, since: start, until: end });
  return report.spent;
}

export interface HistoryQuery {
  readonly guildId: string;
  /** Only movements of this member's usage (their jobs' charges and returns). */
  readonly userId?: string;
  /**
   * Page size, clamped to 1–500.
   * @defaultValue 20
   */
  readonly limit?: number;
  /** The page below this ledger id (older): pass the previous page's `nextBeforeId`. */
  readonly beforeId?: number;
  /** The page just above this ledger id (newer): pass the previous page's `newerAfterId`. Ignored with `beforeId`. */
  readonly afterId?: number;
  /** Only movements of these kinds; all when absent or empty. */
  readonly kinds?: readonly LedgerKind[];
  /** Only movements at or after this instant. */
  readonly since?: Date;
  /** Only movements before this instant. */
  readonly until?: Date;
}

/** A ledger entry, with the kind of the job it paid or returned, if any. */
export type HistoryEntry = LedgerEntry & { readonly jobKind: JobKind | null };

export interface HistoryPage {
  /** Newest first. */
  readonly entries: HistoryEntry[];
  /** The `beforeId` of the next (older) page, or null on the oldest page. */
  readonly nextBeforeId: number | null;
  /** The `afterId` of the newer page, or null on the newest page (as of this read). */
  readonly newerAfterId: number | null;
}

/**
 * The guild's ledger, newest first, a page at a time, both ways: keyset paging on the ledger
 * id, so a page stays the same page however many movements are written above it meanwhile.
 */
export async function history(executor: Executor, query: HistoryQuery): Promise<HistoryPage> {
  const limit = Math.min(500, Math.max(1, Math.trunc(query.limit ?? 20)));
  const newer = query.beforeId === undefined && query.afterId !== undefined;
  const scope = and(
    eq(creditLedger.guildId, query.guildId),
    query.userId !== undefined ? eq(creditLedger.userId, query.userId) : undefined,
    query.kinds !== undefined && query.kinds.length > 0 ? inArray(creditLedger.kind, [...query.kinds]) : undefined,
    query.since !== undefined ? and(gte(creditLedger.createdAt, query.since), gte(creditLedger.id, firstIdFrom(query.guildId, query.since))) : undefined,
    query.until !== undefined ? and(lt(creditLedger.createdAt, query.until), lt(creditLedger.id, firstIdFrom(query.guildId, query.until))) : undefined,
  );
  // The job's kind is read by the table's name, as upstream-spend.ts reads jobs: the jobs table's
  // reads live in the pipeline, which imports credits, so credits cannot import them.
  const rows = await executor
    .select({ entry: creditLedger, jobKind: sql<JobKind | null>`jobs.kind` })
    .from(creditLedger)
    .leftJoin(sql`jobs`, sql`jobs.id = ${creditLedger.jobId}`)
    .where(
      and(
        scope,
        query.beforeId !== undefined ? lt(creditLedger.id, query.beforeId) : undefined,
        newer ? gt(creditLedger.id, query.afterId!) : undefined,
      ),
    )
    .orderBy(newer ? asc(creditLedger.id) : desc(creditLedger.id))
    .limit(limit + 1);
  const page = rows.slice(0, limit).map(({ entry, jobKind }) => ({ ...entry, jobKind }));
  if (newer) page.reverse();
  const more = rows.length > limit;
  const newest = page[0]?.id;
  const oldest = page.at(-1)?.id;
  // The side the page was read from is known from the extra row; the other side takes one look.
  const olderExists = newer ? oldest !== undefined && (await anyEntry(executor, and(scope, lt(creditLedger.id, oldest)))) : more;
  const newerExists = newer
    ? more
    : query.beforeId !== undefined && newest !== undefined && (await anyEntry(executor, and(scope, gt(creditLedger.id, newest))));
  return {
    entries: page,
    nextBeforeId: olderExists && oldest !== undefined ? oldest : null,
    newerAfterId: newerExists && newest !== undefined ? newest : null,
  };
}

/**
 * The id of the guild's first movement at or after `at` (one row of the (guild_id, created_at)
 * index), or one past every id when there is none: a date bound becomes an id bound, so a
 * filtered page still walks the (guild_id, id) index from its start, not every newer row.
 */
function firstIdFrom(guildId: string, at: Date): SQL {
  return sql`coalesce((select ${creditLedger.id} from ${creditLedger} where ${creditLedger.guildId} = ${guildId} and ${creditLedger.createdAt} >= ${at.toISOString()}::timestamptz order by ${creditLedger.createdAt}, ${creditLedger.id} limit 1), 9223372036854775807)`;
}

async function anyEntry(executor: Executor, where: SQL | undefined): Promise<boolean> {
  const [row] = await executor.select({ id: creditLedger.id }).from(creditLedger).where(where).limit(1);
  return row !== undefined;
}

/** The guild's latest `take` at or after `since`, or null: what a top-up would silently give back. */
export async function latestTake(executor: Executor, guildId: string, since: Date): Promise<{ amount: number; createdAt: Date } | null> {
  const [row] = await executor
    .select({ amount: creditLedger.amount, createdAt: creditLedger.createdAt })
    .from(creditLedger)
    .where(and(eq(creditLedger.guildId, guildId), eq(creditLedger.kind, 'take'), gte(creditLedger.createdAt, since)))
    .orderBy(desc(creditLedger.id))
    .limit(1);
  return row ? { amount: -row.amount, createdAt: row.createdAt } : null;
}
