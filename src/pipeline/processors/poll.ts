/**
 * Polling, always on as the fallback to webhooks: the first poll near the expected
 * duration, then backoff with a cap, until the task ends or its deadline passes. The
 * worker's limiter caps poll requests per second across every worker sharing Redis.
 */
import { DelayedError, type Job } from 'bullmq';
import { showProgress } from '../deliver.js';
import { isMusicApiError, type TaskStatus } from '../../music-api/index.js';
import type { PipelineDeps } from '../deps.js';
import { getJob } from '../job-rows.js';
import { completeJob, timeOutJob } from '../transitions.js';
import { pollUpstream } from '../upstream.js';
import { pollPayloadSchema, type PollPayload } from '../../queue/queues.js';
import { deliverNowOrLater } from './shared.js';

export function nextPollDelayMs(deps: PipelineDeps, attempt: number): number {
  const { min, max } = deps.settings.pollIntervalMs;
  return Math.min(max, Math.round(min * 1.5 ** attempt));
}

export function createPollProcessor(deps: PipelineDeps) {
  return async (entry: Job<PollPayload>, token?: string): Promise<void> => {
    const { jobId, attempt } = pollPayloadSchema.parse(entry.data);
    const job = await getJob(deps.db, jobId);
    if (!job || !['submitting', 'submitted'].includes(job.state)) return;

    const now = deps.now();
    if (job.deadlineAt && now >= job.deadlineAt) {
      deps.logger.warn({ jobId, uncertain: !job.upstreamTaskId }, 'job passed its deadline; refunding');
      if (await timeOutJob(deps, jobId, !job.upstreamTaskId)) await deliverNowOrLater(deps, jobId);
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
    const delay = Math.max(0, Math.min(nextPollDelayMs(deps, attempt), untilDeadline));
    await entry.updateData({ jobId, attempt: attempt + 1 });
    await entry.moveToDelayed(Date.now() + delay, token);
    throw new DelayedError();
  };
}
