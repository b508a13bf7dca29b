/**
 * Polling, always on as the fallback to webhooks: the first poll at a share of the kind's
 * expected duration, then polls spaced at a fixed share of the time since submission, until
 * the task ends or its deadline passes. With webhooks off the polls are what finds a task's
 * end (first at 0.55× the expected duration, then every 12% of the elapsed time); with
 * webhooks on (`PUBLIC_URL` set) they only catch a lost webhook, and are spaced more loosely
 * (first at 1×, then every 40%). The worker's limiter caps poll requests per second across
 * every worker sharing Redis (see `pollLimiter` in ../workers.ts).
 */
import { DelayedError, type Job } from 'bullmq';
import { showProgress } from '../deliver.js';
import { isMusicApiError, type TaskStatus } from '../../music-api/index.js';
import type { JobKind } from '../../db/schema.js';
import type { PipelineDeps, PipelineSettings } from '../deps.js';
import { getJob } from '../job-rows.js';
import { completeJob, timeOutJob } from '../transitions.js';
import { pollUpstream, takesWebhook } from '../upstream.js';
import { pollPayloadSchema, type PollPayload } from '../../queue/queues.js';
import { deliverNowOrLater } from './shared.js';

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
 *
 * Why, webhooks off: the bot knows only the kind's expected duration, and real tasks run from
 * about half to three times it. Nothing ends much before half of it, so polling earlier only
 * costs; at 0.55 a task of exactly half the expected time is found within 10% of its length
 * (33 s for a 30 s task at 60 s expected). Polling from 0.8 of it, as before, left every
 * shorter task waiting up to 60% of its length for the first poll.
 *
 * Webhooks on: the webhook tells the bot of the end within moments, and a poll only matters
 * when the webhook was lost, so the first waits for the whole expected duration: a task that
 * ends sooner costs no poll at all while its webhook arrives.
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
 *
 * Why: a task that ends just after a poll at elapsed time t is found at the next poll, so
 * its delay is at most the gap, and its length is at least t: a gap of a fixed share f of the
 * elapsed time bounds the delay at f of the task's length whatever that length (geometric
 * spacing, the fewest polls for that bound), and the number of polls grows only with the
 * logarithm of the length. For tasks spread evenly over 0.5–3× the expected duration (30–180 s
 * at 60 s expected, `POLL_INTERVAL_MIN_MS` 5 s), f = 0.12 gives 1.0 poll per 10 s of task and
 * a delay share of p50 6%, p99 12%, max 15% (test/unit/pipeline/processors/poll-schedule.test.ts
 * works the figures out). A lower f buys little: f = 0.10 costs 1.11 polls per 10 s and still
 * gives p99 11.8%, max 15%, because below about 0.12 the p99 and max come from the
 * `interval.min` floor (after the first poll at 33 s, a 5 s gap is 15% of a 33 s task, and
 * above 10% of the elapsed time until 50 s). Delay p99 under 10% needs both f ≤ 0.1 and a floor of 3 s at most, and
 * then 1.2 polls per 10 s or more: knowing only the expected duration, the two targets of the
 * `poll` benchmark (delay < 10%, ≤ 1 poll per 10 s) cannot both hold; this keeps the poll budget.
 *
 * Webhooks on, the polls are only the backup: f = 0.4 after a first poll at 1× polls the same
 * tasks about 3 times each (60, 84, 118, 165 s, ... at 60 s expected; 2.96 on average over
 * 30–180 s, against 10.5 with webhooks off), and about 2 of those come before the task ends,
 * which is all a task whose webhook arrives costs. A task whose webhook is lost is still found
 * within 40% of its length if it ran at least the expected time, within 100% if it ran at least
 * half of it.
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
    if (!job || !['submitting', 'submitted'].includes(job.state)) return;

    const now = deps.now();
    // The next poll is timed from this one, not from the end of its answer and progress edit.
    const polledAt = Date.now();
    if (job.deadlineAt && now >= job.deadlineAt) {
      deps.logger.warn({ jobId, uncertain: !job.upstreamTaskId }, 'job passed its deadline; refunding');
      if (await timeOutJob(deps, job, !job.upstreamTaskId)) await deliverNowOrLater(deps, jobId);
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
      if (status) await showProgress(deps, job);
    }

    const untilDeadline = job.deadlineAt ? job.deadlineAt.getTime() - now.getTime() : Infinity;
    // Timed from submission (or from the unconfirmed attempt, when the service never named a task).
    const since = job.submittedAt ?? job.submitUncertainAt ?? job.createdAt;
    const delay = nextPollDelayMs(now.getTime() - since.getTime(), deps.settings.pollIntervalMs, untilDeadline, webhooksOn(deps.settings, job.kind));
    await entry.updateData({ jobId, attempt: attempt + 1 });
    await entry.moveToDelayed(polledAt + delay, token);
    throw new DelayedError();
  };
}
