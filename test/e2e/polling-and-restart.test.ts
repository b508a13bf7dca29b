/**
 * End to end, webhooks off: songs found done by polling alone, a bot killed in the middle of
 * its work and started again, which delivers every job once, and a bot stopped while the
 * service holds a create open, which exits in time and leaves the job to the next process.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ledgerOfJob } from '../support/ledger.js';
import { printBotLogsOnFailure, startE2E, type E2E } from './bot-process.js';

/** How long a stop may take here (SHUTDOWN_LIMIT_MS), rather than 30 s. */
const STOP_LIMIT_MS = 8_000;

let bot: E2E;
printBotLogsOnFailure(() => bot);

beforeAll(async () => {
  // A killed worker's queue entries are taken over 5 s after, rather than BullMQ's 30 s (QUEUE_LOCK_MS).
  // A create may take a minute: longer than a stop may last, as a slow service's can.
  bot = await startE2E({
    webhooks: false,
    startingCredits: 200,
    sim: { taskMs: 1_500 },
    env: { QUEUE_LOCK_MS: '5000', MUSIC_API_TIMEOUT_MS: '60000', SHUTDOWN_LIMIT_MS: String(STOP_LIMIT_MS) },
  });
}, 60_000);
afterAll(async () => bot?.close());
// Every REST call the bot made fits Discord's published API description.
afterEach(() => expect(bot.emulator.findings).toEqual([]));

function resultPosts(jobId: string): number {
  return bot.emulator.requests.filter((r) => {
    const body = JSON.stringify(r.body ?? {});
    const post = (r.method === 'PATCH' && /\/messages\/(@|%40)original$/.test(r.path)) || (r.method === 'POST' && r.path.endsWith('/messages'));
    return post && r.status < 300 && r.files.length === 0 && body.includes(`Job ${jobId}`) && !body.includes('Making your');
  }).length;
}

describe('/song with webhooks off', () => {
  it('is found done by polling and posted with its links', async () => {
    const handle = bot.run(bot.members.alice, { name: 'song', options: { prompt: 'polling polka' } });
    const jobId = await bot.jobIdOf(handle);
    const message = await bot.result(handle, jobId);
    expect(JSON.stringify(message.embeds)).toContain('/producer/');
    const create = bot.sim.requests.find((r) => r.path === '/api/v1/producer/create' && (r.body as { sound?: string }).sound === 'polling polka');
    expect(create?.body).not.toHaveProperty('webhook_url');
    expect(bot.sim.webhookAttempts).toEqual([]);
    const task = bot.sim.listTasks().find((t) => t.body.sound === 'polling polka');
    expect(bot.sim.requests.filter((r) => r.path === `/api/v1/producer/task/${task?.taskId}`).length).toBeGreaterThan(0);
    expect(await bot.delivered(jobId)).toEqual({ state: 'succeeded', deliveryState: 'delivered' });
    expect(await ledgerOfJob(bot.db.db, jobId)).toEqual([{ kind: 'reserve', amount: -10, key: `job:${jobId}:debit` }]);
  });
});

describe('the bot killed in the middle and started again', () => {
  it('delivers every job exactly once and charges each once', async () => {
    const before = await bot.balance();
    const prompts = [1, 2, 3, 4].map((i) => `crash course ${i}`);
    const tasks = () => bot.sim.listTasks().filter((t) => prompts.includes(String(t.body.prompt)));
    const handles = prompts.map((prompt) => bot.run(bot.members.alice, { name: 'lyrics', options: { prompt } }));
    const jobIds = await Promise.all(handles.map((handle) => bot.jobIdOf(handle)));
    // Wait until the service has the tasks and the bot has recorded them (its submit entries are
    // done), then pull the plug while it polls. Killed in between, a submission is unconfirmed
    // (never sent again, refunded at once: test/integration/pipeline/uncertain.test.ts),
    // or its entry waits out the queue's lock; the chaos suite kills at any moment.
    await expect.poll(() => tasks().length, { timeout: 15_000, message: 'the service never had the four tasks' }).toBe(4);
    const recorded = async () =>
      (await bot.db.pool.query<{ n: number }>('select count(*)::int as n from jobs where id = any($1) and upstream_task_id is not null', [jobIds])).rows[0]!.n;
    await expect.poll(recorded, { timeout: 15_000, message: 'the bot never recorded the four tasks' }).toBe(4);
    const submitting = async () => (await Promise.all(jobIds.map((jobId) => bot.queueEntriesOf(jobId)))).filter((entries) => entries.submit).length;
    await expect.poll(submitting, { timeout: 15_000, message: 'the submit entries never finished' }).toBe(0);
    await bot.kill();
    await bot.start();

    for (const [i, jobId] of jobIds.entries()) {
      await bot.result(handles[i]!, jobId, 30_000);
      expect(await bot.delivered(jobId)).toEqual({ state: 'succeeded', deliveryState: 'delivered' });
    }
    // Every queue entry of the jobs (a retried delivery, a poll, a completion) has run out.
    for (const jobId of jobIds) await expect.poll(() => bot.queueEntriesOf(jobId), { timeout: 15_000 }).toEqual({});
    for (const jobId of jobIds) expect(resultPosts(jobId)).toBe(1);
    expect(tasks()).toHaveLength(4);
    expect(await bot.balance()).toBe(before - 4);
    const { rows } = await bot.db.pool.query<{ n: number }>(
      "select count(*)::int as n from credit_ledger where job_id = any($1::uuid[]) and kind = 'reserve'",
      [jobIds],
    );
    expect(rows[0]?.n).toBe(4);
  }, 90_000);
});

describe('the bot stopped while the service holds a create open', () => {
  it('exits 0 within its limit, and the next process refunds the job once without sending it again', async () => {
    const prompt = 'held open [sim:hang-accepted]';
    const creates = () => bot.sim.requests.filter((r) => r.path === '/api/v1/producer/create' && (r.body as { sound?: string }).sound === prompt);
    const handle = bot.run(bot.members.alice, { name: 'song', options: { prompt } });
    const jobId = await bot.jobIdOf(handle);
    // The service took the task and is holding its answer: the submission is in hand.
    await expect.poll(() => creates().length, { timeout: 15_000, message: 'the service never got the create' }).toBe(1);

    const signalled = Date.now();
    expect(await bot.stop()).toEqual({ code: 0, signal: null });
    expect(Date.now() - signalled).toBeLessThan(STOP_LIMIT_MS + 5_000);
    expect(bot.output()).toContain('left to the next worker');
    expect((await bot.jobState(jobId))?.state).toBe('submitting');

    await bot.start();
    // Its entry taken over once its lock lapsed: the task may exist, so the job is refunded and never sent again.
    await expect.poll(async () => (await bot.jobState(jobId))?.state, { timeout: 40_000, message: 'the next process never settled the job' }).toBe('timed_out');
    expect(await ledgerOfJob(bot.db.db, jobId)).toEqual([
      { kind: 'reserve', amount: -10, key: `job:${jobId}:debit` },
      { kind: 'refund', amount: 10, key: `job:${jobId}:credit` },
    ]);
    expect(await bot.delivered(jobId)).toEqual({ state: 'timed_out', deliveryState: 'delivered' });
    expect(creates()).toHaveLength(1);
  }, 120_000);
});
