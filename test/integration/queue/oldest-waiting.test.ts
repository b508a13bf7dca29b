/**
 * `musicbot_queue_oldest_waiting_seconds` reads how long the oldest due entry of a queue has
 * waited for a worker: a waiting entry from when it was added (or its delay ran out), a delayed
 * entry from when it fell due. On a real Redis, a queue of the test's own, no worker.
 */
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { oldestWaitingSeconds } from '../../../src/queue/health-records.js';
import { testRedis } from '../../support/database.js';

let redis: Redis;
let queue: Queue;

beforeAll(() => {
  const { url, prefix } = testRedis();
  redis = new Redis(url, { maxRetriesPerRequest: null });
  queue = new Queue('ages', { connection: redis, prefix });
});
afterAll(async () => {
  await queue.obliterate({ force: true });
  await queue.close();
  await redis.quit();
}, 30_000);

describe('oldestWaitingSeconds', () => {
  it('is 0 for an empty queue', async () => {
    expect(await oldestWaitingSeconds(queue, redis)).toBe(0);
  });

  it('counts a waiting entry from when it was added', async () => {
    const entry = await queue.add('first', {});
    expect(await oldestWaitingSeconds(queue, redis, entry.timestamp + 4_500)).toBe(4.5);
    await entry.remove();
  });

  it('counts a delayed entry only once it is due, from when it fell due', async () => {
    const entry = await queue.add('later', {}, { delay: 60_000 });
    expect(await oldestWaitingSeconds(queue, redis, entry.timestamp + 30_000)).toBe(0);
    expect(await oldestWaitingSeconds(queue, redis, entry.timestamp + 62_000)).toBe(2);
    await entry.remove();
  });

  it('takes the oldest of the waiting and the overdue', async () => {
    const delayed = await queue.add('overdue', {}, { delay: 1_000 });
    const waiting = await queue.add('waiting', {});
    const now = Math.max(delayed.timestamp + 1_000, waiting.timestamp) + 10_000;
    expect(await oldestWaitingSeconds(queue, redis, now)).toBe((now - Math.min(delayed.timestamp + 1_000, waiting.timestamp)) / 1000);
  });
});
