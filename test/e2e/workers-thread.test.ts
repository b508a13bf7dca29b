/**
 * ROLE=all with the workers on a thread of their own (WORKERS_IN_THREAD=true), as the image runs
 * the bot: a `/song` is sent on from that thread and its result delivered; `/metrics` carries the
 * thread's counters beside the process's own; a thread that dies is logged, counted and started
 * again, and the next `/song` goes through; SIGTERM stops the thread within the stop's limit with
 * a create in hand, and the next process settles that job once. Webhooks off: results are found
 * by polling, from the thread.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ledgerOfJob } from '../support/ledger.js';
import { printBotLogsOnFailure, startE2E, type E2E } from './bot-process.js';

/** At each SIGUSR2, makes the bot's workers' thread throw an error nothing catches. */
const crashOnSignal = fileURLToPath(new URL('../fixtures/crash-workers-thread-on-signal.mjs', import.meta.url));

/** How long a stop may take here (SHUTDOWN_LIMIT_MS), rather than 30 s. */
const STOP_LIMIT_MS = 8_000;

let bot: E2E;
printBotLogsOnFailure(() => bot);

beforeAll(async () => {
  // A stopped worker's queue entries are taken over 5 s after (QUEUE_LOCK_MS); a create may
  // take a minute, longer than a stop may last.
  bot = await startE2E({
    webhooks: false,
    sim: { taskMs: 1_000 },
    env: { WORKERS_IN_THREAD: 'true', QUEUE_LOCK_MS: '5000', MUSIC_API_TIMEOUT_MS: '60000', SHUTDOWN_LIMIT_MS: String(STOP_LIMIT_MS) },
    nodeArgs: ['--import', crashOnSignal],
  });
}, 120_000);
afterAll(async () => bot?.close());
afterEach(() => expect(bot.emulator.findings).toEqual([]));

const metrics = async () => (await fetch(`${bot.httpUrl}/metrics`, { signal: AbortSignal.timeout(5_000) })).text();
/** A sample's value in a scrape (NaN when the series is missing). */
const sample = (text: string, series: string) => Number(new RegExp(`^${series.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN);

async function songDelivered(prompt: string): Promise<string> {
  const handle = bot.run(bot.members.alice, { name: 'song', options: { prompt } });
  const jobId = await bot.jobIdOf(handle);
  await bot.result(handle, jobId, 30_000);
  expect(await bot.delivered(jobId)).toEqual({ state: 'succeeded', deliveryState: 'delivered' });
  return jobId;
}

describe('the workers on a thread of their own', () => {
  it('send a /song on from their thread and deliver its result; /metrics carries their counters', async () => {
    const jobId = await songDelivered('threaded tune');
    const submitted = await bot.waitForLog((line) => line.msg === 'job submitted' && line.jobId === jobId, 'the submission');
    expect(submitted).toMatchObject({ thread: 'workers', role: 'all', pid: bot.pid });
    const accepted = await bot.waitForLog((line) => line.msg === 'request accepted' && line.jobId === jobId, 'the acceptance');
    expect(accepted).not.toHaveProperty('thread');

    const text = await metrics();
    // Counted on the thread alone (the front never sends a job on), served by the process.
    expect(sample(text, 'musicbot_upstream_request_seconds_count{operation="submit"}')).toBeGreaterThanOrEqual(1);
    const posted = ['interaction_reply', 'channel_message'].map((outcome) => sample(text, `musicbot_deliveries_total{outcome="${outcome}"}`) || 0);
    expect(posted[0]! + posted[1]!).toBeGreaterThanOrEqual(1);
    // The process's own figures once, from the main thread.
    expect(text.match(/^musicbot_process_cpu_seconds_total /gm)).toHaveLength(1);
    expect(sample(text, 'musicbot_workers_thread_restarts_total')).toBe(0);
  }, 60_000);

  it('start again after their thread dies, logged and counted, and the next /song goes through', async () => {
    process.kill(bot.pid!, 'SIGUSR2');
    const exited = await bot.waitForLog((line) => line.msg === 'the workers thread exited; starting another', 'the thread exited');
    expect(exited).toMatchObject({ level: 50, code: 1 });
    expect(await bot.waitForLog((line) => line.msg === 'the workers thread failed', 'the thread failed')).toMatchObject({ err: { message: 'a bug in the workers thread' } });
    await expect.poll(async () => sample(await metrics(), 'musicbot_workers_thread_restarts_total'), { timeout: 10_000 }).toBe(1);
    await songDelivered('after the crash');
  }, 60_000);

  it('stop within the limit on SIGTERM with a create in hand, and the next process settles that job once', async () => {
    const prompt = 'held open in the thread [sim:hang-accepted]';
    const creates = () => bot.sim.requests.filter((r) => r.path === '/api/v1/producer/create' && (r.body as { sound?: string }).sound === prompt);
    const handle = bot.run(bot.members.alice, { name: 'song', options: { prompt } });
    const jobId = await bot.jobIdOf(handle);
    await expect.poll(() => creates().length, { timeout: 15_000, message: 'the service never got the create' }).toBe(1);

    const signalled = Date.now();
    expect(await bot.stop()).toEqual({ code: 0, signal: null });
    expect(Date.now() - signalled).toBeLessThan(STOP_LIMIT_MS + 5_000);
    expect(bot.output()).toContain('left to the next worker');
    expect(bot.output()).not.toContain('did not stop in time');
    expect((await bot.jobState(jobId))?.state).toBe('submitting');

    await bot.start();
    // Taken over once its lock lapsed: the task may exist, so the job is refunded, never sent again.
    await expect.poll(async () => (await bot.jobState(jobId))?.state, { timeout: 40_000, message: 'the next process never settled the job' }).toBe('timed_out');
    expect(await ledgerOfJob(bot.db.db, jobId)).toEqual([
      { kind: 'reserve', amount: -10, key: `job:${jobId}:debit` },
      { kind: 'refund', amount: 10, key: `job:${jobId}:credit` },
    ]);
    expect(await bot.delivered(jobId)).toEqual({ state: 'timed_out', deliveryState: 'delivered' });
    expect(creates()).toHaveLength(1);
  }, 120_000);
});
