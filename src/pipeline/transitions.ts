/**
 * Every change of a job's state, each one conditional on the state it leaves, in one
 * transaction with the credit movement it implies. Whoever loses a race (a webhook and a poll,
 * two workers) finds the condition false and changes nothing.
 */
import { and, eq, inArray, isNull, sql } from 'drizzle-orm';
import { returnJobCredits } from '../credits/index.js';
import { preparedOnce, type Transaction } from '../db/client.js';
import { jobs, voicePersonas, type JobError, type JobState, type StoredResult } from '../db/schema.js';
import type { TaskStatus } from '../music-api/index.js';
import type { PipelineDeps } from './deps.js';
import type { ReplyTarget } from './requests.js';
import { countRemix } from './charts.js';
import { getJob, type JobRow } from './job-rows.js';
import { takesWebhook } from './upstream.js';
import { describeShape, lackingResult } from './result-needs.js';
import { english } from '../i18n/index.js';

export type { JobError } from '../db/schema.js';

/** The error kind of a job whose task succeeded without what the job is for. */
const EMPTY_RESULT = 'empty_result';

export async function markSubmitted(deps: Pick<PipelineDeps, 'db' | 'now' | 'settings'>, jobId: string, taskId: string): Promise<boolean> {
  const now = deps.now();
  const deadlineAt = new Date(now.getTime() + deps.settings.pollDeadlineMs);
  const rows = await submittedMark(deps.db).execute({ jobId, taskId, now: now.toISOString(), deadlineAt: deadlineAt.toISOString() });
  return rows.length > 0;
}

/** markSubmitted's statement (one per submitted job). */
const submittedMark = preparedOnce((db) =>
  db
    .update(jobs)
    .set({
      state: 'submitted',
      upstreamTaskId: sql`${sql.placeholder('taskId')}`,
      submittedAt: sql`${sql.placeholder('now')}::timestamptz`,
      deadlineAt: sql`${sql.placeholder('deadlineAt')}::timestamptz`,
      updatedAt: sql`${sql.placeholder('now')}::timestamptz`,
    })
    .where(and(eq(jobs.id, sql.placeholder('jobId')), eq(jobs.state, 'submitting')))
    .returning({ id: jobs.id })
    .prepare('mark_submitted'),
);

/**
 * The task id of a create answered after its job was settled (found still `submitting` and
 * refunded while the worker that sent it was away, or finished by a webhook that named no
 * task): recorded anyway. A refunded job gets a deadline from now, and its task is polled like
 * any late result. Undefined when the job is not settled, or already has a task id.
 */
export async function recordLateTask(deps: Pick<PipelineDeps, 'db' | 'now' | 'settings'>, jobId: string, taskId: string): Promise<JobRow | undefined> {
  const now = deps.now();
  const deadlineAt = new Date(now.getTime() + deps.settings.pollDeadlineMs);
  const [row] = await deps.db
    .update(jobs)
    .set({
      upstreamTaskId: taskId,
      submittedAt: sql`coalesce(${jobs.submittedAt}, ${now.toISOString()}::timestamptz)`,
      deadlineAt: sql`case when ${jobs.state} = 'timed_out' then ${deadlineAt.toISOString()}::timestamptz else ${jobs.deadlineAt} end`,
      updatedAt: now,
    })
    .where(and(eq(jobs.id, jobId), inArray(jobs.state, ['timed_out', 'succeeded', 'failed']), isNull(jobs.upstreamTaskId)))
    .returning();
  return row;
}

/** Back to the queue after a retryable error, so the in-flight cap does not count it. */
export async function requeue(deps: Pick<PipelineDeps, 'db' | 'now'>, jobId: string): Promise<void> {
  await deps.db
    .update(jobs)
    .set({ state: 'queued', updatedAt: deps.now() })
    .where(and(eq(jobs.id, jobId), eq(jobs.state, 'submitting')));
}

