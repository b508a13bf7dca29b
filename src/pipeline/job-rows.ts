/**
 * Reading job rows, and the writes that are not a state transition (transitions.ts makes
 * those, under the row's lock). With transitions.ts the only modules that touch `jobs` (eslint.config.js
 * checks): everyone else asks them by name.
 */
import { and, asc, count, desc, eq, inArray, is, isNull, lt, lte, max, or, sql, type InferSelectModel, type SQL } from 'drizzle-orm';
import { PgTransaction } from 'drizzle-orm/pg-core';
import { constants, preparedOnce, type Database, type Executor } from '../db/client.js';
import type { RowFor } from '../db/insert-from.js';
import { guilds, jobs, libraryRows, librarySearchText, songLikes, type JobKind, type JobState, type Removal } from '../db/schema.js';
import { KINDS_BY_TASK_TYPE, TASK_TYPE_BY_KIND, kindsSharingTaskType } from './upstream.js';

export type JobRow = InferSelectModel<typeof jobs>;

export const OPEN_STATES: readonly JobState[] = ['queued', 'submitting', 'submitted'];

export async function getJob(db: Executor, jobId: string): Promise<JobRow | undefined> {
  // A transaction builds the statement; the database runs the one built once (every worker's job starts here).
  const [row] = is(db, PgTransaction) ? await db.select().from(jobs).where(eq(jobs.id, jobId)).limit(1) : await jobRead(db).execute({ jobId });
  return row;
}

/**
 * The job that made, or is making, one file of a song (`kind` video or download; `format` for a
 * download): a succeeded one first, else one still open; undefined when none. A failed one does
 * not count: the file may be asked for again.
 */
export async function jobMakingFile(
  db: Executor,
  file: { readonly sourceJobId: string; readonly clipId: string; readonly kind: 'video' | 'download'; readonly format?: string },
): Promise<JobRow | undefined> {
  const [row] = await db
    .select()
    .from(jobs)
    .where(
      and(
        eq(jobs.parentJobId, file.sourceJobId),
        eq(jobs.kind, file.kind),
        constants(jobs.state, ['succeeded', ...OPEN_STATES]),
        sql`${jobs.request} ->> 'clipId' = ${file.clipId}`,
        file.format === undefined ? undefined : sql`${jobs.request} ->> 'format' = ${file.format}`,
      ),
    )
    .orderBy(sql`${jobs.state} = 'succeeded' desc`, desc(jobs.createdAt))
    .limit(1);
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
    filter.succeededOnly ? and(constants(jobs.state, ['succeeded']), isNull(jobs.removedAt)) : undefined,
  );
}

/**
 * A finished result still shown: succeeded, and neither hidden by a moderator nor deleted by
 * its requester. What every list, lookup, button and the player take (a removed song is in none).
 */
export function isShownResult(job: Pick<JobRow, 'state' | 'removedAt'>): boolean {
  return job.state === 'succeeded' && job.removedAt === null;
}

/**
 * Takes a finished result out of the library and every list, once: undefined when it was
 * already removed (or is not a finished result). `tx` may be the transaction that records why.
 */
export async function removeResultRow(db: Executor, jobId: string, removal: { removal: Removal; by: string; at: Date }): Promise<JobRow | undefined> {
  const [row] = await db
    .update(jobs)
    .set({ removedAt: removal.at, removal: removal.removal, removedBy: removal.by })
    .where(and(eq(jobs.id, jobId), constants(jobs.state, ['succeeded']), isNull(jobs.removedAt)))
    .returning();
  return row;
}

/**
 * Clears what removed results said (the prompt, lyrics, titles and names the member wrote or
 * the service returned) once they were removed before `before`; who asked, when and what it
 * cost stay. At most `batch` rows; returns how many were cleared.
 */
export async function clearRemovedTexts(db: Executor, before: Date, batch: number): Promise<number> {
  const { rowCount } = await db.execute(sql`
    update ${jobs} set
      request = request - 'prompt' - 'lyrics' - 'title' - 'name' - 'remixOf' - 'rerollOf',
      result = case when result is null then null else (result - 'lyrics' - 'lyricsTitle' - 'personaName') || jsonb_build_object('clips',
        coalesce((select jsonb_agg(clip - 'title' - 'lyrics' - 'tags') from jsonb_array_elements(result -> 'clips') clip), '[]'::jsonb)) end
    where id in (
      select id from ${jobs}
      where removed_at is not null and removed_at < ${before.toISOString()}
        and (request ?| array['prompt', 'lyrics', 'title', 'name', 'remixOf', 'rerollOf']
          or result ?| array['lyrics', 'lyricsTitle', 'personaName']
          or jsonb_path_exists(coalesce(result, '{}'::jsonb), '$.clips[*] ? (exists(@.title) || exists(@.lyrics) || exists(@.tags))'))
      limit ${batch})`);
  return rowCount ?? 0;
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

/**
 * The job's row locked for a progress edit, with what the edit needs to know. Sent with `begin`
 * in one query (see whileLocked), with the id written into its text: only a job id passes.
 */
export const progressLock = (jobId: string) => {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(jobId)) throw new Error(`not a job id: ${jobId}`);
  return sql`select ${jobs.state} as "state", ${jobs.deliveryState} as "deliveryState", ${guilds.visibility} as "visibility"
    from ${jobs} join ${guilds} on ${guilds.id} = ${jobs.guildId} where ${jobs.id} = ${jobId} for update of ${jobs}`;
};

