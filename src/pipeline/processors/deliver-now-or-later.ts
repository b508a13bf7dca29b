import { deliverJob } from '../post-result.js';
import { describeDiscordError } from '../../discord-rest/discord-delivery.js';
import type { PipelineDeps } from '../deps.js';

/**
 * Posts a result at once, in the worker that finished the job (the fast path); a failure
 * hands it to the deliver queue, which retries with backoff.
 */
export async function deliverNowOrLater(deps: Pick<PipelineDeps, 'db' | 'discord' | 'logger' | 'metrics' | 'musicApi' | 'now' | 'queues' | 'settings'>, jobId: string): Promise<void> {
  try {
    await deliverJob(deps, jobId);
  } catch (err) {
    deps.logger.warn({ jobId, error: describeDiscordError(err) }, 'delivery failed; queued for retry');
    await deps.queues.enqueueDeliver(jobId, 1_000);
  }
}

/**
 * Equal jitter: half of an exponentially growing bound (capped at `capMs`) plus a random part
 * of the other half, so retries spread out but never come sooner than half the bound. Kept
 * beside BullMQ's own `exponential` backoff because the submit queue's waits are capped and
 * take the service's Retry-After into account, and the capacity wait is a requeue, not a retry.
 */
export function backoffWithJitter(attempt: number, baseMs: number, capMs: number, random = Math.random): number {
  const bound = Math.min(capMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(bound / 2 + random() * (bound / 2));
}
