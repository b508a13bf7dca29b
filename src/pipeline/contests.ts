/**
 * Song contests: a moderator starts one per server with a theme and a deadline, members enter
 * their own songs made since, and likes given during the contest to an entry by anyone but its
 * maker are its votes (counted from `song_likes` at the end; from the songs' like counts while
 * it runs). The end is one
 * guarded transition (`running` to `ended`), taken by a delayed queue entry at the deadline,
 * the minute's pass, a worker's start or a moderator, so the results are posted once.
 * Why: docs/decisions/song-contests.md
 */
import { randomUUID } from 'node:crypto';
import { and, desc, eq, sql } from 'drizzle-orm';
import { PermissionFlagsBits, type APIRole } from 'discord-api-types/v10';
import type { Executor } from '../db/client.js';
import { contestEntries, contests, type ContestResults, type ContestRow } from '../db/schema.js';
import { describeDiscordError, isMissingAccess, nonceFor } from '../discord-rest/discord-delivery.js';
import { translator } from '../i18n/index.js';
import type { PipelineDeps } from './deps.js';
import { getJob, jobRowsInOrder, type JobRow } from './job-rows.js';
import { isLikeable } from './likes.js';
import { LIBRARY_KINDS } from './library.js';
import { renderContestAnnouncement, renderContestResults } from './render-contest.js';
import { describeJob } from './titles.js';

export type { ContestRow };

/** How many days a contest may run, and how many entries a member may make. */
export const CONTEST_DAYS = { min: 1, max: 30 } as const;
export const CONTEST_ENTRIES = { min: 1, max: 10, default: 3 } as const;
export const CONTEST_THEME_MAX = 200;
/** How many entries the results and `/contest status` show. */
export const CONTEST_TOP = 3;
/** A results post taken by a process that never recorded it is tried again after this long. */
export const RESULTS_RETRY_MS = 2 * 60_000;

type ContestDeps = Pick<PipelineDeps, 'db' | 'discord' | 'logger' | 'queues' | 'now' | 'settings'>;

export interface ContestStart {
  readonly guildId: string;
  readonly channelId: string;
  readonly theme: string;
  readonly days: number;
  readonly maxEntries: number;
  readonly winnerRoleId: string | undefined;
  readonly startedBy: string;
  /** The server's language: the announcement and the results are written in it. */
  readonly locale: string | null;
}

export type StartOutcome =
  | { readonly outcome: 'started'; readonly contest: ContestRow }
  /** One runs already: the server's. */
  | { readonly outcome: 'running'; readonly contest: ContestRow }
  /** The bot may not post in the channel: nothing was started. */
  | { readonly outcome: 'no_access' };

/** The running contest of a server, if any (its deadline may have passed, its end not yet taken). */
export async function runningContest(db: Executor, guildId: string): Promise<ContestRow | undefined> {
  const [row] = await db.select().from(contests).where(and(eq(contests.guildId, guildId), eq(contests.state, 'running')));
  return row;
}

/**
 * Starts a contest, announces it in its channel, and plans its end at the deadline (a day is
 * `settings.contestDayMs`). One per server: a second start finds the running one.
 */
export async function startContest(deps: ContestDeps, input: ContestStart): Promise<StartOutcome> {
  const now = deps.now();
  const [created] = await deps.db
    .insert(contests)
    .values({
      id: randomUUID(),
      guildId: input.guildId,
      channelId: input.channelId,
      theme: input.theme,
      startedBy: input.startedBy,
      startedAt: now,
      endsAt: new Date(now.getTime() + input.days * deps.settings.contestDayMs),
      maxEntries: input.maxEntries,
      winnerRoleId: input.winnerRoleId ?? null,
      locale: input.locale,
    })
    .onConflictDoNothing()
    .returning();
  if (!created) {
    const running = await runningContest(deps.db, input.guildId);
    if (running) return { outcome: 'running', contest: running };
    return startContest(deps, input);
  }
  try {
    await deps.discord.postChannelMessage(created.channelId, { ...renderContestAnnouncement(created, translator(created.locale)), nonce: nonceFor(`contest:${created.id}`), enforce_nonce: true });
  } catch (error) {
    // Never announced: as if never started.
    await deps.db.delete(contests).where(eq(contests.id, created.id));
    if (isMissingAccess(error)) return { outcome: 'no_access' };
    throw error;
  }
  await planEnd(deps, created, now);
  return { outcome: 'started', contest: created };
}