/** A job's titles and names (the service's, the member's), as column expressions: a typed title is looked for among these first. */
export const JOB_TITLE_TEXTS: readonly SQL[] = [
  sql`${jobs.result} -> 'clips' -> 0 ->> 'title'`,
  sql`${jobs.result} ->> 'lyricsTitle'`,
  sql`${jobs.request} ->> 'title'`,
  sql`${jobs.request} ->> 'name'`,
];

/** The texts a job is shown by (see `describeJob` in titles.ts): its titles, then what it was asked for. */
export const JOB_NAME_TEXTS: readonly SQL[] = [...JOB_TITLE_TEXTS, sql`${jobs.request} ->> 'prompt'`];

/** The guild's jobs that `filter` and `where` admit, newest first, at most `limit`. */
export async function findGuildJobs(db: Executor, guildId: string, filter: GuildJobFilter, where: SQL | undefined, limit: number): Promise<JobRow[]> {
  return db.select().from(jobs).where(and(guildJobsWhere(guildId, filter), where)).orderBy(desc(jobs.createdAt)).limit(limit);
}

// The library's reads: a guild's finished songs, keyset-ordered on (created_at, id). How a
// page puts them together, and why a search reads a window before the trigram index: library.ts.

/** Totals are counted up to this; a larger library shows as "1,000+". */
export const LIBRARY_COUNT_CAP = 1000;
/**
 * How many of the newest songs (from the cursor) a search reads in index order before it
 * turns to the trigram index: a word in one song of this many fills a page from here.
 */
export const SEARCH_WINDOW = 300;
/** More words than this in a search are ignored: each one is another condition on the index. */
const MAX_WORDS = 8;

export interface LibraryFilter {
  readonly guildId: string;
  /** Only this member's songs. */
  readonly userId?: string | undefined;
  /** Every word must appear in the title, prompt or lyrics, in any case. */
  readonly query?: string | undefined;
  /** Only the songs this member likes now: their favourites. */
  readonly likedBy?: string | undefined;
}

/** Which way from a song the library is read: older (newest first) or newer (oldest first). */
export type LibraryDirection = 'older' | 'newer';

/** The words of a search, at most {@link MAX_WORDS}. */
export function searchWords(query: string | undefined): string[] {
  return (query ?? '').split(/\s+/).filter((word) => word.length > 0).slice(0, MAX_WORDS);
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (match) => `\\${match}`);
}

/** The guild's library rows, one member's if the filter says so: what the two library indexes hold. */
function inLibrary(filter: LibraryFilter): SQL | undefined {
  return and(
    eq(jobs.guildId, filter.guildId),
    libraryRows(jobs),
    isNull(jobs.removedAt),
    filter.userId === undefined ? undefined : eq(jobs.userId, filter.userId),
    filter.likedBy === undefined
      ? undefined
      : sql`exists (select 1 from ${songLikes} where ${songLikes.jobId} = ${jobs.id} and ${songLikes.userId} = ${filter.likedBy} and ${songLikes.likedAt} is not null)`,
  );
}

/** Every word of the search, on the expression the trigram index holds; undefined without words. */
function searched(filter: LibraryFilter): SQL | undefined {
  return and(...searchWords(filter.query).map((word) => sql`(${librarySearchText(jobs)}) ilike ${`%${escapeLike(word)}%`}`));
}

function matching(filter: LibraryFilter): SQL | undefined {
  return and(inLibrary(filter), searched(filter));
}

/** (created_at, id) of the guild's job `jobId` compared with the row's: `<` for older rows. */
function beyond(guildId: string, jobId: string, operator: '<' | '>'): SQL {
  return sql`(${jobs.createdAt}, ${jobs.id}) ${sql.raw(operator)} (select c.created_at, c.id from jobs c where c.id = ${jobId} and c.guild_id = ${guildId})`;
}

const operatorOf = (direction: LibraryDirection) => (direction === 'newer' ? '>' : '<');
const orderOf = (direction: LibraryDirection) => (direction === 'newer' ? sql`asc` : sql`desc`);

