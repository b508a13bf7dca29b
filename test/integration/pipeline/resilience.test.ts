/**
 * The pipeline when processes die and Redis forgets: every job finishes, exactly once, and
 * the ledger ends right.
 */
import path from 'node:path';
import { Redis } from 'ioredis';
import { BotProcess, ROOT } from '@music-bot/test-world';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { SubmitResult } from '../../../src/pipeline/requests.js';
import { found } from '../../support/found.js';
import { resultPostCount, startHarness, type Harness } from '../../support/pipeline-harness.js';
import { jobRow, ledgerOfJob, ledgerSum, balanceOf } from '../../support/ledger.js';

const harnesses: Harness[] = [];
const workers: BotProcess[] = [];

afterEach(async () => {
  for (const worker of workers.splice(0)) await worker.kill();
});
afterAll(async () => {
  for (const h of harnesses) await h.close();
});

async function allDelivered(h: Harness, jobIds: string[], timeoutMs: number) {
  return vi.waitFor(async () => {
    const rows = await Promise.all(jobIds.map((id) => jobRow(h.db.db, id)));
    return found(rows.every((row) => row?.deliveryState === 'delivered') ? rows : undefined, 'every job delivered');
  }, timeoutMs);
}

/** A worker as `npm start` runs it with ROLE=worker, in its own process, from the test folder so that no .env is read. */
async function startWorker(h: Harness): Promise<BotProcess> {
  const worker = new BotProcess({
    name: 'worker',
    cwd: path.join(ROOT, 'test'),
    env: { ROLE: 'worker', ...h.env, ...(h.publicUrl && { PUBLIC_URL: h.publicUrl }), LOG_LEVEL: 'info' },
  });
  workers.push(worker);
  await worker.start();
  return worker;
}

describe('a worker in its own process', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ webhooks: true, startingCredits: 500, sim: { taskMs: 1_500 }, overrides: { parts: { gateway: false, worker: false, http: true } } });
    harnesses.push(h);
  });

  it('killed in the middle, is replaced by a new one that finishes every job exactly once', async () => {
    const first = await startWorker(h);
    const jobIds: string[] = [];
    for (let i = 0; i < 6; i += 1) {
      const { result } = await h.request({ kind: 'song', prompt: `survivor ${i}` });
      jobIds.push((result as SubmitResult).jobId);
    }
    // Killed once every create has been answered and tasks are still running upstream. (A
    // worker killed during a create leaves that job uncertain: by the submission rule it is
    // never sent again and waits for its webhook until the deadline; uncertain.test.ts.)
    await vi.waitFor(async () => {
      const rows = await Promise.all(jobIds.map((id) => jobRow(h.db.db, id)));
      const sent = rows.every((row) => row !== undefined && row.state !== 'queued' && row.state !== 'submitting');
      return found(sent && rows.some((row) => row?.state === 'submitted'), 'every job sent, some still running');
    }, 20_000);
    await first.kill();

    await startWorker(h);
    const rows = await allDelivered(h, jobIds, 70_000);
    expect(rows.map((row) => row?.state)).toEqual(jobIds.map(() => 'succeeded'));
    for (const jobId of jobIds) {
      expect(resultPostCount(h, jobId)).toBe(1);
      expect(await ledgerOfJob(h.db.db, jobId)).toEqual([{ kind: 'reserve', amount: -10, key: `job:${jobId}:debit` }]);
    }
    // Never a second upstream task for a job.
    const prompts = jobIds.map((_, i) => `survivor ${i}`);
    expect(h.sim.listTasks().filter((t) => prompts.includes(String(t.body.sound)))).toHaveLength(6);
    expect(await ledgerSum(h.db.db, h.guildId)).toBe(await balanceOf(h.db.db, h.guildId));
  }, 120_000);

  it('stops cleanly on SIGTERM, with exit code 0', async () => {
    const worker = await startWorker(h);
    expect(await worker.stop()).toEqual({ code: 0, signal: null });
  }, 30_000);
});

describe('Redis emptied while jobs are in flight', () => {
  it('loses none: the reconciler enqueues them again from Postgres', async () => {
    const h = await startHarness({
      webhooks: false,
      startingCredits: 500,
      sim: { taskMs: 1_000 },
      settings: { upstreamMaxInFlight: 2 },
      overrides: { reconcileIntervalMs: 700 },
    });
    harnesses.push(h);
    const jobIds: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      const { result } = await h.request({ kind: 'song', prompt: `forgotten ${i}` });
      jobIds.push((result as SubmitResult).jobId);
    }
    await vi.waitFor(async () => {
      const rows = await Promise.all(jobIds.map((id) => jobRow(h.db.db, id)));
      return found(rows.filter((row) => row?.state === 'submitted').length >= 2);
    }, 15_000);

    // Forget everything this bot had in Redis (other test files share the server).
    const redis = new Redis(h.redisUrl);
    const keys = await redis.keys(`${h.prefix}:*`);
    expect(keys.length).toBeGreaterThan(0);
    await redis.del(...keys);
    await redis.quit();

    const rows = await allDelivered(h, jobIds, 40_000);
    expect(rows.map((row) => row?.state)).toEqual(jobIds.map(() => 'succeeded'));
    for (const jobId of jobIds) {
      expect(resultPostCount(h, jobId)).toBe(1);
      expect(await ledgerOfJob(h.db.db, jobId)).toEqual([{ kind: 'reserve', amount: -10, key: `job:${jobId}:debit` }]);
    }
    expect(h.sim.listTasks().filter((t) => t.taskType === 'create_music')).toHaveLength(5);
  }, 90_000);
});