/** The end at the deadline: a delayed entry of the maintenance queue, one per contest. */
async function planEnd(deps: ContestDeps, contest: ContestRow, now: Date): Promise<void> {
  try {
    await deps.queues.maintenance.add('contests', {}, { jobId: contestEndEntry(contest.id), delay: Math.max(0, contest.endsAt.getTime() - now.getTime()) });
  } catch (err) {
    // The minute's pass ends it instead.
    deps.logger.warn({ contestId: contest.id, err }, 'could not plan the end of a contest');
  }
}

export const contestEndEntry = (contestId: string) => `contest-end-${contestId}`;

export interface EntryInput {
  readonly guildId: string;
  readonly userId: string;
  readonly jobId: string;
}

export type EntryOutcome =
  | { readonly outcome: 'entered'; readonly contest: ContestRow; readonly job: JobRow; readonly count: number }
  /** The song is in the contest already (a second press, a retried interaction): nothing changed. */
  | { readonly outcome: 'already'; readonly contest: ContestRow; readonly job: JobRow }
  | { readonly outcome: 'no_contest' }
  /** The deadline has passed. */
  | { readonly outcome: 'closed'; readonly contest: ContestRow }
  /** Not a shown song of this server made by this member. */
  | { readonly outcome: 'not_yours' }
  /** Made before the contest started. */
  | { readonly outcome: 'too_early'; readonly contest: ContestRow }
  /** The member's entries are at the contest's limit. */
  | { readonly outcome: 'limit'; readonly contest: ContestRow };

/**
 * Enters a member's song in the running contest: one row per contest and song, under the
 * contest's row lock, so the member's limit holds with two processes and a song enters once.
 */
export async function enterContest(db: Executor, input: EntryInput, now: Date): Promise<EntryOutcome> {
  return db.transaction(async (tx) => {
    const [contest] = await tx
      .select()
      .from(contests)
      .where(and(eq(contests.guildId, input.guildId), eq(contests.state, 'running')))
      .for('update');
    if (!contest) {
      const [last] = await tx.select().from(contests).where(eq(contests.guildId, input.guildId)).orderBy(desc(contests.startedAt)).limit(1);
      return last?.state === 'ended' ? ({ outcome: 'closed', contest: last } as const) : ({ outcome: 'no_contest' } as const);
    }
    if (now.getTime() >= contest.endsAt.getTime()) return { outcome: 'closed', contest } as const;
    const job = await getJob(tx, input.jobId);
    if (!isLikeable(job, input.guildId) || job.userId !== input.userId) return { outcome: 'not_yours' } as const;
    if (job.createdAt.getTime() < contest.startedAt.getTime()) return { outcome: 'too_early', contest } as const;
    const mine = await tx.select({ jobId: contestEntries.jobId }).from(contestEntries).where(and(eq(contestEntries.contestId, contest.id), eq(contestEntries.userId, input.userId)));
    if (mine.some((entry) => entry.jobId === job.id)) return { outcome: 'already', contest, job } as const;
    if (mine.length >= contest.maxEntries) return { outcome: 'limit', contest } as const;
    await tx.insert(contestEntries).values({ contestId: contest.id, jobId: job.id, userId: input.userId, enteredAt: now }).onConflictDoNothing();
    return { outcome: 'entered', contest, job, count: mine.length + 1 } as const;
  });
}

/** The member's songs that may still enter the running contest: shown, theirs, made since it started, not entered yet. */
export async function enterableSongs(db: Executor, guildId: string, userId: string, limit = 25): Promise<JobRow[]> {
  const contest = await runningContest(db, guildId);
  if (!contest) return [];
  const { rows } = await db.execute<{ id: string }>(sql`
    select j.id from jobs j
    where j.guild_id = ${guildId} and j.user_id = ${userId} and j.state = 'succeeded' and j.removed_at is null
      and j.kind in (${sql.join(LIBRARY_KINDS.map((kind) => sql`${kind}`), sql`, `)})
      and j.created_at >= ${contest.startedAt.toISOString()}
      and not exists (select 1 from contest_entries e where e.contest_id = ${contest.id} and e.job_id = j.id)
    order by j.created_at desc limit ${limit}`);
  return jobRowsInOrder(db, rows.map((row) => row.id));
}

