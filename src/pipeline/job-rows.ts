/**
 * Reading job rows, and the writes that are not a state transition (transitions.ts makes
 * those, under the row's lock). With transitions.ts the only modules that touch `jobs` (eslint.config.js
 * checks): everyone else asks them by name.
 */
import { and, asc, count, desc, eq, inArray, is, isNull, lt, lte, max, or, sql, type InferSelectModel, type SQL } from 'drizzle-orm';
import { PgTransaction } from 'drizzle-orm/pg-core';
import { constants, preparedOnce, type Database, type Executor } from '../db/client.js';
import type { RowFor } from '../db/insert-from.js';
import { guilds, jobs, type JobKind, type JobState } from '../db/schema.js';
import { KINDS_BY_TASK_TYPE, TASK_TYPE_BY_KIND, kindsSharingTaskType } from './upstream.js';

export type JobRow = InferSelectModel<typeof jobs>;

export const OPEN_STATES: readonly JobState[] = ['queued', 'submitting', 'submitted'];

export async function getJob(db: Executor, jobId: string): Promise<JobRow | undefined> {
  // A transaction builds the statement; the database runs the one built once (every worker's job starts here).
  const [row] = is(db, PgTransaction) ? await db.select().from(jobs).where(eq(jobs.id, jobId)).limit(1) : await jobRead(db).execute({ jobId });
  return row;
}

/** getJob's statement (every worker's job starts with it). */
const jobRead = preparedOnce((db) => db.select().from(jobs).where(eq(jobs.id, sql.placeholder('jobId'))).limit(1).prepare('get_job'));

/**
 * How far the queue counts: a position beyond is shown as "1000+". Counting stops there, so a
 * backlog of any size costs each command the same (at most this many index entries read).
 */
export const QUEUE_COUNT_LIMIT = 1000;

/**
 * How far a request's first answer counts the queue, in the guild's read every command makes:
 * beyond, "100+". Under a backlog each count reads this many rows, so it stays small.
 */
export const FIRST_ANSWER_COUNT_LIMIT = 100;

/** A queue position as a member reads it: the number, or `<limit>+` beyond what was counted. */
export function shownPosition(position: number, limit = QUEUE_COUNT_LIMIT): number | string {
  return position > limit ? `${limit}+` : position;
}

/** `count(*)` of the rows `where` selects, stopping at {@link QUEUE_COUNT_LIMIT}. */
async function countQueued(db: Executor, where: SQL | undefined): Promise<number> {
  const [row] = await db.select({ n: count() }).from(db.select({ one: sql`1` }).from(jobs).where(where).limit(QUEUE_COUNT_LIMIT).as('queued'));
  return row?.n ?? 0;
}

/** Jobs of the same task type waiting before this one (up to {@link QUEUE_COUNT_LIMIT}), plus one. */
export async function queuePositionOf(db: Executor, job: Pick<JobRow, 'id' | 'kind' | 'createdAt' | 'state'>): Promise<number> {
  if (job.state !== 'queued') return 0;
  const kinds = kindsSharingTaskType(job.kind);
  const ahead = await countQueued(
    db,
    and(
      constants(jobs.state, ['queued']),
      inArray(jobs.kind, kinds),
      or(lt(jobs.createdAt, job.createdAt), and(eq(jobs.createdAt, job.createdAt), lt(jobs.id, job.id))),
    ),
  );
  return ahead + 1;
}

/**
 * Moves a queued job to `submitting` unless the task type already has `cap` tasks in flight.
 * An advisory lock per task type makes the count and the move one step across all workers;
 * the database function `claim_submission` (migrations 0005, 0010) takes it, reads the
 * in-flight counter (`jobs_in_flight`, a row per kind) and moves in one call, so the lock is
 * held for no round trip and for the same time however many tasks are in flight.
 */
export async function claimSubmission(
  db: Executor,
  job: Pick<JobRow, 'id' | 'kind'>,
  cap: number,
): Promise<'claimed' | 'cap_reached' | 'not_queued'> {
  const taskType = TASK_TYPE_BY_KIND[job.kind];
  const kinds = KINDS_BY_TASK_TYPE[taskType];
  const { rows } = await inClaimTurn(db, () =>
    db.execute<{ outcome: 'claimed' | 'cap_reached' | 'not_queued' }>(
      sql`select claim_submission(${job.id}::uuid, ${`{${kinds.join(',')}}`}::text[], ${`musicbot:inflight:${taskType}`}, ${cap}::integer) as outcome`,
    ),
  );
  return rows[0]!.outcome;
}

export type ClaimOutcome = Awaited<ReturnType<typeof claimSubmission>>;

