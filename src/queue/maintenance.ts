/**
 * Keeps the deployment's periodic passes scheduled. The schedules live in Redis (one worker runs
 * each pass), so a Redis that lost its data lost them too: every worker checks them now and
 * then (one read) and puts back a missing one, whose first pass runs at once.
 */
import type { Logger } from '../logger.js';
import { MAINTENANCE_TASKS, type MaintenanceTask, type Queues } from './queues.js';

export interface MaintenanceOptions {
  /** How often each pass runs across the deployment. */
  readonly everyMs: Readonly<Record<MaintenanceTask, number>>;
  /** How often this process checks that the schedules still exist. @defaultValue 30000 */
  readonly checkEveryMs?: number;
}

export const DEFAULT_MAINTENANCE_EVERY_MS: Readonly<Record<MaintenanceTask, number>> = {
  reconcile: 60_000,
  allowances: 60 * 60_000,
  /** The music service account against the ledger, and its low-credits alert (src/pipeline/account.ts). */
  account: 60 * 60_000,
  /** Tokens, webhook secrets and webhook records that can no longer be used (src/pipeline/retention.ts). */
  retention: 10 * 60_000,
  /** Every entitlement of the SKUs sold, listed: purchases whose events never came (src/premium). */
  entitlements: 60 * 60_000,
  /** Packs whose wait for a server is over, and consumes to retry (src/premium). */
  purchases: 60_000,
  /** The servers' weekly chart posts that are due (src/pipeline/chart-posts.ts). */
  charts: 60_000,
  /** Contests past their deadline whose delayed end was lost, and results never posted (src/pipeline/contests.ts). */
  contests: 60_000,
};

export async function keepMaintenanceScheduled(queues: Queues, logger: Logger, options: MaintenanceOptions): Promise<{ stop(): Promise<void> }> {
  const ensure = async (): Promise<void> => {
    for (const task of MAINTENANCE_TASKS) {
      const restored = await queues.scheduleMaintenance(task, options.everyMs[task]);
      if (restored) logger.info({ task, everyMs: options.everyMs[task] }, 'maintenance pass scheduled');
    }
  };
  await ensure();
  let running: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    running = running.then(ensure).catch((err: unknown) => logger.error({ err }, 'maintenance schedule check failed'));
  }, options.checkEveryMs ?? 30_000);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
