/** One BullMQ worker per queue, each running its own processor. */
import { Worker, type ConnectionOptions } from 'bullmq';
import { isMusicApiError } from '../music-api/index.js';
import type { PipelineDeps } from './deps.js';
import { inBackgroundSlot } from './front-first.js';
import { createCompleteProcessor } from './processors/complete.js';
import { createDeliverProcessor } from './processors/retry-delivery.js';
import { createMaintenanceProcessor } from './processors/maintenance.js';
import { createPollProcessor } from './processors/poll.js';
import { backoffWithJitter } from './processors/deliver-now-or-later.js';
import { createSubmitProcessor } from './processors/send-to-service.js';
import { JITTER_BACKOFF, QUEUE_NAMES } from '../queue/queues.js';
import { rateLimitedErrorLog } from '../queue/connection.js';

export interface WorkerOptions {
  /** Poll requests per second across all workers sharing this Redis. */
  readonly pollMaxPerSecond: number;
  /** Submit entries one worker process runs at once. @defaultValue 50 */
  readonly submitConcurrency?: number;
  /** How long a job may run before another worker takes it over as stalled. @defaultValue 30000 */
  readonly lockDurationMs?: number;
}

/**
 * How much the time from a poll entry's start to its request leaving (reading the job row,
 * the hop to the processor) may vary without any second of requests going over the cap (see
 * `pollLimiter`).
 */
export const POLL_START_SLACK_MS = 50;

/**
 * The poll worker's BullMQ limiter for at most `maxPerSecond` poll requests in any second,
 * not only in the limiter's own windows: one start per window, windows of
 * (1000 + `POLL_START_SLACK_MS`) / cap ms, whole milliseconds (so never above 1,000 a second).
 * Every worker on the queue shares the limiter, so all must run with the same
 * `POLL_MAX_PER_SECOND`. Why: docs/decisions/poll-schedule.md
 */
export function pollLimiter(maxPerSecond: number): { max: number; duration: number } {
  return { max: 1, duration: Math.max(1, Math.ceil((1_000 + POLL_START_SLACK_MS) / Math.max(1, maxPerSecond))) };
}

export interface Workers {
  /**
   * Stops taking entries and waits for those in hand, or for at most `waitMs`: an entry still in
   * hand then keeps its lock until it lapses, and another worker takes it over as stalled (a
   * submission whose create was not answered is settled as interrupted there, never sent again).
   */
  close(options?: { readonly waitMs?: number }): Promise<void>;
  readonly all: readonly Worker[];
}

export function startWorkers(deps: PipelineDeps, connection: ConnectionOptions, options: WorkerOptions): Workers {
  // Set when a close gave up waiting: the entries still in hand are left to another worker.
  let leftBehind = false;
  // An entry that ends after its worker was left behind is never reported to BullMQ: its
  // connection may be closed by then, and a closing BullMQ worker retries reporting an entry's
  // end on a closed connection without pause, which holds the event loop for good.
  const reported =
    <T extends unknown[]>(processor: (...args: T) => Promise<void>) =>
    async (...args: T): Promise<void> => {
      try {
        await processor(...args);
      } catch (error) {
        if (leftBehind) return never();
        throw error;
      }
      if (leftBehind) return never();
    };
  // Each entry's work waits for a background slot, so commands arriving in this process go first.
  const slotted =
    <T extends unknown[]>(processor: (...args: T) => Promise<void>) =>
    (...args: T): Promise<void> =>
      inBackgroundSlot(deps.frontFirst, () => processor(...args));
  const prefix = deps.queues.prefix;
  const lockDuration = options.lockDurationMs ?? 30_000;
  const common = { connection, prefix, lockDuration, stalledInterval: Math.max(1_000, Math.round(lockDuration / 2)) };

  const submit = new Worker(QUEUE_NAMES.submit, reported(slotted(createSubmitProcessor(deps))), {
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
  // Not slotted: the limiter spaces polls as they are taken, and entries held back, then let go
  // together once the front is quiet, would reach the service faster than POLL_MAX_PER_SECOND.
  const poll = new Worker(QUEUE_NAMES.poll, reported(createPollProcessor(deps)), {
    ...common,
    concurrency: 50,
    limiter: pollLimiter(options.pollMaxPerSecond),
  });
  const complete = new Worker(QUEUE_NAMES.complete, reported(slotted(createCompleteProcessor(deps))), { ...common, concurrency: 20 });
  const deliver = new Worker(QUEUE_NAMES.deliver, reported(slotted(createDeliverProcessor(deps))), { ...common, concurrency: 20 });
  // One pass at a time: a slow reconcile must not overlap the next one.
  const maintenance = new Worker(QUEUE_NAMES.maintenance, reported(createMaintenanceProcessor(deps)), { ...common, concurrency: 1 });

  const all = [submit, poll, complete, deliver, maintenance];
  for (const worker of all) {
    worker.on('failed', (entry, err) => {
      deps.logger.warn({ queue: worker.name, entryId: entry?.id, attempts: entry?.attemptsMade, err: err.message }, 'queue entry failed');
    });
    // Mostly its connection's errors, one per retry while Redis is away: rate-limited, with a count.
    worker.on('error', rateLimitedErrorLog({ name: `worker:${worker.name}`, logger: deps.logger }, 'worker error'));
  }
  return {
    all,
    async close({ waitMs = Number.POSITIVE_INFINITY } = {}) {
      const open = new Set(all.map((worker) => worker.name));
      const closed = Promise.all(all.map((worker) => worker.close().then(() => void open.delete(worker.name))));
      if (waitMs === Number.POSITIVE_INFINITY) return void (await closed);
      let timer: NodeJS.Timeout | undefined;
      const waited = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), Math.max(0, waitMs))));
      const outcome = await Promise.race([closed, waited]);
      clearTimeout(timer);
      if (outcome === 'late') {
        leftBehind = true;
        deps.logger.warn({ queues: [...open], waitMs: Math.max(0, Math.round(waitMs)) }, 'entries still in hand at the end of the stop; left to the next worker');
      }
    },
  };
}

/** A promise that never settles, holding nothing: what an entry left behind resolves to. */
function never(): Promise<void> {
  return new Promise<void>(() => {});
}