/** One entry with its votes. */
export interface Standing {
  readonly job: JobRow;
  readonly votes: number;
}

/**
 * The contest's entries that are still shown (a hidden or deleted song leaves it), by votes:
 * likes given between its start and its end (or `until`) by anyone but the entry's maker.
 * A tie goes to the earlier entry. `limit` of them, and how many there are.
 */
export async function standings(db: Executor, contest: ContestRow, until: Date, limit = CONTEST_TOP): Promise<{ entries: number; top: Standing[] }> {
  const end = new Date(Math.min(contest.endsAt.getTime(), until.getTime()));
  const { rows } = await db.execute<{ job_id: string; votes: number }>(sql`
    select e.job_id, count(l.user_id)::int as votes
    from contest_entries e
    join jobs j on j.id = e.job_id
    left join song_likes l on l.job_id = e.job_id and l.liked_at is not null and l.user_id <> e.user_id
      and l.liked_at >= ${contest.startedAt.toISOString()} and l.liked_at < ${end.toISOString()}
    where e.contest_id = ${contest.id} and j.removed_at is null and j.state = 'succeeded'
    group by e.job_id, e.entered_at
    order by votes desc, e.entered_at asc`);
  return ranked(db, rows, limit);
}

/**
 * `standings` as they are at `now`, for `/contest status`, without reading every like of every
 * entry: before the deadline, an entry's votes are its song's likes now (`jobs.like_count`) less
 * its maker's own, since every entry was made after the start (`enterContest`) and no like is
 * dated after now. Past the deadline (its end not taken yet), `standings` themselves.
 */
export async function standingsNow(db: Executor, contest: ContestRow, now: Date, limit = CONTEST_TOP): Promise<{ entries: number; top: Standing[] }> {
  if (now.getTime() >= contest.endsAt.getTime()) return standings(db, contest, now, limit);
  const { rows } = await db.execute<{ job_id: string; votes: number }>(sql`
    select e.job_id,
      j.like_count - (exists (select 1 from song_likes l where l.job_id = e.job_id and l.user_id = e.user_id and l.liked_at is not null))::int as votes
    from contest_entries e
    join jobs j on j.id = e.job_id
    where e.contest_id = ${contest.id} and j.removed_at is null and j.state = 'succeeded'
    order by votes desc, e.entered_at asc`);
  return ranked(db, rows, limit);
}

/** The first `limit` of entries in order, with their songs, and how many there are. */
async function ranked(db: Executor, rows: readonly { job_id: string; votes: number }[], limit: number): Promise<{ entries: number; top: Standing[] }> {
  const shown = rows.slice(0, limit);
  const jobs = await jobRowsInOrder(db, shown.map((row) => row.job_id));
  const byId = new Map(jobs.map((job) => [job.id, job]));
  return {
    entries: rows.length,
    top: shown.flatMap((row) => {
      const job = byId.get(row.job_id);
      return job ? [{ job, votes: row.votes }] : [];
    }),
  };
}

export type EndOutcome =
  | { readonly outcome: 'ended'; readonly contest: ContestRow }
  | { readonly outcome: 'cancelled'; readonly contest: ContestRow }
  | { readonly outcome: 'no_contest' };

/** A moderator ends the running contest now (its results posted) or cancels it (none). */
export async function endContestNow(deps: ContestDeps, guildId: string, options: { cancel: boolean }): Promise<EndOutcome> {
  const now = deps.now();
  const [taken] = await deps.db
    .update(contests)
    .set(options.cancel ? { state: 'cancelled', endedAt: now } : { state: 'ended', endedAt: now, postingAt: now })
    .where(and(eq(contests.guildId, guildId), eq(contests.state, 'running')))
    .returning();
  if (!taken) return { outcome: 'no_contest' };
  await deps.queues.maintenance.remove(contestEndEntry(taken.id)).catch(() => {});
  if (options.cancel) return { outcome: 'cancelled', contest: taken };
  return { outcome: 'ended', contest: await announceResults(deps, taken) };
}

