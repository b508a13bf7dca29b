/**
 * Polls due together go younger task first (`pollPriority`), both as first polls
 * (`enqueuePoll`) and as later ones (`pollAgainAt`): when they queue behind the rate cap, the
 * wait falls on the old tasks, for which it is the smallest share of their time. On a real
 * Redis with the poll worker's own limiter.
 */
import { randomUUID } from 'node:crypto';
import { DelayedError, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { pollAgainAt, pollPriority } from '../../../src/pipeline/processors/poll.js';
import { pollLimiter } from '../../../src/pipeline/workers.js';
import { createQueues, QUEUE_NAMES, type PollPayload, type Queues } from '../../../src/queue/queues.js';
import { testRedis } from '../../support/database.js';

let redis: Redis;
let queues: Queues;
let prefix: string;

beforeAll(() => {
  const test = testRedis();
  prefix = test.prefix;
  redis = new Redis(test.url, { maxRetriesPerRequest: null });
  queues = createQueues(redis, { prefix });
});
afterAll(async () => {
  await queues.poll.obliterate({ force: true });
  await queues.close();
  await redis.quit();
});

/** Starts the poll queue's worker at 20 polls a second; `take` sees each entry and may put it back. */
function pollWorker(take: (entry: Job<PollPayload>, token?: string) => Promise<void>): Worker<PollPayload> {
  return new Worker<PollPayload>(QUEUE_NAMES.poll, take, { connection: redis.duplicate(), prefix, concurrency: 1, limiter: pollLimiter(20) });
}

describe('polls due together', () => {
  it('first polls: the youngest task goes first, whatever the order they were queued in', async () => {
    const ages = [90_000, 33_000, 150_000, 45_000, 33_500];
    const byAge = new Map<string, number>(ages.map((age) => [randomUUID(), age]));
    // Queued with no worker running: all due at once when it starts.
    for (const [jobId, age] of byAge) await queues.enqueuePoll(jobId, 0, pollPriority(age));
    const taken: number[] = [];
    const worker = pollWorker(async (entry) => void taken.push(byAge.get(entry.data.jobId)!));
    try {
      await vi.waitFor(() => expect(taken).toHaveLength(ages.length), 10_000);
    } finally {
      await worker.close();
    }
    expect(taken).toEqual([...ages].sort((a, b) => a - b));
  });

  it('later polls keep that order once put back (pollAgainAt), and a poll queued without an age goes first', async () => {
    const ages = new Map<string, number>([randomUUID(), randomUUID(), randomUUID()].map((jobId, i) => [jobId, [120_000, 40_000, 70_000][i]!]));
    for (const jobId of ages.keys()) await queues.enqueuePoll(jobId, 0, pollPriority(1_000));
    const dueAt = Date.now() + 3_000;
    const second: string[] = [];
    let unaged: string | undefined;
    const worker = pollWorker(async (entry, token) => {
      if (entry.data.attempt === 0 && ages.has(entry.data.jobId)) {
        // Each first poll puts its entry back, all due at the same moment.
        await pollAgainAt(entry, token, dueAt, ages.get(entry.data.jobId)!);
        throw new DelayedError();
      }
      second.push(entry.data.jobId);
    });
    try {
      await vi.waitFor(async () => expect(await queues.poll.getDelayedCount()).toBe(ages.size), 10_000);
      // A poll a reconcile pass queues again carries no age: it is not held behind the others.
      unaged = randomUUID();
      await queues.enqueuePoll(unaged, Math.max(0, dueAt - Date.now()));
      await vi.waitFor(() => expect(second).toHaveLength(ages.size + 1), 10_000);
    } finally {
      await worker.close();
    }
    expect(second[0]).toBe(unaged);
    expect(second.slice(1).map((jobId) => ages.get(jobId))).toEqual([40_000, 70_000, 120_000]);
  });
});
