/**
 * Sends a queued job to the music service. Retryable errors go back to the queue with
 * backoff; permanent ones fail the job and release its credits. A create that may have
 * reached the service is never sent again (docs/architecture.md, "The submission rule").
 */
import { DelayedError, type Job } from 'bullmq';
import { isMusicApiError } from '../../music-api/index.js';
import { submissionFailure } from '../account-refusal.js';
import { withdrawCancel } from '../cancel-button.js';
import { showProgress, showProgressSoon } from '../post-result.js';
import type { PipelineDeps } from '../deps.js';
import { getJob, takeForSubmission, type JobRow } from '../job-rows.js';
import { recordOutsideEffect } from '../record-outside-effect.js';
import { generationRequestSchema } from '../requests.js';
import {
  failAtSubmission,
  markSubmitted,
  recordLateTask,
  requeue,
  timeOutJob,
} from '../transitions.js';
import { submitUpstream } from '../upstream.js';
import { webhookUrlFor } from '../../webhook-address.js';
import { submitPayloadSchema, type SubmitPayload } from '../../queue/queues.js';
import { initialPollDelayMs, webhooksOn } from './poll.js';
import { backoffWithJitter, deliverNowOrLater } from './deliver-now-or-later.js';

/**
 * The first poll comes at a little over half the kind's expected duration, or at the whole of
 * it when webhooks are on and the poll is only the backup (see `initialPollDelayMs`).
 */
export function firstPollDelayMs(deps: Pick<PipelineDeps, 'settings'>, job: Pick<JobRow, 'kind'>): number {
  const { expectedSeconds, pollIntervalMs, pollDeadlineMs } = deps.settings;
  return initialPollDelayMs(expectedSeconds[job.kind], pollIntervalMs, pollDeadlineMs, webhooksOn(deps.settings, job.kind));
}

/**
 * A job whose submission may have reached the service (an answer lost, cut off, a 5xx but the
 * spec's 502 `upstream_error`, or an error the client did not sort): never sent again. The
 * member gets the credits back now; should the service have made the task after all, its
 * webhook still finds the job through its URL and the result is posted free (see `completeJob`). The account check names these jobs beside its drift.
 */
async function settleUncertain(deps: Pick<PipelineDeps, 'db' | 'discord' | 'logger' | 'metrics' | 'musicApi' | 'now' | 'queues' | 'settings'>, job: JobRow, reason: string): Promise<void> {
  deps.metrics.submissionsUncertain.inc({ kind: job.kind });
  deps.logger.warn({ jobId: job.id, reason, webhooks: webhooksOn(deps.settings, job.kind) }, 'submission unconfirmed; refunded, not sending it again');
  if (await timeOutJob(deps, job, true)) await deliverNowOrLater(deps, job.id);
}

