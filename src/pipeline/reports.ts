/**
 * Members' reports of posted results, and what the guild's moderators decide about them. A
 * report is one row per member per result; the first report of a result posts one review
 * message in the guild's review channel, and every later report or decision edits that same
 * message (its row is locked while Discord is asked, so two reports at once never post two).
 * A hidden or deleted result leaves every list (job-rows.ts's `isShownResult`) and its message
 * says so. Why: docs/decisions/reports-and-review.md
 */
import { and, count, desc, eq, isNull, sql } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { auditLog, resultReports, resultReviews, voicePersonas, type ReviewOutcome } from '../db/schema.js';
import { describeDiscordError, nonceFor, type OutgoingMessage } from '../discord-rest/discord-delivery.js';
import { translator } from '../i18n/index.js';
import type { PipelineDeps } from './deps.js';
import { getJob, isShownResult, removeResultRow, type JobRow } from './job-rows.js';
import { REPORTABLE_KINDS, renderRemoved } from './render.js';
import { renderReview, type ReviewView } from './render-review.js';

export { REPORTABLE_KINDS };

/** How long a report's reason may be (the modal's limit). */
export const REPORT_REASON_MAX = 300;
/** The review message lists this many reports, the newest; the rest are counted. */
export const REVIEW_REPORTS_SHOWN = 10;
/** A block from a review lasts this long; `/moderation block` sets any other length. */
export const REVIEW_BLOCK_DAYS = 30;

type Deps = Pick<PipelineDeps, 'db' | 'discord' | 'logger' | 'now'>;

export type ReportOutcome =
  | { readonly outcome: 'recorded'; readonly reports: number }
  | { readonly outcome: 'already_reported' }
  /** Not a result of this guild that can be reported, or one already removed. */
  | { readonly outcome: 'not_reportable' };

/** Whether members may report this job: a shown result of a reportable kind. */
export function isReportable(job: JobRow | undefined, guildId: string): job is JobRow {
  return job !== undefined && job.guildId === guildId && REPORTABLE_KINDS.includes(job.kind) && isShownResult(job);
}

/**
 * Records a member's report and brings the review message up to date (posting it in
 * `reviewChannelId` the first time). Without a review channel, or when Discord refuses, the
 * report is recorded all the same and listed by `/moderation reports`.
 */
export async function reportResult(
  deps: Deps,
  input: { guildId: string; jobId: string; reporterId: string; reason: string; reviewChannelId: string | null },
): Promise<ReportOutcome> {
  const now = deps.now();
  const job = await getJob(deps.db, input.jobId);
  if (!isReportable(job, input.guildId)) return { outcome: 'not_reportable' };
  const reason = input.reason.trim().slice(0, REPORT_REASON_MAX);
  const recorded = await deps.db.transaction(async (tx) => {
    const [report] = await tx
      .insert(resultReports)
      .values({ jobId: job.id, reporterId: input.reporterId, guildId: job.guildId, reason, createdAt: now })
      .onConflictDoNothing()
      .returning({ jobId: resultReports.jobId });
    if (!report) return false;
    // A dismissed review opens again with a new report; a decided one (hidden, blocked) stays decided.
    await tx
      .insert(resultReviews)
      .values({ jobId: job.id, guildId: job.guildId, reportedAt: now, createdAt: now })
      .onConflictDoUpdate({
        target: resultReviews.jobId,
        set: {
          reportedAt: now,
          outcome: sql`case when ${resultReviews.outcome} = 'dismissed' then null else ${resultReviews.outcome} end`,
          decidedBy: sql`case when ${resultReviews.outcome} = 'dismissed' then null else ${resultReviews.decidedBy} end`,
          decidedAt: sql`case when ${resultReviews.outcome} = 'dismissed' then null else ${resultReviews.decidedAt} end`,
        },
      });
    await tx.insert(auditLog).values({ guildId: job.guildId, actorId: input.reporterId, action: 'result_reported', details: { jobId: job.id, requesterId: job.userId } });
    return true;
  });
  if (!recorded) return { outcome: 'already_reported' };
  const reports = await syncReviewMessage(deps, job.id, input.reviewChannelId);
  deps.logger.info({ guildId: job.guildId, jobId: job.id, reports }, 'result reported');
  return { outcome: 'recorded', reports };
}

export type DecisionOutcome =
  | { readonly outcome: 'decided'; readonly job: JobRow }
  /** Hidden already (or deleted by its requester): nothing more to decide. */
  | { readonly outcome: 'already_decided' }
  | { readonly outcome: 'not_found' };

