/** One BullMQ worker per queue, each running its own processor. */
import { Worker, type ConnectionOptions } from 'bullmq';
import { isMusicApiError } from '../music-api/index.js';
import type { PipelineDeps } from './deps.js';
import { createCompleteProcessor } from './processors/complete.js';
import { createDeliverProcessor } from './processors/deliver.js';
import { createMaintenanceProcessor } from './processors/maintenance.js';
import { createPollProcessor } from './processors/poll.js';
import { backoffWithJitter } from './processors/shared.js';
import { createSubmitProcessor } from './processors/submit.js';
import { JITTER_BACKOFF, QUEUE_NAMES } from '../queue/queues.js';

export interface WorkerOptions {
  /** Poll requests per second across all workers sharing this Redis. */
  readonly pollMaxPerSecond: number;
  /** Submit entries one worker process runs at once. @defaultValue 50 */
  readonly submitConcurrency?: number;
  /** How long a job may run before another worker takes it over as stalled. @defaultValue 30000 */
  readonly lockDurationMs?: number;
}

export interface Workers {
  close(force?: boolean): Promise<void>;
  readonly all: readonly Worker[];
}

export function startWorkers(deps: PipelineDeps, connection: ConnectionOptions, options: WorkerOptions): Workers {
  const prefix = deps.queues.prefix;
  const lockDuration = options.lockDurationMs ?? 30_000;
  const common = { connection, prefix, lockDuration, stalledInterval: Math.max(1_000, Math.round(lockDuration / 2)) };

  const submit = new Worker(QUEUE_NAMES.submit, createSubmitProcessor(deps), {
    ...common,
    concurrency: options.submitConcurrency ?? 50,
    settings: {
      backoffStrategy: (attemptsMade: number, type?: string, err?: Error) => {
        if (type !== JITTER_BACKOFF) return 0;
        const hinted = isMusicApiError(err) ? (err.retryAfterMs ?? 0) : 0;
        return Math.max(hinted, backoffWithJitter(attemptsMade, deps.settings.submitBackoffMs, 60_000));
      },
    },
  });
  const poll = new Worker(QUEUE_NAMES.poll, createPollProcessor(deps), {
    ...common,
    concurrency: 50,
    limiter: { max: options.pollMaxPerSecond, duration: 1_000 },
  });
  const complete = new Worker(QUEUE_NAMES.complete, createCompleteProcessor(deps), { ...common, concurrency: 20 });
  const deliver = new Worker(QUEUE_NAMES.deliver, createDeliverProcessor(deps), { ...common, concurrency: 20 });
  // One pass at a time: a slow reconcile must not overlap the next one.
  const maintenance = new Worker(QUEUE_NAMES.maintenance, createMaintenanceProcessor(deps), { ...common, concurrency: 1 });

  const all = [submit, poll, complete, deliver, maintenance];
  for (const worker of all) {
    worker.on('failed', (entry, err) => {
      deps.logger.warn({ queue: worker.name, entryId: entry?.id, attempts: entry?.attemptsMade, err: err.message }, 'queue entry failed');
    });
    worker.on('error', (err) => deps.logger.error({ queue: worker.name, err: err.message }, 'worker error'));
  }
  return {
    all,
    async close(force = false) {
      await Promise.all(all.map((worker) => worker.close(force)));
    },
  };
}