/**
 * Up to `limit` library rows matching the filter beyond the song `from` (none: from the newest),
 * in one statement: the library index read in order. What a page without a search runs; with
 * one, it would search every row it walks until the page is full (a rare word: the guild's
 * whole library), so searches go by {@link librarySearchWindow} and {@link indexSearch}.
 */
export async function libraryRowsBeyond(db: Executor, filter: LibraryFilter, direction: LibraryDirection, from: string | undefined, limit: number): Promise<JobRow[]> {
  const newer = direction === 'newer';
  return db
    .select()
    .from(jobs)
    .where(and(matching(filter), from !== undefined ? beyond(filter.guildId, from, operatorOf(direction)) : undefined))
    .orderBy(...(newer ? [asc(jobs.createdAt), asc(jobs.id)] : [desc(jobs.createdAt), desc(jobs.id)]))
    .limit(limit);
}

/**
 * A search's first step: the ids of the rows matching it among the {@link SEARCH_WINDOW} library
 * rows next beyond `from` (none: the newest), in order, read through the library index (a
 * subquery with a LIMIT, which Postgres neither flattens nor pushes the search into), at most `limit`.
 */
export async function librarySearchWindow(db: Executor, filter: LibraryFilter, direction: LibraryDirection, from: string | undefined, limit: number): Promise<string[]> {
  const order = orderOf(direction);
  const start = from === undefined ? undefined : beyond(filter.guildId, from, operatorOf(direction));
  const { rows } = await db.execute<{ id: string }>(sql`select ${jobs.id} from (select * from ${jobs} where ${and(inLibrary(filter), start)}
      order by ${jobs.createdAt} ${order}, ${jobs.id} ${order} limit ${SEARCH_WINDOW}) as ${jobs}
    where ${searched(filter)} order by ${jobs.createdAt} ${order}, ${jobs.id} ${order} limit ${limit}`);
  return rows.map((row) => row.id);
}

/**
 * The library row {@link SEARCH_WINDOW} rows beyond `from`: the window's last row, where the
 * trigram index takes over. Undefined when the window holds every row beyond `from`.
 */
export async function librarySearchWindowEnd(db: Executor, filter: LibraryFilter, direction: LibraryDirection, from: string | undefined): Promise<string | undefined> {
  const order = orderOf(direction);
  const start = from === undefined ? undefined : beyond(filter.guildId, from, operatorOf(direction));
  const { rows } = await db.execute<{ id: string }>(
    sql`select ${jobs.id} from ${jobs} where ${and(inLibrary(filter), start)} order by ${jobs.createdAt} ${order}, ${jobs.id} ${order} offset ${SEARCH_WINDOW - 1} limit 1`,
  );
  return rows[0]?.id;
}

/**
 * A search's second step: the guild's songs matching it, found through the trigram index, then
 * those beyond the window's last row, ordered. `offset 0` keeps the search alone in a subquery
 * planned without the order or the bound, so its plan is the index's bitmap, not a walk of the
 * guild's songs. Exported so a test can EXPLAIN exactly what runs.
 */
export function indexSearch(filter: LibraryFilter, direction: LibraryDirection, from: string, limit: number): SQL {
  const order = orderOf(direction);
  return sql`select ${jobs.id} from (${found(filter)}) as ${jobs}
    where ${beyond(filter.guildId, from, operatorOf(direction))}
    order by ${jobs.createdAt} ${order}, ${jobs.id} ${order} limit ${limit}`;
}

/** The ids {@link indexSearch} finds. */
export async function libraryIndexSearch(db: Executor, filter: LibraryFilter, direction: LibraryDirection, from: string, limit: number): Promise<string[]> {
  const rows = await plannedForItsValues<{ id: string }>(db, indexSearch(filter, direction, from, limit));
  return rows.map((row) => row.id);
}

/**
 * Runs a search through the trigram index planned for its values, in a transaction of its own
 * (a savepoint in the caller's). The bot's connections plan without values (see connectDatabase),
 * and without the guild a plan assumes an average guild's few songs: it walked a busy guild's
 * 100,000 songs one by one (355 ms) where the index finds a rare word in 2 ms.
 */
async function plannedForItsValues<Row extends Record<string, unknown>>(db: Executor, statement: SQL): Promise<Row[]> {
  return db.transaction(async (tx) => {
    await tx.execute(sql`set local plan_cache_mode = force_custom_plan`);
    return (await tx.execute<Row>(statement)).rows as Row[];
  });
}

/** The guild's songs matching a search, (id, created_at), in no order. */
function found(filter: LibraryFilter): SQL {
  return sql`select ${jobs.id}, ${jobs.createdAt} from ${jobs} where ${matching(filter)} offset 0`;
}