export interface DecisionInput {
  readonly guildId: string;
  readonly jobId: string;
  readonly actorId: string;
  readonly outcome: ReviewOutcome;
  /** Where the decision was made, when not in Discord: the audit log names it. */
  readonly source?: 'dashboard';
}

/**
 * A moderator's decision on a reported result, from its review message (or, for `hidden`, on
 * any shown result, from the dashboard's library): `hidden` takes the
 * result out of every list and edits its message; `blocked` records that the requester was
 * blocked (the caller blocks them first, through src/guilds/blocks.ts); `dismissed` closes the
 * review until someone reports the result again. Each is in the audit log, and edits the review.
 */
export async function decideReport(
  deps: Deps,
  input: DecisionInput,
): Promise<DecisionOutcome> {
  const now = deps.now();
  const job = await getJob(deps.db, input.jobId);
  if (!job || job.guildId !== input.guildId) return { outcome: 'not_found' };
  const decided = await deps.db.transaction(async (tx) => {
    const [review] = await tx.select().from(resultReviews).where(eq(resultReviews.jobId, job.id)).for('update');
    // Only hiding needs no report: a moderator may hide any song from the dashboard's library.
    if (!review && input.outcome !== 'hidden') return undefined;
    if (review?.outcome === 'hidden' || job.removedAt !== null || (!review && !isShownResult(job))) return 'already';
    if (input.outcome === 'hidden' && !(await removeResult(tx, job, { removal: 'hidden', by: input.actorId, at: now }))) return 'already';
    if (review) {
      await tx
        .update(resultReviews)
        .set({ outcome: input.outcome, decidedBy: input.actorId, decidedAt: now })
        .where(eq(resultReviews.jobId, job.id));
    }
    const details = { jobId: job.id, requesterId: job.userId, ...(input.source && { source: input.source }) };
    await tx.insert(auditLog).values({ guildId: job.guildId, actorId: input.actorId, action: `report_${input.outcome}`, details });
    return 'decided';
  });
  if (decided === undefined) return { outcome: 'not_found' };
  if (decided === 'already') return { outcome: 'already_decided' };
  const after = (await getJob(deps.db, job.id)) ?? job;
  if (input.outcome === 'hidden') await showRemoved(deps, after);
  await syncReviewMessage(deps, job.id, null);
  deps.logger.info({ guildId: job.guildId, jobId: job.id, outcome: input.outcome }, 'report decided');
  return { outcome: 'decided', job: after };
}

export type DeleteOutcome =
  | { readonly outcome: 'deleted'; readonly cost: number }
  | { readonly outcome: 'not_yours' }
  | { readonly outcome: 'gone' };

/**
 * The requester deletes their own result: it leaves the library and every list, its message
 * is deleted, and an open review says so. Credits are not returned.
 */
export async function deleteOwnResult(deps: Deps, input: { guildId: string; jobId: string; userId: string }): Promise<DeleteOutcome> {
  const job = await getJob(deps.db, input.jobId);
  if (!job || job.guildId !== input.guildId || !isShownResult(job)) return { outcome: 'gone' };
  if (job.userId !== input.userId) return { outcome: 'not_yours' };
  const removed = await deps.db.transaction(async (tx) => {
    const row = await removeResult(tx, job, { removal: 'deleted', by: input.userId, at: deps.now() });
    if (row) await tx.insert(auditLog).values({ guildId: job.guildId, actorId: input.userId, action: 'result_deleted', details: { jobId: job.id } });
    return row;
  });
  if (!removed) return { outcome: 'gone' };
  if (removed.messageId) {
    await deps.discord
      .deleteChannelMessage(removed.channelId, removed.messageId)
      .catch((err: unknown) => deps.logger.warn({ jobId: job.id, error: describeDiscordError(err) }, 'could not delete the result message'));
  }
  await syncReviewMessage(deps, job.id, null);
  deps.logger.info({ guildId: job.guildId, jobId: job.id }, 'result deleted by its requester');
  return { outcome: 'deleted', cost: removed.cost };
}

/**
 * Takes a result out of every list (undefined when it was already removed); a voice's persona
 * goes with it, so no one can sing with it any more (the songs already made stay, each
 * reportable on its own).
 */
async function removeResult(tx: Executor, job: JobRow, removal: Parameters<typeof removeResultRow>[2]): Promise<JobRow | undefined> {
  const row = await removeResultRow(tx, job.id, removal);
  if (row && job.kind === 'voice') {
    await tx.update(voicePersonas).set({ deletedAt: removal.at }).where(and(eq(voicePersonas.jobId, job.id), isNull(voicePersonas.deletedAt)));
  }
  return row;
}

/** One open review as `/moderation reports` lists it. */
export interface OpenReport {
  readonly jobId: string;
  readonly reports: number;
  readonly reportedAt: Date;
  readonly job: JobRow | undefined;
}

