/** Retries of result posts that failed on the fast path. */
import type { Job } from 'bullmq';
import { deliverJob } from '../post-result.js';
import type { PipelineDeps } from '../deps.js';
import { deliverPayloadSchema, type DeliverPayload } from '../../queue/queues.js';

export function createDeliverProcessor(deps: Pick<PipelineDeps, 'db' | 'discord' | 'logger' | 'metrics' | 'musicApi' | 'now' | 'settings'>) {
  return async (entry: Job<DeliverPayload>): Promise<void> => {
    const { jobId } = deliverPayloadSchema.parse(entry.data);
    await deliverJob(deps, jobId);
  };
}