/**
 * Ends every contest whose deadline has passed, and posts the results of those that ended
 * without them (a process that stopped after taking the end). Each end is taken by one
 * process: `running` to `ended` in one statement. Run by the delayed entry at a deadline, the
 * minute's pass and a worker's start; never throws for one contest.
 */
export async function endDueContests(deps: ContestDeps): Promise<number> {
  const now = deps.now();
  const due = await deps.db
    .update(contests)
    .set({ state: 'ended', endedAt: sql`${contests.endsAt}`, postingAt: now })
    .where(and(eq(contests.state, 'running'), sql`${contests.endsAt} <= ${now.toISOString()}`))
    .returning();
  const unposted = await deps.db
    .update(contests)
    .set({ postingAt: now })
    .where(
      and(
        eq(contests.state, 'ended'),
        sql`${contests.resultsMessageId} is null and ${contests.postingAt} < ${new Date(now.getTime() - RESULTS_RETRY_MS).toISOString()}`,
      ),
    )
    .returning();
  for (const contest of [...due, ...unposted]) {
    try {
      await announceResults(deps, contest);
    } catch (err) {
      deps.logger.error({ contestId: contest.id, error: describeDiscordError(err) }, 'could not post the results of a contest');
    }
  }
  return due.length;
}

/** Counts the votes (once: kept with the contest), gives the winner's role, and posts the results. */
async function announceResults(deps: ContestDeps, taken: ContestRow): Promise<ContestRow> {
  const until = taken.endedAt ?? deps.now();
  let results = taken.results;
  if (!results) {
    const { entries, top } = await standings(deps.db, taken, until);
    const winner = top[0];
    const role = taken.winnerRoleId !== null && winner ? await giveWinnerRole(deps, taken, winner.job.userId) : undefined;
    results = {
      entries,
      top: top.map(({ job, votes }) => ({ jobId: job.id, userId: job.userId, title: describeJob(job, translator(taken.locale)), votes })),
      ...(role && { role }),
    };
    await deps.db.update(contests).set({ results }).where(eq(contests.id, taken.id));
  }
  const contest = { ...taken, results };
  const message = renderContestResults(contest, translator(contest.locale));
  const posted = await deps.discord.postChannelMessage(contest.channelId, { ...message, nonce: nonceFor(`contest-results:${contest.id}`), enforce_nonce: true });
  await deps.db.update(contests).set({ resultsMessageId: posted.id }).where(eq(contests.id, contest.id));
  deps.logger.info({ contestId: contest.id, guildId: contest.guildId, entries: results.entries }, 'contest results posted');
  return { ...contest, resultsMessageId: posted.id };
}

/**
 * Gives the winner the contest's role where Discord lets the bot: it needs Manage Roles (or
 * Administrator), and the role must be below the bot's highest role and not an integration's.
 * Says why not otherwise, without asking Discord to refuse.
 */
async function giveWinnerRole(deps: ContestDeps, contest: ContestRow, userId: string): Promise<NonNullable<ContestResults['role']>> {
  const roleId = contest.winnerRoleId!;
  try {
    const [roles, botId] = await Promise.all([deps.discord.guildRoles(contest.guildId), deps.discord.botUserId()]);
    const role = roles.find((r) => r.id === roleId);
    if (!role || role.id === contest.guildId) return 'role_gone';
    const me = await deps.discord.guildMember(contest.guildId, botId);
    const mine = roles.filter((r) => r.id === contest.guildId || me.roles.includes(r.id));
    const permissions = mine.reduce((all, r) => all | BigInt(r.permissions), 0n);
    const may = (permissions & PermissionFlagsBits.Administrator) !== 0n || (permissions & PermissionFlagsBits.ManageRoles) !== 0n;
    if (!may) return 'missing_permission';
    if (role.managed || !isBelow(role, mine)) return 'role_too_high';
    await deps.discord.addMemberRole(contest.guildId, userId, roleId, `Winner of the contest “${contest.theme.slice(0, 100)}”`);
    return 'given';
  } catch (err) {
    deps.logger.warn({ contestId: contest.id, error: describeDiscordError(err) }, 'could not give the winner role');
    return 'failed';
  }
}

/** Whether `role` is below the highest of `mine` (Discord orders roles by position). */
function isBelow(role: APIRole, mine: readonly APIRole[]): boolean {
  const highest = Math.max(0, ...mine.map((r) => r.position));
  return role.position < highest;
}
