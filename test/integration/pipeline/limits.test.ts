/**
 * The bot's own brakes on the music service: a cap on tasks in flight per task type (the bot
 * queues instead of hammering the service into 429s) and a global cap on polls per second.
 */
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import type { SubmitResult } from '../../../src/pipeline/requests.js';
import { found } from '../../support/found.js';
import { startHarness, type Harness } from '../../support/pipeline-harness.js';
import { jobRow } from '../../support/ledger.js';

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
  it('stays under POLL_MAX_PER_SECOND however many jobs wait', async () => {
    // Tasks that outlast the measurement; the test ends them itself.
    h.setSimForThisTest({ taskMs: 60_000 });
    const started = Date.now();
    // Lyrics have their own in-flight cap of one too, so use three kinds of task at once.
    const kinds = [
      { kind: 'lyrics', prompt: 'rate one' },
      { kind: 'upload', audioUrl: `${h.sim.url}/producer/x.m4a` },
      { kind: 'song', prompt: 'rate three' },
    ] as const;
    const jobIds: string[] = [];
    onTestFinished(async () => {
      // Leave nothing in flight to hold up the other test's songs.
      for (const jobId of jobIds) {
        const taskId = await vi.waitFor(async () => found((await jobRow(h.db.db, jobId))?.upstreamTaskId ?? undefined, `job ${jobId} submitted`), 15_000);
        h.sim.completeTask(taskId);
      }
      for (const jobId of jobIds) await delivered(jobId);
    });
    for (const request of kinds) jobIds.push(((await h.request(request)).result as SubmitResult).jobId);
    const polls = () => h.sim.requests.filter((r) => r.path.startsWith('/api/v1/producer/task/') && r.at >= started).map((r) => r.at);

    // Measure over three seconds of the service's own record: until a poll comes 3 s after the first.
    const span = () => {
      const at = polls();
      return at.length === 0 ? 0 : Math.max(...at) - Math.min(...at);
    };
    await expect.poll(span, { timeout: 15_000 }).toBeGreaterThanOrEqual(3_000);
    const at = polls();
    // Three tasks polled every 50 ms would make about 60 polls a second without the limiter.
    // The limiter (workers.ts, `pollLimiter`) starts polls at least ceil(1050 / 4) = 263 ms
    // apart across all workers, so five starts span at least 1,052 ms: any second holds at most
    // 4 of them, and at most 4 requests when a start's time to its request varies by less than
    // POLL_START_SLACK_MS (50 ms). The service's clock sees the requests, not the starts: on a
    // machine busy with other test files one request can take 100 ms longer than the one before,
    // so the window here leaves 150 ms for that (five polls inside any 850 ms would still mean
    // starts closer than the limiter allows). test/unit/pipeline/poll-limiter.test.ts checks
    // the exact second against a model of the limiter.
    const JITTER_MS = 150;
    let busiest = 0;
    for (const start of at) busiest = Math.max(busiest, at.filter((time) => time >= start && time < start + 1_000 - JITTER_MS).length);
    expect(busiest).toBeLessThanOrEqual(4);
    const spanSeconds = (Math.max(...at) - Math.min(...at)) / 1_000;
    expect(at.length).toBeGreaterThan(4);
    expect(at.length / Math.ceil(spanSeconds + 1)).toBeLessThanOrEqual(4);
  }, 30_000);
});