async function finish(
  deps: Pick<PipelineDeps, 'db' | 'metrics' | 'now'>,
  jobId: string,
  from: readonly JobState[],
  to: JobState,
  credit: { kind: 'release' | 'refund'; reason: string } | undefined,
  fields: { error?: Omit<JobError, 'creditsReturned'>; result?: StoredResult; upstreamTaskId?: string; submitUncertain?: boolean },
  onFinished?: (tx: Transaction, job: JobRow) => Promise<void>,
): Promise<JobRow | undefined> {
  const now = deps.now();
  const finished = await deps.db.transaction(async (tx) => {
    const [job] = await tx
      .update(jobs)
      .set({
        state: to,
        completedAt: now,
        updatedAt: now,
        ...(fields.result && { result: fields.result }),
        ...(fields.upstreamTaskId && { upstreamTaskId: fields.upstreamTaskId }),
        // When the attempt that may have reached the service was first seen, kept if already known.
        ...(fields.submitUncertain && { submitUncertainAt: sql`coalesce(${jobs.submitUncertainAt}, ${now.toISOString()}::timestamptz)` }),
      })
      .where(and(eq(jobs.id, jobId), inArray(jobs.state, [...from])))
      .returning();
    if (!job) return undefined;
    let returned = 0;
    if (credit) returned = (await returnJobCredits(tx, { jobId, kind: credit.kind, reason: credit.reason })).returned;
    if (fields.error) {
      const error: JobError = { ...fields.error, creditsReturned: returned };
      await tx.update(jobs).set({ error }).where(eq(jobs.id, jobId));
      job.error = error;
    }
    if (onFinished) await onFinished(tx, job);
    return job;
  });
  if (finished) {
    deps.metrics.jobsFinished.inc({ kind: finished.kind, state: to });
    const returned = finished.error?.creditsReturned ?? 0;
    if (returned > 0) deps.metrics.credits.inc({ movement: credit?.kind === 'release' ? 'released' : 'refunded' }, returned);
    else if (to === 'succeeded') deps.metrics.credits.inc({ movement: 'charged' }, finished.cost);
  }
  return finished;
}

/** A permanent error at submission: the service charged nothing, so the reservation is released. */
export function failAtSubmission(deps: Pick<PipelineDeps, 'db' | 'logger' | 'metrics' | 'now'>, jobId: string, error: Omit<JobError, 'creditsReturned'>) {
  return finish(deps, jobId, ['queued', 'submitting'], 'failed', { kind: 'release', reason: error.kind }, { error });
}

/**
 * The service finished the task. A failed task is refunded, as the service refunds it, and so is
 * a success without what the job is for (`failEmptySuccess`). A task that succeeds after the bot
 * gave up on its job (refunded) is still the member's: see `arrivedLate`.
 */
export async function completeJob(deps: Pick<PipelineDeps, 'db' | 'logger' | 'metrics' | 'now'>, jobId: string, status: TaskStatus, taskId?: string): Promise<JobRow | undefined> {
  const lacking = status.state === 'succeeded' ? await lackingFromSuccess(deps, jobId, status) : undefined;
  if (lacking !== undefined) return failEmptySuccess(deps, jobId, status, lacking, taskId);
  const finished = await finishAsReported(deps, jobId, status, taskId);
  if (!finished) await noteAnotherEnd(deps, jobId, status);
  return finished;
}

/** The field a success lacks for its job's kind (see result-needs.ts); undefined when it has it, or the job is gone. */
async function lackingFromSuccess(deps: Pick<PipelineDeps, 'db'>, jobId: string, status: TaskStatus): Promise<string | undefined> {
  const job = await getJob(deps.db, jobId);
  return job && lackingResult(job.kind, job.request, toStoredResult(status));
}

/**
 * A success without what the job is for: failed and refunded, though the service charged for it
 * (the account check counts it as spent). Logged once, with the body's field names and types, so
 * that an operator sees a field the service renamed. A job already ended is left as it is.
 */
async function failEmptySuccess(deps: Pick<PipelineDeps, 'db' | 'logger' | 'metrics' | 'now'>, jobId: string, status: TaskStatus, lacking: string, taskId: string | undefined) {
  const failed = await finish(
    deps,
    jobId,
    ['submitting', 'submitted'],
    'failed',
    { kind: 'refund', reason: EMPTY_RESULT },
    {
      error: { kind: EMPTY_RESULT, message: english('failure.emptyResult') },
      result: toStoredResult(status),
      ...(taskId && { upstreamTaskId: taskId }),
    },
  );
  if (failed) {
    deps.logger.warn(
      { jobId, kind: failed.kind, taskId: failed.upstreamTaskId, lacking, upstreamState: status.upstreamState, shape: describeShape(status.raw) },
      'task reported success without its result; refunded as failed',
    );
  }
  return failed;
}

/**
 * A final state reported for a job that already ended otherwise at the service (succeeded,
 * then failed, or the reverse): the first stands. Counted and logged, so that an operator sees it.
 */