/** The guild's open reviews, the most recently reported first, at most `limit` after the first `offset`, and how many are open. */
export async function openReports(db: Executor, guildId: string, limit: number, offset = 0): Promise<{ total: number; shown: OpenReport[] }> {
  const open = and(eq(resultReviews.guildId, guildId), isNull(resultReviews.outcome));
  const [rows, [total]] = await Promise.all([
    db
      .select({
        jobId: resultReviews.jobId,
        reportedAt: resultReviews.reportedAt,
        reports: sql<number>`(select count(*)::integer from result_reports r where r.job_id = result_reviews.job_id)`,
      })
      .from(resultReviews)
      .where(open)
      .orderBy(desc(resultReviews.reportedAt), desc(resultReviews.jobId))
      .limit(limit)
      .offset(offset),
    db.select({ n: count() }).from(resultReviews).where(open),
  ]);
  const shown = await Promise.all(rows.map(async (row) => ({ ...row, job: await getJob(db, row.jobId) })));
  return { total: total?.n ?? 0, shown };
}

/** Clears the reasons of reports made before `before` (at most `batch`); who reported what, and when, stay. */
export async function clearReportReasons(db: Executor, before: Date, batch: number): Promise<number> {
  const { rowCount } = await db.execute(sql`
    update ${resultReports} set reason = null
    where (job_id, reporter_id) in (
      select job_id, reporter_id from ${resultReports} where reason is not null and created_at < ${before.toISOString()} limit ${batch})`);
  return rowCount ?? 0;
}

/**
 * Clears the names of voices retired with their removed result before `before` (at most
 * `batch`), as a removed song's texts are cleared; who made them and when stay.
 */
export async function clearRemovedVoiceNames(db: Executor, before: Date, batch: number): Promise<number> {
  const { rowCount } = await db.execute(sql`
    update ${voicePersonas} set name = ''
    where id in (
      select p.id from ${voicePersonas} p join jobs j on j.id = p.job_id
      where p.deleted_at is not null and p.name <> '' and j.removed_at is not null and j.removed_at < ${before.toISOString()}
      limit ${batch})`);
  return rowCount ?? 0;
}

/** Edits the result's message to say it was removed (its files go too). A message Discord no longer has is left be. */
async function showRemoved(deps: Deps, job: JobRow): Promise<void> {
  if (!job.messageId) return;
  try {
    await deps.discord.editChannelMessage(job.channelId, job.messageId, renderRemoved(job, translator(job.guildLocale)));
  } catch (err) {
    deps.logger.warn({ jobId: job.id, error: describeDiscordError(err) }, 'could not edit the removed result');
  }
}

/**
 * Brings the result's review message up to date, under the review row's lock: edits it where
 * it is, or posts it in `channelId` when there is none yet (a nonce per result keeps a retried
 * post single). Returns how many reports the result has. Never throws for Discord.
 */
async function syncReviewMessage(deps: Deps, jobId: string, channelId: string | null): Promise<number> {
  return deps.db.transaction(async (tx) => {
    const [review] = await tx.select().from(resultReviews).where(eq(resultReviews.jobId, jobId)).for('update');
    if (!review) return 0;
    const job = await getJob(tx, jobId);
    const reports = await tx
      .select({ reporterId: resultReports.reporterId, reason: resultReports.reason, createdAt: resultReports.createdAt })
      .from(resultReports)
      .where(eq(resultReports.jobId, jobId))
      .orderBy(desc(resultReports.createdAt))
      .limit(REVIEW_REPORTS_SHOWN);
    const [total] = await tx.select({ n: count() }).from(resultReports).where(eq(resultReports.jobId, jobId));
    if (!job) return total?.n ?? 0;
    const view: ReviewView = { job, review, reports, total: total?.n ?? 0, blockDays: REVIEW_BLOCK_DAYS };
    const message: OutgoingMessage = renderReview(view, translator(job.guildLocale));
    try {
      if (review.channelId && review.messageId) {
        await deps.discord.editChannelMessage(review.channelId, review.messageId, message);
      } else if (channelId) {
        const nonce = nonceFor(`review:${jobId}`);
        const posted = await deps.discord.postChannelMessage(channelId, { ...message, nonce, enforce_nonce: true });
        await tx.update(resultReviews).set({ channelId, messageId: posted.id }).where(eq(resultReviews.jobId, jobId));
      }
    } catch (err) {
      deps.logger.warn({ jobId, guildId: job.guildId, error: describeDiscordError(err) }, 'could not post or edit the review message');
    }
    return view.total;
  });
}