/** Of the {@link SEARCH_WINDOW} library rows next beyond `from`: how many match the search (`hits`), and how many there were (`seen`). */
export async function countLibrarySearchWindow(db: Executor, filter: LibraryFilter, direction: LibraryDirection, from: string): Promise<{ hits: number; seen: number }> {
  const order = orderOf(direction);
  const { rows } = await db.execute<{ hits: number; seen: number }>(
    sql`select (count(*) filter (where ${searched(filter)}))::int as hits, count(*)::int as seen
      from (select * from ${jobs} where ${and(inLibrary(filter), beyond(filter.guildId, from, operatorOf(direction)))}
        order by ${jobs.createdAt} ${order}, ${jobs.id} ${order} limit ${SEARCH_WINDOW}) as ${jobs}`,
  );
  return { hits: rows[0]?.hits ?? 0, seen: rows[0]?.seen ?? 0 };
}

/** How many songs match the search beyond the song `end`, through the trigram index. */
export async function countLibraryIndexSearch(db: Executor, filter: LibraryFilter, direction: LibraryDirection, end: string): Promise<number> {
  const rows = await plannedForItsValues<{ n: number }>(
    db,
    sql`select count(*)::int as n from (${found(filter)}) as ${jobs} where ${beyond(filter.guildId, end, operatorOf(direction))}`,
  );
  return rows[0]?.n ?? 0;
}

/** The rows of these ids, in the ids' order. */
export async function jobRowsInOrder(db: Executor, ids: readonly string[]): Promise<JobRow[]> {
  if (ids.length === 0) return [];
  const rows = await db.select().from(jobs).where(inArray(jobs.id, [...ids]));
  const byId = new Map(rows.map((row) => [row.id, row]));
  return ids.map((id) => byId.get(id)).filter((row): row is JobRow => row !== undefined);
}

/** Library rows (no search) newer than `jobId`: index-only, as many as the page is deep. */
export async function countLibraryNewer(db: Executor, filter: LibraryFilter, jobId: string): Promise<number> {
  const [row] = await db.select({ n: count() }).from(jobs).where(and(inLibrary(filter), beyond(filter.guildId, jobId, '>')));
  return row?.n ?? 0;
}

/** The library's songs (no search), counted up to {@link LIBRARY_COUNT_CAP} + 1. */
export async function countLibraryCapped(db: Executor, filter: LibraryFilter): Promise<number> {
  const { rows } = await db.execute<{ n: number }>(
    sql`select count(*)::int as n from (select 1 from ${jobs} where ${inLibrary(filter)} limit ${LIBRARY_COUNT_CAP + 1}) as capped`,
  );
  return rows[0]?.n ?? 0;
}

/** Notes which takes the posted result carries as files (see `StoredResult.attachedTakes`). */
export async function recordAttachedTakes(db: Executor, jobId: string, takes: readonly number[]): Promise<void> {
  await db
    .update(jobs)
    .set({ result: sql`coalesce(${jobs.result}, '{}'::jsonb) || jsonb_build_object('attachedTakes', ${JSON.stringify(takes)}::jsonb)` })
    .where(eq(jobs.id, jobId));
}

/** Notes that the result was posted while a contest ran (see `StoredResult.contestOpen`), so every rendering of it offers Enter contest. */
export async function recordContestOpen(db: Executor, jobId: string): Promise<void> {
  await db
    .update(jobs)
    .set({ result: sql`coalesce(${jobs.result}, '{}'::jsonb) || jsonb_build_object('contestOpen', true)` })
    .where(eq(jobs.id, jobId));
}

/** Gives a song its member's new title (the request's `title`, which every name of it reads first). */
export async function retitleJob(db: Executor, jobId: string, title: string, now: Date): Promise<JobRow | undefined> {
  const [row] = await db
    .update(jobs)
    .set({ request: sql`${jobs.request} || jsonb_build_object('title', ${title}::text)`, updatedAt: now })
    .where(eq(jobs.id, jobId))
    .returning();
  return row;
}

/**
 * Songs finished per UTC day of their request over `[since, until)`, as `YYYY-MM-DD` → count
 * (days without songs absent), hidden and deleted ones included: what was made, not what is
 * shown. An index-only count on the library's (guild_id, created_at, id) index.
 */
export async function songsPerDay(db: Executor, query: { guildId: string; since: Date; until: Date }): Promise<Map<string, number>> {
  const { rows } = await db.execute<{ day: string; n: number }>(sql`
    select to_char((${jobs.createdAt} at time zone 'UTC')::date, 'YYYY-MM-DD') as day, count(*)::int as n
      from ${jobs}
     where ${jobs.guildId} = ${query.guildId} and ${libraryRows(jobs)}
       and ${jobs.createdAt} >= ${query.since.toISOString()}::timestamptz and ${jobs.createdAt} < ${query.until.toISOString()}::timestamptz
     group by 1`);
  return new Map(rows.map((row) => [row.day, Number(row.n)]));
}