/**
 * The job's row as it was read, and when it was queued the outcome of claiming it (as
 * {@link claimSubmission}; null: not queued, nothing tried), in one round trip: a worker's read
 * and claim of its job. Undefined when there is no such job.
 */
export async function takeForSubmission(db: Database, jobId: string, cap: number): Promise<{ job: JobRow; outcome: ClaimOutcome | null } | undefined> {
  const [row] = await inClaimTurn(db, () => takeStatement(db).execute({ jobId, cap }));
  return row;
}

/** The task type's kinds and lock name, from the row's kind: the constants of TASK_TYPE_BY_KIND written as SQL. */
const byKind = (value: (kind: JobKind) => string) =>
  sql.raw(`case ${jobs.kind.name} ${Object.keys(TASK_TYPE_BY_KIND).map((kind) => `when '${kind}' then ${value(kind as JobKind)}`).join(' ')} end`);
const takeStatement = preparedOnce((db) => {
  const kinds = byKind((kind) => `'{${kindsSharingTaskType(kind).join(',')}}'::text[]`);
  const lockName = byKind((kind) => `'musicbot:inflight:${TASK_TYPE_BY_KIND[kind]}'`);
  const outcome = sql<ClaimOutcome | null>`case when ${jobs.state} = 'queued'
    then claim_submission(${jobs.id}, ${kinds}, ${lockName}, ${sql.placeholder('cap')}::integer) end`;
  return db.select({ job: jobs, outcome }).from(jobs).where(eq(jobs.id, sql.placeholder('jobId'))).prepare('take_job');
});

/**
 * Claims made through one pool at once. They take turns under the task type's lock inside
 * Postgres anyway, so more at once would only hold connections that completions and
 * deliveries need. Why: docs/decisions/first-answer-path.md
 */
export const CLAIMS_AT_ONCE = 4;
const claimTurns = new WeakMap<object, { active: number; readonly waiting: Array<() => void> }>();

async function inClaimTurn<T>(db: object, work: () => Promise<T>): Promise<T> {
  let turns = claimTurns.get(db);
  if (!turns) claimTurns.set(db, (turns = { active: 0, waiting: [] }));
  if (turns.active >= CLAIMS_AT_ONCE) await new Promise<void>((resolve) => turns.waiting.push(resolve));
  else turns.active += 1;
  try {
    return await work();
  } finally {
    // The slot passes straight to the next claim in line, or is given back.
    const next = turns.waiting.shift();
    if (next) next();
    else turns.active -= 1;
  }
}

/** Open jobs, a page at a time in id order, with what the reconciler needs to know of them. */
export async function listOpenJobs(
  db: Executor,
  limit = 1000,
  afterId?: string,
): Promise<Array<Pick<JobRow, 'id' | 'state' | 'submitUncertainAt'>>> {
  return db
    .select({ id: jobs.id, state: jobs.state, submitUncertainAt: jobs.submitUncertainAt })
    .from(jobs)
    .where(and(constants(jobs.state, OPEN_STATES), afterId ? sql`${jobs.id} > ${afterId}` : undefined))
    .orderBy(asc(jobs.id))
    .limit(limit);
}

/** Finished jobs whose result is not posted yet, oldest first. */
export async function listUndelivered(db: Executor, limit = 1000): Promise<Array<Pick<JobRow, 'id'>>> {
  return db
    .select({ id: jobs.id })
    .from(jobs)
    .where(and(constants(jobs.deliveryState, ['pending']), constants(jobs.state, ['succeeded', 'failed', 'timed_out'])))
    .orderBy(asc(jobs.completedAt))
    .limit(limit);
}

/** Takes the right to post a job's result for `holdMs`; false when another worker holds it or it is done. */
export async function claimDelivery(db: Executor, jobId: string, now: Date, holdMs = 60_000): Promise<JobRow | undefined> {
  const [row] = await db
    .update(jobs)
    .set({ deliveryClaimedAt: now })
    .where(
      and(
        eq(jobs.id, jobId),
        eq(jobs.deliveryState, 'pending'),
        or(isNull(jobs.deliveryClaimedAt), lte(jobs.deliveryClaimedAt, new Date(now.getTime() - holdMs))),
      ),
    )
    .returning();
  return row;
}

/** Which of a guild's jobs a list or a lookup takes: one member's, of some kinds, finished well. */
export interface GuildJobFilter {
  readonly userId?: string | undefined;
  readonly kinds?: readonly JobKind[] | undefined;
  readonly succeededOnly?: boolean | undefined;
}

