/** A verified webhook's news, taken in order with the polls: one final transition, one delivery. */
import type { Job } from 'bullmq';
import type { PipelineDeps } from '../deps.js';
import { completeJob } from '../transitions.js';
import { completePayloadSchema, type CompletePayload } from '../../queue/queues.js';
import { deliverNowOrLater } from './deliver-now-or-later.js';

export function createCompleteProcessor(deps: Pick<PipelineDeps, 'db' | 'discord' | 'logger' | 'metrics' | 'musicApi' | 'now' | 'queues' | 'settings'>) {
  return async (entry: Job<CompletePayload>): Promise<void> => {
    const payload = completePayloadSchema.parse(entry.data);
    const done = await completeJob(deps, payload.jobId, payload.status, payload.taskId);
    if (!done) return;
    deps.metrics.webhookToCompletion.observe((Date.now() - payload.receivedAt) / 1000);
    deps.logger.info({ jobId: payload.jobId, state: payload.status.state, via: payload.source }, 'job completed');
    await deliverNowOrLater(deps, payload.jobId);
  };
}
