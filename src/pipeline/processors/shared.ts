import { deliverJob } from '../deliver.js';
import { describeDiscordError } from '../../delivery/discord-delivery.js';
import type { PipelineDeps } from '../deps.js';

/**
 * Posts a result at once, in the worker that finished the job (the fast path); a failure
 * hands it to the deliver queue, which retries with backoff.
 */
export async function deliverNowOrLater(deps: PipelineDeps, jobId: string): Promise<void> {
  try {
    await deliverJob(deps, jobId);
  } catch (err) {
    deps.logger.warn({ jobId, error: describeDiscordError(err) }, 'delivery failed; queued for retry');
    await deps.queues.enqueueDeliver(jobId, 1_000);
  }
}

/** Full jitter: a random wait up to an exponentially growing bound, so retries spread out. */
export function backoffWithJitter(attempt: number, baseMs: number, capMs: number, random = Math.random): number {
  const bound = Math.min(capMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(bound / 2 + random() * (bound / 2));
}