/** The condition for a guild's jobs that pass `filter`. */
export function guildJobsWhere(guildId: string, filter: GuildJobFilter): SQL | undefined {
  return and(
    eq(jobs.guildId, guildId),
    filter.userId === undefined ? undefined : eq(jobs.userId, filter.userId),
    filter.kinds === undefined ? undefined : inArray(jobs.kind, [...filter.kinds]),
    filter.succeededOnly ? constants(jobs.state, ['succeeded']) : undefined,
  );
}

export async function listJobsOfGuild(
  db: Executor,
  guildId: string,
  filter: { userId?: string; kind?: JobKind; succeededOnly?: boolean; limit?: number } = {},
): Promise<JobRow[]> {
  return db
    .select()
    .from(jobs)
    .where(guildJobsWhere(guildId, { userId: filter.userId, kinds: filter.kind && [filter.kind], succeededOnly: filter.succeededOnly }))
    .orderBy(desc(jobs.createdAt))
    .limit(Math.min(filter.limit ?? 25, 100));
}

/** A new job's row, for the statement that reserves its credits to write (`alongside`, src/credits/ledger.ts). */
export function newJobRow(values: typeof jobs.$inferInsert & { readonly id: string }): RowFor<typeof jobs> {
  return { table: jobs, values };
}

/** When the member last asked for anything in the guild (their cooldown counts from it); undefined: never. */
export async function lastRequestAt(db: Executor, guildId: string, userId: string): Promise<Date | undefined> {
  const [row] = await db
    .select({ last: max(jobs.createdAt) })
    .from(jobs)
    .where(and(eq(jobs.guildId, guildId), eq(jobs.userId, userId)));
  return row?.last ?? undefined;
}

/** What a webhook for the job is checked against: its secret (null past its retention) and its task. */
export async function webhookTargetOf(db: Executor, jobId: string): Promise<{ id: string; secret: string | null; taskId: string | null } | undefined> {
  const [job] = await db.select({ id: jobs.id, secret: jobs.webhookSecret, taskId: jobs.upstreamTaskId }).from(jobs).where(eq(jobs.id, jobId));
  return job;
}

/**
 * Jobs by kind and state, the open ones or the finished ones. Open states are written as
 * literals, so that Postgres sees the partial index on open jobs applies.
 */
export async function countJobsByKindAndState(db: Executor, which: 'open' | 'finished'): Promise<Array<{ kind: string; state: string; n: number }>> {
  const where = which === 'open' ? sql`state in ('queued', 'submitting', 'submitted')` : sql`state not in ('queued', 'submitting', 'submitted')`;
  const { rows } = await db.execute<{ kind: string; state: string; n: number }>(sql`select kind, state, count(*)::int as n from ${jobs} where ${where} group by kind, state`);
  return rows;
}

/**
 * A column expression for another table's named statement: how many jobs of the kinds in the
 * `kinds` placeholder (a text array) wait in the queue, counted up to {@link FIRST_ANSWER_COUNT_LIMIT}.
 */
export function queuedCountOf(kinds: SQL): SQL<number> {
  return sql<number>`(select count(*)::integer from (select 1 from ${jobs}
    where ${jobs.state} = 'queued' and ${jobs.kind} = any(${kinds}::text[]) limit ${sql.raw(String(FIRST_ANSWER_COUNT_LIMIT))}) queued)`;
}

/** The job's row locked for a progress edit, with what the edit needs to know (run as a named statement: planned once per connection). */
export const progressLock = (jobId: string) =>
  sql`select ${jobs.state} as "state", ${jobs.deliveryState} as "deliveryState", ${guilds.visibility} as "visibility"
    from ${jobs} join ${guilds} on ${guilds.id} = ${jobs.guildId} where ${jobs.id} = ${jobId} for update of ${jobs}`;

/** The texts a job is shown by (see `describeJob` in titles.ts), in the order it prefers them, as column expressions. */
export const JOB_NAME_TEXTS: readonly SQL[] = [
  sql`${jobs.result} -> 'clips' -> 0 ->> 'title'`,
  sql`${jobs.result} ->> 'lyricsTitle'`,
  sql`${jobs.request} ->> 'title'`,
  sql`${jobs.request} ->> 'name'`,
  sql`${jobs.request} ->> 'prompt'`,
];

/** The guild's jobs that `filter` and `where` admit, newest first, at most `limit`. */
export async function findGuildJobs(db: Executor, guildId: string, filter: GuildJobFilter, where: SQL | undefined, limit: number): Promise<JobRow[]> {
  return db.select().from(jobs).where(and(guildJobsWhere(guildId, filter), where)).orderBy(desc(jobs.createdAt)).limit(limit);
}
