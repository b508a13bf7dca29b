/**
 * The bot's own brakes on the music service: a cap on tasks in flight per task type (the bot
 * queues instead of hammering the service into 429s) and a global cap on polls per second.
 */
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { pollLimiter } from '../../../src/pipeline/workers.js';
import { QUEUE_NAMES } from '../../../src/queue/queues.js';
import type { SubmitResult } from '../../../src/pipeline/requests.js';
import { found } from '../../support/found.js';
import { startHarness, type Harness } from '../../support/pipeline-harness.js';
import { jobRow } from '../../support/ledger.js';
import { monitorRedis } from '../../support/redis-monitor.js';

let h: Harness;

beforeAll(async () => {
  h = await startHarness({
    webhooks: false,
    startingCredits: 500,
    sim: { taskMs: 700 },
    settings: { upstreamMaxInFlight: 1, pollIntervalMs: { min: 50, max: 50 } },
    env: { POLL_MAX_PER_SECOND: '4' },
  });
});
afterAll(async () => h?.close());

async function delivered(jobId: string) {
  return vi.waitFor(async () => found(((await jobRow(h.db.db, jobId))?.deliveryState === 'delivered' ? true : undefined), `job ${jobId} delivered`), 30_000);
}

describe('the in-flight cap', () => {
  it('keeps one song at the service at a time, shows the queue positions, and finishes them all', async () => {
    const prompts = [0, 1, 2].map((i) => `one at a time ${i}`);
    const results: SubmitResult[] = [];
    for (const prompt of prompts) {
      const { result } = await h.request({ kind: 'song', prompt });
      results.push(result as SubmitResult);
    }
    expect(results[0]!.queuePosition).toBe(1);
    expect(results[2]!.queuePosition).toBeGreaterThan(1);

    for (const { jobId } of results) await delivered(jobId);
    // Never two create_music tasks running at the service at once.
    const tasks = h.sim
      .listTasks()
      .filter((t) => prompts.includes(String(t.body.sound)))
      .sort((a, b) => a.createdAt - b.createdAt);
    expect(tasks).toHaveLength(3);
    for (let i = 1; i < tasks.length; i += 1) expect(tasks[i]!.createdAt).toBeGreaterThanOrEqual(tasks[i - 1]!.endedAt!);
    const creates = h.sim.requests.filter((r) => r.path === '/api/v1/producer/create' && prompts.includes(String((r.body as { sound?: string }).sound)));
    expect(creates.map((r) => r.status)).toEqual([200, 200, 200]);
  }, 60_000);
});

describe('the global poll rate', () => {
  it('starts every poll through one shared limiter window at a time, each as long as POLL_MAX_PER_SECOND gives', async () => {
    // Tasks that outlast the test; it ends them itself.
    h.setSimForThisTest({ taskMs: 60_000 });
    // What Redis runs on the poll queue's limiter key (BullMQ's limiter: each start increments
    // it; the first start of a window sets its time to live, the window's length).
    const limiterKey = `${h.prefix}:${QUEUE_NAMES.poll}:limiter`;
    const limiter: string[][] = [];
    const monitor = await monitorRedis(h.redisUrl, ({ name, args }) => {
      if (args[0] === limiterKey && ['incr', 'pexpire'].includes(name)) limiter.push([name, ...args.slice(1)]);
    });
    const since = h.sim.requests.length;
    // Lyrics have their own in-flight cap of one too, so use three kinds of task at once.
    const kinds = [
      { kind: 'lyrics', prompt: 'rate one' },
      { kind: 'upload', audioUrl: `${h.sim.url}/producer/x.m4a` },
      { kind: 'song', prompt: 'rate three' },
    ] as const;
    const jobIds: string[] = [];
    onTestFinished(async () => {
      monitor.close();
      // Leave nothing in flight to hold up the other test's songs.
      for (const jobId of jobIds) {
        const taskId = await vi.waitFor(async () => found((await jobRow(h.db.db, jobId))?.upstreamTaskId ?? undefined, `job ${jobId} submitted`), 15_000);
        h.sim.completeTask(taskId);
      }
      for (const jobId of jobIds) await delivered(jobId);
    });
    for (const request of kinds) jobIds.push(((await h.request(request)).result as SubmitResult).jobId);
    const taskIds = await Promise.all(
      jobIds.map((jobId) => vi.waitFor(async () => found((await jobRow(h.db.db, jobId))?.upstreamTaskId ?? undefined, `job ${jobId} submitted`), 15_000)),
    );
    const polls = () => h.sim.requests.slice(since).filter((r) => taskIds.some((taskId) => r.path === `/api/v1/producer/task/${taskId}`));

    // Each task is due every 50 ms, so the limiter alone spaces them: wait for four polls of each.
    await vi.waitFor(() => found(taskIds.every((taskId) => polls().filter((r) => r.path.endsWith(taskId)).length >= 4) || undefined, 'four polls of each task'), 20_000);
    const seen = polls().length;
    // Every poll the service saw was a start the limiter counted (its record can trail the request by a moment).
    await vi.waitFor(() => found(limiter.filter(([command]) => command === 'incr').length >= seen || undefined, `${seen} limiter starts`), 5_000);
    // One start per window: each start opens a window of its own (a second start in a window
    // would count 2 without setting its length), as long as one poll in POLL_MAX_PER_SECOND allows.
    const record = limiter.slice(0, limiter.length - (limiter.length % 2));
    expect(record.length / 2).toBeGreaterThanOrEqual(seen);
    expect(record).toEqual(Array.from({ length: record.length / 2 }, () => [['incr'], ['pexpire', String(pollLimiter(4).duration)]]).flat());
  }, 30_000);
});
