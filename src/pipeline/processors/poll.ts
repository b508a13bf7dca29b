/**
 * Polling, always on as the fallback to webhooks: first at a share of the kind's expected
 * duration, then at a fixed share of the time since submission, until the task ends or its
 * deadline passes; looser with webhooks on. Why: docs/decisions/poll-schedule.md
 */
import { DelayedError, type Job } from 'bullmq';
import { showProgress } from '../post-result.js';
import { isMusicApiError, type TaskStatus } from '../../music-api/index.js';
import type { JobKind } from '../../db/schema.js';
import type { PipelineDeps, PipelineSettings } from '../deps.js';
import { getJob } from '../job-rows.js';
import { completeJob, followedUntil, timeOutJob } from '../transitions.js';
import { pollUpstream, takesWebhook } from '../upstream.js';
import { pollPayloadSchema, type PollPayload } from '../../queue/queues.js';
import { deliverNowOrLater } from './deliver-now-or-later.js';

/** Webhooks off: the first poll comes this share of the kind's expected duration after submission. */
export const FIRST_POLL_SHARE = 0.55;
/** Webhooks off: each later poll waits this share of the time since submission (within the interval's bounds). */
export const POLL_SPACING_SHARE = 0.12;
/** Webhooks on: the first (backup) poll comes this share of the kind's expected duration after submission. */
export const BACKUP_FIRST_POLL_SHARE = 1;
/** Webhooks on: each later (backup) poll waits this share of the time since submission (within the interval's bounds). */
export const BACKUP_POLL_SPACING_SHARE = 0.4;

/** Whether a job of `kind` is told of its end by webhook, so that polls are only the backup. */
export function webhooksOn(settings: Pick<PipelineSettings, 'publicUrl'>, kind: JobKind): boolean {
  return Boolean(settings.publicUrl) && takesWebhook(kind);
}

/**
 * When to poll a task first, in ms after submission: at `FIRST_POLL_SHARE` of the kind's
 * expected duration (`BACKUP_FIRST_POLL_SHARE` with webhooks on), no sooner than
 * `interval.min`, never past the deadline.
 */
export function initialPollDelayMs(
  expectedSeconds: number,
  interval: PipelineSettings['pollIntervalMs'],
  untilDeadlineMs = Infinity,
  webhooks = false,
): number {
  const share = webhooks ? BACKUP_FIRST_POLL_SHARE : FIRST_POLL_SHARE;
  return Math.max(0, Math.min(untilDeadlineMs, Math.max(interval.min, Math.round(expectedSeconds * 1000 * share))));
}

/**
 * How long to wait after a poll that found the task still running, given the time since
 * submission: `POLL_SPACING_SHARE` of it (`BACKUP_POLL_SPACING_SHARE` with webhooks on),
 * within [`interval.min`, `interval.max`], never past the deadline.
 */
export function nextPollDelayMs(
  elapsedMs: number,
  interval: PipelineSettings['pollIntervalMs'],
  untilDeadlineMs = Infinity,
  webhooks = false,
): number {
  const share = webhooks ? BACKUP_POLL_SPACING_SHARE : POLL_SPACING_SHARE;
  const gap = Math.min(interval.max, Math.max(interval.min, Math.round(Math.max(0, elapsedMs) * share)));
  return Math.max(0, Math.min(gap, untilDeadlineMs));
}

export function createPollProcessor(deps: PipelineDeps) {
  return async (entry: Job<PollPayload>, token?: string): Promise<void> => {
    const { jobId, attempt } = pollPayloadSchema.parse(entry.data);
    const job = await getJob(deps.db, jobId);
    if (!job) return;
    const open = job.state === 'submitting' || job.state === 'submitted';
    // A job refunded while its task may still end is polled through its deadline's grace.
    const late = job.state === 'timed_out' && job.upstreamTaskId !== null;
    if (!open && !late) return;

    const now = deps.now();
    // The next poll is timed from this one, not from the end of its answer and progress edit.
    const polledAt = Date.now();
    // Its polls are put back only within the grace (below), so an entry of a late job is due.
    const graceEnd = followedUntil(job, deps.settings);
    const pastDeadline = open && job.deadlineAt !== null && now >= job.deadlineAt;
    if (pastDeadline && !job.upstreamTaskId) {
      deps.logger.warn({ jobId, uncertain: true }, 'job passed its deadline; refunding');
      if (await timeOutJob(deps, job, true)) await deliverNowOrLater(deps, jobId);
      return;
    }

    if (job.upstreamTaskId) {
      let status: TaskStatus | undefined;
      const started = performance.now();
      try {
        status = await pollUpstream(deps.musicApi, job.kind, job.upstreamTaskId);
        deps.metrics.upstreamLatency.observe({ operation: 'poll' }, (performance.now() - started) / 1000);
      } catch (err) {
        deps.metrics.upstreamErrors.inc({ type: isMusicApiError(err) ? (err.type ?? err.kind) : 'unknown' });
        deps.logger.info({ jobId, error: isMusicApiError(err) ? err.toJSON() : String(err) }, 'poll failed; will poll again');
      }
      if (status && (status.state === 'succeeded' || status.state === 'failed')) {
        if (await completeJob(deps, jobId, status)) {
          deps.logger.info({ jobId, state: status.state, via: 'poll' }, 'job completed');
          await deliverNowOrLater(deps, jobId);
        }
        return;
      }
      if (status && open && !pastDeadline) await showProgress(deps, job);
    }
    if (pastDeadline) {
      // The last poll, at the deadline, found the task still running.
      deps.logger.warn({ jobId, uncertain: false }, 'job passed its deadline; refunding, and polling its task through the grace');
      if (await timeOutJob(deps, job, false)) await deliverNowOrLater(deps, jobId);
    }

    // Polls go on until the deadline, then through its grace.
    const beforeDeadline = open && !pastDeadline;
    const until = beforeDeadline ? job.deadlineAt : graceEnd;
    if (!beforeDeadline && (!until || now >= until)) return;
    const untilDeadline = until ? until.getTime() - now.getTime() : Infinity;
    // Timed from submission (or from the unconfirmed attempt, when the service never named a task).
    const since = job.submittedAt ?? job.submitUncertainAt ?? job.createdAt;
    const delay = nextPollDelayMs(now.getTime() - since.getTime(), deps.settings.pollIntervalMs, untilDeadline, webhooksOn(deps.settings, job.kind));
    await entry.updateData({ jobId, attempt: attempt + 1 });
    await entry.moveToDelayed(polledAt + delay, token);
    throw new DelayedError();
  };
}
