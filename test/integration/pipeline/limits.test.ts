/**
 * The bot's own brakes on the music service: a cap on tasks in flight per task type (the bot
 * queues instead of hammering the service into 429s) and a global cap on polls per second.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SubmitResult } from '../../../src/pipeline/requests.js';
import { eventually, startHarness, type Harness } from '../../support/pipeline-harness.js';
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

describe('the in-flight cap', () => {
  it('keeps one song at the service at a time, shows the queue positions, and finishes them all', async () => {
    const results: SubmitResult[] = [];
    for (let i = 0; i < 3; i += 1) {
      const { result } = await h.request({ kind: 'song', prompt: `one at a time ${i}` });
      results.push(result as SubmitResult);
    }
    expect(results[0]!.queuePosition).toBe(1);
    expect(results[2]!.queuePosition).toBeGreaterThan(1);

    for (const { jobId } of results) {
      await eventually(async () => ((await jobRow(h.db.db, jobId))?.deliveryState === 'delivered' ? true : undefined), 30_000);
    }
    // Never two create_music tasks running at the service at once.
    const tasks = h.sim.listTasks().filter((t) => t.taskType === 'create_music').sort((a, b) => a.createdAt - b.createdAt);
    expect(tasks).toHaveLength(3);
    for (let i = 1; i < tasks.length; i += 1) expect(tasks[i]!.createdAt).toBeGreaterThanOrEqual(tasks[i - 1]!.endedAt!);
    expect(h.sim.requests.filter((r) => r.path === '/api/v1/producer/create').every((r) => r.status === 200)).toBe(true);
  }, 60_000);
});

describe('the global poll rate', () => {
  it('stays under POLL_MAX_PER_SECOND however many jobs wait', async () => {
    h.sim.setTaskMs(3_000);
    h.sim.clearRecords();
    // Lyrics have their own in-flight cap of one too, so use five kinds of task at once.
    const kinds = [
      { kind: 'lyrics', prompt: 'rate one' },
      { kind: 'upload', audioUrl: `${h.sim.url}/producer/x.m4a` },
      { kind: 'song', prompt: 'rate three' },
    ] as const;
    for (const request of kinds) await h.request(request);
    await new Promise((resolve) => setTimeout(resolve, 3_500));
    const polls = h.sim.requests.filter((r) => r.path.startsWith('/api/v1/producer/task/')).map((r) => r.at);
    expect(polls.length).toBeGreaterThan(4);
    let busiest = 0;
    for (const start of polls) busiest = Math.max(busiest, polls.filter((at) => at >= start && at < start + 1_000).length);
    // Three tasks polled every 50 ms would make about 60 polls a second without the limiter.
    // The limiter counts in fixed one-second windows, so a sliding second can hold two windows' worth.
    expect(busiest).toBeLessThanOrEqual(8);
    const spanSeconds = Math.max(1, (Math.max(...polls) - Math.min(...polls)) / 1_000);
    expect(polls.length / Math.ceil(spanSeconds + 1)).toBeLessThanOrEqual(4);
    h.sim.setTaskMs(700);
  }, 30_000);
});