async function noteAnotherEnd(deps: Pick<PipelineDeps, 'db' | 'logger' | 'metrics'>, jobId: string, status: TaskStatus): Promise<void> {
  const job = await getJob(deps.db, jobId);
  if (!job || (job.state !== 'succeeded' && job.state !== 'failed') || job.state === status.state) return;
  deps.metrics.secondFinalStates.inc({ kind: job.kind, standing: job.state, reported: status.state });
  deps.logger.warn(
    { jobId, taskId: job.upstreamTaskId, standing: job.state, reported: status.state, upstreamState: status.upstreamState },
    'a second, different final state for a job; the first stands',
  );
}

async function finishAsReported(deps: Pick<PipelineDeps, 'db' | 'logger' | 'metrics' | 'now'>, jobId: string, status: TaskStatus, taskId: string | undefined): Promise<JobRow | undefined> {
  const result = toStoredResult(status);
  if (status.state === 'failed') {
    return finish(
      deps,
      jobId,
      ['submitting', 'submitted'],
      'failed',
      { kind: 'refund', reason: 'upstream_failed' },
      {
        error: { kind: 'upstream_failed', message: english('failure.upstreamFailed') },
        result,
        ...(taskId && { upstreamTaskId: taskId }),
      },
    );
  }
  const finished = await finish(
    deps,
    jobId,
    ['submitting', 'submitted'],
    'succeeded',
    undefined,
    { result, ...(taskId && { upstreamTaskId: taskId }) },
    async (tx, job) => {
      await savePersona(tx, job, status);
      await countRemix(tx, job, job.completedAt ?? deps.now());
    },
  );
  return finished ?? arrivedLate(deps, jobId, result, status, taskId);
}

async function savePersona(tx: Transaction, job: JobRow, status: TaskStatus): Promise<void> {
  if (job.kind !== 'voice' || !status.personaId) return;
  const name = typeof job.request.name === 'string' ? job.request.name : (status.personaName ?? 'voice');
  await tx
    .insert(voicePersonas)
    .values({ guildId: job.guildId, ownerId: job.userId, name, personaId: status.personaId, jobId: job.id })
    .onConflictDoNothing();
}

/**
 * A success for a job already timed out and refunded (an unconfirmed submission, or a deadline
 * passed): the member gets the result, free. No credit moves; the job's error keeps the refund,
 * which is how the result says it was free. Delivery starts again, so the result is posted.
 */
async function arrivedLate(
  deps: Pick<PipelineDeps, 'db' | 'logger' | 'metrics' | 'now'>,
  jobId: string,
  result: StoredResult,
  status: TaskStatus,
  taskId: string | undefined,
): Promise<JobRow | undefined> {
  const now = deps.now();
  const job = await deps.db.transaction(async (tx) => {
    const [row] = await tx
      .update(jobs)
      .set({
        state: 'succeeded',
        result,
        completedAt: now,
        updatedAt: now,
        deliveryState: 'pending',
        deliveryClaimedAt: null,
        ...(taskId && { upstreamTaskId: sql`coalesce(${jobs.upstreamTaskId}, ${taskId})` }),
      })
      .where(and(eq(jobs.id, jobId), eq(jobs.state, 'timed_out'), sql`(${jobs.error}->>'creditsReturned')::int > 0`))
      .returning();
    if (row) {
      await savePersona(tx, row, status);
      await countRemix(tx, row, now);
    }
    return row;
  });
  if (job) {
    deps.metrics.jobsFinished.inc({ kind: job.kind, state: 'succeeded_late' });
    deps.logger.info({ jobId, taskId, reason: job.error?.kind }, 'a refunded job arrived after all; its result is posted free');
  }
  return job;
}

/**
 * How long after its deadline a refunded job whose task id is known is still polled, so that a
 * task that ends late is posted, free: as long again as the poll deadline.
 */
export function lateGraceMs(settings: Pick<PipelineDeps['settings'], 'pollDeadlineMs'>): number {
  return settings.pollDeadlineMs;
}

/** Until when a timed-out job is still polled for its task: its deadline's grace. */
export function followedUntil(job: Pick<JobRow, 'deadlineAt' | 'completedAt'>, settings: Pick<PipelineDeps['settings'], 'pollDeadlineMs'>): Date | undefined {
  const deadline = job.deadlineAt ?? job.completedAt;
  return deadline ? new Date(deadline.getTime() + lateGraceMs(settings)) : undefined;
}

