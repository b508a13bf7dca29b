/**
 * The weekly chart post on a real Postgres, Redis and the Discord emulator: two worker processes
 * (each its own connections) run the periodic pass from the queue's job scheduler, and the week's
 * chart is posted once, in the server's language, and the next post moves a week on.
 */
import { randomUUID } from 'node:crypto';
import { Worker } from 'bullmq';
import { eq } from 'drizzle-orm';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDiscordEmulator, type DiscordEmulator } from '@music-bot/discord-emulator';
import { connectDatabase, type DatabaseHandle } from '../../../src/db/client.js';
import { chartPosts, chartPostSettings, guilds, jobs } from '../../../src/db/schema.js';
import { createDiscordDelivery } from '../../../src/discord-rest/discord-delivery.js';
import { setChartPost } from '../../../src/guilds/chart-posts.js';
import { silentLogger } from '../../../src/logger.js';
import { postDueCharts } from '../../../src/pipeline/chart-posts.js';
import { toggleLike } from '../../../src/pipeline/likes.js';
import { createQueues, QUEUE_NAMES } from '../../../src/queue/queues.js';
import { createTestDatabase, testRedis, type TestDatabase } from '../../support/database.js';

let db: TestDatabase;
let emulator: DiscordEmulator;
const cleanups: Array<() => Promise<unknown>> = [];
let press = 1_500_000_000_000_000_000n;

beforeAll(async () => {
  db = await createTestDatabase();
  emulator = await startDiscordEmulator({ rateLimits: false });
});
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await emulator?.close();
});

/** One worker process: its own database connections and Discord client. */
function workerProcess() {
  const handle: DatabaseHandle = connectDatabase(db.url);
  cleanups.push(() => handle.close());
  return { db: handle.db, discord: createDiscordDelivery({ apiUrl: emulator.apiUrl, token: emulator.botToken }), logger: silentLogger, now: () => new Date() };
}

/** A server of the emulator with a liked song and its weekly post due now, in `locale`. */
async function serverWithDuePost(locale: string) {
  const guild = emulator.createGuild({ name: 'Charts' });
  const channel = emulator.createChannel(guild.id, { name: 'charts' });
  await db.db.insert(guilds).values({ id: guild.id, balance: 0 });
  const jobId = randomUUID();
  await db.db.insert(jobs).values({ id: jobId, guildId: guild.id, channelId: channel.id, userId: '42', kind: 'song', request: { kind: 'song', prompt: 'x', title: 'Weekly Hit' }, state: 'succeeded', cost: 10 });
  await toggleLike(db.db, { guildId: guild.id, jobId, userId: '43', pressId: String((press += 1_000n)) }, new Date());
  // Set a week ago: its first post is due already.
  await setChartPost(db.db, { guildId: guild.id, actorId: '1', channelId: channel.id, weekday: 1, hour: 9, timeZone: 'Europe/Berlin', locale, now: new Date(Date.now() - 8 * 86_400_000) });
  return { guildId: guild.id, channelId: channel.id };
}

const postsIn = (channelId: string) => emulator.channelMessages(channelId).filter((message) => message.author?.id === emulator.botUser.id);

describe('the weekly chart post', () => {
  it('is posted once when two processes run the due pass at the same moment', async () => {
    const { guildId, channelId } = await serverWithDuePost('de');
    const [first, second] = [workerProcess(), workerProcess()];
    const posted = await Promise.all([postDueCharts(first), postDueCharts(second), postDueCharts(first)]);
    expect(posted.reduce((a, b) => a + b, 0)).toBe(1);
    const [post] = postsIn(channelId);
    expect(post?.content?.split('\n').slice(0, 2)).toEqual(['**Die Top-Songs dieser Woche, nach Likes**', '`1.` **Weekly Hit** von <@42> · 1 Like · neu']);
    expect(postsIn(channelId)).toHaveLength(1);
    const [settings] = await db.db.select().from(chartPostSettings).where(eq(chartPostSettings.guildId, guildId));
    expect(settings!.nextAt.getTime()).toBeGreaterThan(Date.now());
    const [claim] = await db.db.select().from(chartPosts).where(eq(chartPosts.guildId, guildId));
    expect(claim?.messageId).toBe(post?.id);
  });

  it('is posted once by two worker processes running the pass from the job scheduler, again and again', async () => {
    const { channelId } = await serverWithDuePost('en-US');
    const { url, prefix } = testRedis();
    let runs = 0;
    for (let n = 0; n < 2; n += 1) {
      const deps = workerProcess();
      const redis = new Redis(url, { maxRetriesPerRequest: null });
      const queues = createQueues(redis, { prefix });
      await queues.scheduleMaintenance('charts', 100);
      const worker = new Worker(
        QUEUE_NAMES.maintenance,
        async (entry) => {
          if (entry.name !== 'charts') return;
          await postDueCharts(deps);
          runs += 1;
        },
        { connection: new Redis(url, { maxRetriesPerRequest: null }), prefix, concurrency: 2 },
      );
      cleanups.push(async () => {
        await worker.close();
        await queues.close();
        await redis.quit();
      });
    }
    await expect.poll(() => postsIn(channelId).length, { timeout: 10_000 }).toBe(1);
    const seen = runs;
    await expect.poll(() => runs, { timeout: 10_000 }).toBeGreaterThan(seen + 4);
    expect(postsIn(channelId)).toHaveLength(1);
    expect(postsIn(channelId)[0]?.content).toContain('**This week’s top songs, by likes**');
  });
});
