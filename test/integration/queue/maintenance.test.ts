/**
 * The periodic passes (reconcile, allowances, account) run from BullMQ job schedulers: however many
 * worker processes keep them scheduled, each pass runs once per period for the deployment, and
 * a schedule lost with Redis's data is put back by the next check.
 */
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/logger.js';
import { keepMaintenanceScheduled } from '../../../src/queue/maintenance.js';
import { createQueues, QUEUE_NAMES, type Queues } from '../../../src/queue/queues.js';
import { testRedis } from '../../support/database.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
}, 30_000);

/** One worker process's view of the queues, as startApp builds it. */
function processQueues(url: string, prefix: string): Queues {
  const redis = new Redis(url, { maxRetriesPerRequest: null });
  const queues = createQueues(redis, { prefix });
  cleanups.push(async () => {
    await queues.close();
    await redis.quit();
  });
  return queues;
}

/** Counts the maintenance entries that run, by name. */
function countRuns(url: string, prefix: string): Map<string, number> {
  const runs = new Map<string, number>();
  const connection = new Redis(url, { maxRetriesPerRequest: null });
  const worker = new Worker(
    QUEUE_NAMES.maintenance,
    async (entry) => void runs.set(entry.name, (runs.get(entry.name) ?? 0) + 1),
    { connection, prefix },
  );
  cleanups.push(async () => {
    await worker.close();
    await connection.quit();
  });
  return runs;
}

const EVERY = { reconcile: 60_000, allowances: 3_600_000, account: 3_600_000, retention: 600_000, entitlements: 3_600_000, purchases: 60_000, charts: 60_000, contests: 60_000 };

describe('maintenance passes', () => {
  it('are scheduled once for the deployment, however many worker processes ask', async () => {
    const { url, prefix } = testRedis();
    const [first, second] = [processQueues(url, prefix), processQueues(url, prefix)];
    for (const queues of [first, second]) {
      const keeper = await keepMaintenanceScheduled(queues, silentLogger, { everyMs: EVERY });
      cleanups.push(() => keeper.stop());
    }

    const schedulers = await first.maintenance.getJobSchedulers();
    expect(schedulers.map((s) => [s.key, Number(s.every)]).sort()).toEqual([
      ['account', 3_600_000],
      ['allowances', 3_600_000],
      ['charts', 60_000],
      ['contests', 60_000],
      ['entitlements', 3_600_000],
      ['purchases', 60_000],
      ['reconcile', 60_000],
      ['retention', 600_000],
    ]);

    const runs = countRuns(url, prefix);
    // A new schedule runs its first pass at once. An entry added after both processes asked
    // runs after any pass they could have started, so once it has run, the count is final.
    await first.maintenance.add('marker' as never, {}, { delay: 200 });
    await expect.poll(() => runs.get('marker'), { timeout: 10_000 }).toBe(1);
    expect(runs.get('reconcile')).toBe(1);
    expect(runs.get('allowances')).toBe(1);
    expect(runs.get('account')).toBe(1);
    expect(runs.get('retention')).toBe(1);
    expect(runs.get('entitlements')).toBe(1);
    expect(runs.get('purchases')).toBe(1);
    expect(runs.get('charts')).toBe(1);
    expect(runs.get('contests')).toBe(1);
  });

  it('come back after Redis lost its data, and run at once', async () => {
    const { url, prefix } = testRedis();
    const queues = processQueues(url, prefix);
    const keeper = await keepMaintenanceScheduled(queues, silentLogger, { everyMs: EVERY, checkEveryMs: 200 });
    cleanups.push(() => keeper.stop());
    const runs = countRuns(url, prefix);
    await expect.poll(() => runs.get('reconcile'), { timeout: 10_000 }).toBe(1);

    const redis = new Redis(url);
    await redis.del(...(await redis.keys(`${prefix}:*`)));
    await redis.quit();
    expect(await queues.maintenance.getJobSchedulers()).toEqual([]);

    await expect.poll(() => runs.get('reconcile'), { timeout: 10_000 }).toBe(2);
    // Put back one after another: the first pass may run before the last schedule is back.
    await expect.poll(async () => (await queues.maintenance.getJobSchedulers()).map((s) => s.key).sort(), { timeout: 10_000 }).toEqual([
      'account',
      'allowances',
      'charts',
      'contests',
      'entitlements',
      'purchases',
      'reconcile',
      'retention',
    ]);
  });
});
