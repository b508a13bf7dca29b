/**
 * The deployment's periodic passes, one entry per scheduled run (see `scheduleMaintenance`):
 * the reconciler, the monthly allowances of quiet guilds, and the hourly check of the music
 * service account against the ledger (src/pipeline/account.ts), the weekly chart posts.
 */
import type { Job } from 'bullmq';
import { applyDueAllowances } from '../../credits/index.js';
import { checkAccount } from '../account.js';
import { postDueCharts } from '../chart-posts.js';
import type { PipelineDeps } from '../deps.js';
import { endDueContests } from '../contests.js';
import { reconcile } from '../reconcile.js';
import { applyRetention } from '../retention.js';
import type { MaintenanceTask } from '../../queue/queues.js';

export function createMaintenanceProcessor(deps: PipelineDeps) {
  const tasks: Record<MaintenanceTask, () => Promise<void>> = {
    reconcile: async () => void (await reconcile(deps)),
    allowances: async () => {
      const result = await applyDueAllowances(deps.db, deps.now());
      for (const failure of result.failed) deps.logger.error({ guildId: failure.guildId, err: failure.error }, 'allowance failed');
    },
    account: async () => void (await checkAccount(deps, 'hourly')),
    retention: async () => void (await applyRetention(deps)),
    entitlements: async () => void (await deps.purchases?.reconcile()),
    purchases: async () => void (await deps.purchases?.sweep()),
    charts: async () => void (await postDueCharts(deps)),
    // Also the delayed entry planned at a contest's deadline.
    contests: async () => void (await endDueContests(deps)),
  };
  return async (entry: Job): Promise<void> => {
    const task = Object.hasOwn(tasks, entry.name) ? tasks[entry.name as MaintenanceTask] : undefined;
    if (!task) throw new Error(`unknown maintenance task ${entry.name}`);
    await task();
  };
}
