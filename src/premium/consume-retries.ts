/**
 * The worker that tries again a pack's consume Discord did not take (`Queues.retryConsume`):
 * the retries live in Redis, so a process that stops or crashes leaves them to the next worker.
 */
import { Worker, type ConnectionOptions } from 'bullmq';
import type { Logger } from '../logger.js';
import { consumePayloadSchema, QUEUE_NAMES } from '../queue/queues.js';
import type { Purchases } from './purchases.js';

export function startConsumeRetries(purchases: Pick<Purchases, 'consumeAgain'>, connection: ConnectionOptions, options: { readonly prefix: string; readonly logger: Logger }): Worker {
  const worker = new Worker(
    QUEUE_NAMES.consume,
    async (entry) => {
      const { entitlementId } = consumePayloadSchema.parse(entry.data);
      await purchases.consumeAgain(entitlementId);
    },
    { connection, prefix: options.prefix, concurrency: 5 },
  );
  worker.on('failed', (entry, err) => {
    const last = entry !== undefined && entry.attemptsMade >= (entry.opts.attempts ?? 1);
    options.logger.warn({ entitlementId: entry?.data.entitlementId, attempts: entry?.attemptsMade, err: err.message }, last ? 'consuming an entitlement failed; left to the sweep' : 'consuming an entitlement failed; it will be retried');
  });
  worker.on('error', (err) => options.logger.error({ err }, 'consume retry worker error'));
  return worker;
}