/** Not finished by its deadline (or never confirmed): refunded, and marked so an operator sees it. */
export function timeOutJob(deps: Pick<PipelineDeps, 'db' | 'metrics' | 'now' | 'settings'>, job: Pick<JobRow, 'id' | 'kind'>, uncertain: boolean) {
  return finish(
    deps,
    job.id,
    ['submitting', 'submitted'],
    'timed_out',
    { kind: 'refund', reason: uncertain ? 'unconfirmed_submission' : 'deadline' },
    {
      error: uncertain
        ? {
            kind: 'unconfirmed_submission',
            message: english('failure.unconfirmed'),
            // Only a webhook can still bring a task the bot never learnt the id of.
            ...(deps.settings.publicUrl && takesWebhook(job.kind) ? { mayArrive: true } : {}),
          }
        : { kind: 'deadline', message: english('failure.deadline') },
      submitUncertain: uncertain,
    },
  );
}

/** Cancelled before it was sent: the reservation is released. */
export function cancelQueuedJob(deps: Pick<PipelineDeps, 'db' | 'logger' | 'metrics' | 'now'>, jobId: string) {
  return finish(deps, jobId, ['queued'], 'cancelled', { kind: 'release', reason: 'cancelled' }, {
    error: { kind: 'cancelled', message: english('failure.cancelledQueued') },
  });
}

const HALF_SURROGATE_PAIR = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Postgres jsonb takes neither U+0000 nor half a surrogate pair (an upstream text cut in the
 * middle of an emoji): a result holding one could never be stored, and its job never settled.
 */
function storable<T extends string | null | undefined>(text: T): T {
  return (typeof text === 'string' ? text.replaceAll('\u0000', '').replace(HALF_SURROGATE_PAIR, '\uFFFD') : text) as T;
}

/** What the bot keeps of a finished task: everything delivery needs, nothing secret. */
export function toStoredResult(status: TaskStatus): StoredResult {
  return {
    state: status.state,
    clips: status.clips.map((clip) => ({
      clipId: clip.clipId,
      title: storable(clip.title),
      lyrics: storable(clip.lyrics),
      tags: storable(clip.tags),
      audioUrl: clip.audioUrl,
      wavUrl: clip.wavUrl,
      imageUrl: clip.imageUrl,
      videoUrl: clip.videoUrl,
      downloadUrl: clip.downloadUrl,
      durationSeconds: clip.durationSeconds,
    })),
    ...(status.lyrics !== undefined && { lyrics: storable(status.lyrics) }),
    ...(status.lyricsTitle !== undefined && { lyricsTitle: storable(status.lyricsTitle) }),
    ...(status.personaId !== undefined && { personaId: status.personaId }),
    ...(status.personaName !== undefined && { personaName: storable(status.personaName) }),
  };
}

/** A cancelled job's delivery is done: the cancel command answered the member, and nothing posts its result. */
export async function closeDeliveryOfCancelled(deps: Pick<PipelineDeps, 'db' | 'now'>, jobId: string): Promise<void> {
  await deps.db.update(jobs).set({ deliveryState: 'delivered', deliveredAt: deps.now() }).where(eq(jobs.id, jobId));
}

/** A finished job's result is to be posted again, through `reply`'s interaction when given. */
export async function reopenDelivery(deps: Pick<PipelineDeps, 'db'>, jobId: string, reply?: ReplyTarget): Promise<void> {
  await deps.db
    .update(jobs)
    .set({
      deliveryState: 'pending',
      deliveryClaimedAt: null,
      ...(reply && { applicationId: reply.applicationId, interactionToken: reply.interactionToken, interactionAt: reply.createdAt }),
    })
    .where(eq(jobs.id, jobId));
}

/** The job's result cannot be posted (no access to its channel): kept for `/jobs show`. */
export async function failDelivery(deps: Pick<PipelineDeps, 'db' | 'now'>, jobId: string): Promise<void> {
  await deps.db.update(jobs).set({ deliveryState: 'failed', updatedAt: deps.now() }).where(eq(jobs.id, jobId));
}

/** The delivery failed for now: its claim is let go, for the retry to take. */
export async function releaseDeliveryClaim(deps: Pick<PipelineDeps, 'db'>, jobId: string): Promise<void> {
  await deps.db.update(jobs).set({ deliveryClaimedAt: null }).where(eq(jobs.id, jobId));
}

/** The result of the job in `state` is posted as `messageId`; a job that changed state since is left to post again. */
export async function markDelivered(deps: Pick<PipelineDeps, 'db' | 'now'>, jobId: string, state: JobState, messageId: string): Promise<void> {
  await deps.db
    .update(jobs)
    .set({ deliveryState: 'delivered', messageId, deliveredAt: deps.now(), updatedAt: deps.now() })
    .where(and(eq(jobs.id, jobId), eq(jobs.state, state)));
}