export function createSubmitProcessor(deps: PipelineDeps) {
  return async (entry: Job<SubmitPayload>, token?: string): Promise<void> => {
    const { jobId, cancelOffered, taskId } = submitPayloadSchema.parse(entry.data);
    // A task the service accepted whose id Postgres could not take yet: written before anything else.
    if (taskId !== undefined) return recordAcceptedTask(deps, entry, token, taskId);
    // The row, and the claim when it is queued, in one round trip.
    const taken = await takeForSubmission(deps.db, jobId, deps.settings.upstreamMaxInFlight);
    if (!taken) return;
    const { job, outcome: claim } = taken;

    if (job.state === 'submitted') {
      await deps.queues.enqueuePoll(jobId, 0);
      return;
    }
    if (job.state === 'submitting') {
      // A worker died during the call, or an earlier attempt timed out: the task may exist.
      await settleUncertain(deps, job, 'interrupted');
      return;
    }
    if (claim === null || claim === 'not_queued') return;
    if (claim === 'cap_reached') {
      await showProgress(deps, job);
      await entry.moveToDelayed(Date.now() + backoffWithJitter(1, deps.settings.capWaitMs, deps.settings.capWaitMs * 2), token);
      throw new DelayedError();
    }

    // Taken: no longer cancellable. Its Cancel button, if offered, goes beside the submission, not before it.
    if (cancelOffered !== false) {
      void withdrawCancel(deps, job).catch((err: unknown) => deps.logger.debug({ jobId, err }, 'could not withdraw the cancel button'));
    }

    // Read back from the job's row, which an earlier version of the bot may have written.
    const request = generationRequestSchema.parse(job.request);
    const webhook = deps.settings.publicUrl
      ? { url: webhookUrlFor(deps.settings.publicUrl, jobId), secret: job.webhookSecret ?? undefined }
      : undefined;
    const started = performance.now();
    let accepted: Awaited<ReturnType<typeof submitUpstream>>;
    try {
      accepted = await submitUpstream(deps.musicApi, request, webhook);
    } catch (err) {
      if (!isMusicApiError(err)) {
        // Only the client's own errors say whether the request left; any other may come after it did.
        deps.logger.error({ jobId, err }, 'unexpected error while submitting');
        await settleUncertain(deps, job, 'unexpected_error');
        return;
      }
      deps.metrics.upstreamErrors.inc({ type: err.type ?? err.kind });
      if (err.maybeAccepted) {
        await settleUncertain(deps, job, err.status === undefined ? err.kind : `${err.kind} ${err.status}`);
        return;
      }
      const attempts = entry.opts.attempts ?? 1;
      if (err.retryable && entry.attemptsMade + 1 < attempts) {
        deps.logger.info({ jobId, kind: err.kind, attempt: entry.attemptsMade + 1 }, 'retryable submission error');
        await requeue(deps, jobId);
        throw err;
      }
      deps.logger.warn({ jobId, error: err.toJSON() }, 'submission failed permanently; credits released');
      if (await failAtSubmission(deps, jobId, await submissionFailure(deps, job, err))) {
        await deliverNowOrLater(deps, jobId);
      }
      return;
    }
    deps.metrics.upstreamLatency.observe({ operation: 'submit' }, (performance.now() - started) / 1000);
    await recordAcceptedTask(deps, entry, token, accepted.taskId, job);
  };
}

/** How long an entry whose task id could not be written waits before it tries again. */
export const RECORD_AGAIN_MS = 1_000;

/**
 * Writes down the task the service accepted: failing here would leave the job `submitting`
 * without its task id, to be refunded, or send it twice. Postgres away past the patience: the id
 * goes with the queue entry, which comes back to write it. A job settled meanwhile (found still
 * `submitting` by another worker and refunded) gets the id anyway, and its task is followed
 * like any late result.
 */
async function recordAcceptedTask(deps: PipelineDeps, entry: Job<SubmitPayload>, token: string | undefined, taskId: string, sent?: JobRow): Promise<void> {
  const { jobId } = entry.data;
  let recorded: 'submitted' | 'not_recorded' | JobRow;
  try {
    recorded = await recordOutsideEffect(
      deps,
      { jobId, effect: 'submission' },
      async () => ((await markSubmitted(deps, jobId, taskId)) ? ('submitted' as const) : ((await recordLateTask(deps, jobId, taskId)) ?? ('not_recorded' as const))),
      deps.settings.recordPatienceMs,
    );
  } catch {
    deps.logger.warn({ jobId, taskId, retryInMs: RECORD_AGAIN_MS }, 'could not record an accepted task; its id stays with the queue entry');
    await entry.updateData({ ...entry.data, taskId });
    await entry.moveToDelayed(Date.now() + RECORD_AGAIN_MS, token);
    throw new DelayedError();
  }
  const job = sent ?? (await getJob(deps.db, jobId));
  if (!job) return;
  if (recorded === 'submitted') {
    deps.logger.info({ jobId, taskId }, 'job submitted');
    await deps.queues.enqueuePoll(jobId, firstPollDelayMs(deps, job));
    // Off the submission's path: the next entry need not wait for Discord.
    showProgressSoon(deps, { ...job, state: 'submitted', submittedAt: deps.now() });
    return;
  }
  if (recorded === 'not_recorded') {
    deps.logger.warn({ jobId, taskId }, 'a task accepted for a job that no longer takes one; not followed');
    return;
  }
  deps.logger.warn({ jobId, taskId, state: recorded.state }, 'a task accepted after its job was settled; recorded, and followed as a late result');
  if (recorded.state === 'timed_out') await deps.queues.enqueuePoll(jobId, firstPollDelayMs(deps, job));
}
