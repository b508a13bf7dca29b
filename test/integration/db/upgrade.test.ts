/**
 * An upgrade with work in flight. The database has every migration but the newest, and holds
 * jobs in every state as the previous release wrote them (raw SQL of that schema, not the
 * current drizzle schema); Redis holds their queue entries as that release wrote them (its
 * queue names, entry ids, payloads and options, written out here rather than taken from
 * src/queue). Then the current bot starts, which applies the newest migration: every job ends
 * once, none is sent to the service twice, none is charged twice, none is posted twice.
 */
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startApp, type App } from '../../../src/app.js';
import { loadConfig } from '../../../src/config.js';
import { verifyLedger } from '../../../src/credits/index.js';
import { silentLogger } from '../../../src/logger.js';
import { MusicApiClient } from '../../../src/music-api/index.js';
import { committedMigrationTags, createTestDatabase } from '../../support/database.js';
import { found } from '../../support/found.js';
import { jobRow, ledgerOfJob } from '../../support/ledger.js';
import { workerOnly } from '../../support/pipeline-harness.js';
import { SIM_KEY, startStack, type Stack } from '../../support/stack.js';

const STARTING_CREDITS = 500;
const tags = committedMigrationTags();

/** The jobs the previous release left behind, one per state it could leave a job in. */
type Left = 'queued' | 'submitted' | 'webhookTaken' | 'succeeded' | 'failed' | 'delivered';
const LEFT: readonly Left[] = ['queued', 'submitted', 'webhookTaken', 'succeeded', 'failed', 'delivered'];

interface Seeded {
  readonly id: string;
  readonly prompt: string;
  readonly taskId?: string;
  readonly messageId?: string;
}

let stack: Stack;
let app: App | undefined;
let cost: number;
const seeded = {} as Record<Left, Seeded>;
/** What the service's webhook said of the `webhookTaken` job's task, as its complete entry carries it. */
let webhookStatus: unknown;
let appliedBefore: number;
const closers: Array<() => Promise<unknown>> = [];

async function appliedMigrations(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ n: number }>('select count(*)::int as n from drizzle.__drizzle_migrations');
  return rows[0]!.n;
}

/**
 * The previous release's writes. Rows: its job acceptance (the guild's opening grant, the
 * job's charge and row), its submission (`submitted`, the task id, the deadline), its
 * completion (result or error, and a failed task's refund) and its delivery. Entries: as its
 * src/queue/queues.ts added them (unchanged since but for the maintenance tasks, which had no
 * `account` pass).
 */
async function seedPreviousRelease(): Promise<void> {
  const db = stack.db.pool;
  const client = new MusicApiClient({ baseUrl: stack.sim.url, apiKey: SIM_KEY });
  cost = client.costOf('song');
  const guildId = stack.guild.id;
  const now = Date.now();
  const at = (agoMs: number) => new Date(now - agoMs);

  await db.query(`insert into guilds (id, balance, created_at, updated_at) values ($1, $2, $3, $3)`, [guildId, STARTING_CREDITS, at(60_000)]);
  await db.query(
    `insert into credit_ledger (guild_id, key, kind, amount, balance_after, created_at) values ($1, $2, 'grant', $3, $3, $4)`,
    [guildId, `guild:${guildId}:starting-credits`, STARTING_CREDITS, at(60_000)],
  );
  let balance = STARTING_CREDITS;
  const moveCredits = async (jobId: string, key: string, kind: 'reserve' | 'refund', amount: number) => {
    balance += amount;
    await db.query('update guilds set balance = $2, updated_at = now() where id = $1', [guildId, balance]);
    await db.query(
      `insert into credit_ledger (guild_id, key, kind, amount, balance_after, job_id, user_id) values ($1, $2, $3, $4, $5, $6, $7)`,
      [guildId, key, kind, amount, balance, jobId, stack.members.alice],
    );
  };

  for (const left of LEFT) {
    const id = randomUUID();
    const prompt = `left ${left} by the previous release ${id.slice(0, 8)}`;
    await moveCredits(id, `job:${id}:debit`, 'reserve', -cost);
    await db.query(
      `insert into jobs (id, guild_id, channel_id, user_id, kind, request, cost, webhook_secret, application_id, interaction_token,
                         interaction_at, remix_of, locale, guild_locale, created_at, updated_at)
       values ($1, $2, $3, $4, 'song', $5, $6, $7, $8, null, null, null, null, null, $9, $9)`,
      [id, guildId, stack.channelId, stack.members.alice, { kind: 'song', prompt }, cost, randomBytes(32).toString('hex'), stack.emulator.applicationId, at(30_000)],
    );
    if (left === 'queued') {
      seeded[left] = { id, prompt };
      continue;
    }

    // Submitted: the service has the task (webhooks were off, as they are for this bot).
    const { taskId } = await client.createSong({ sound: prompt });
    await db.query(
      `update jobs set state = 'submitted', submit_attempts = 1, upstream_task_id = $2, submitted_at = $3, deadline_at = $4, updated_at = $3
        where id = $1`,
      [id, taskId, at(20_000), new Date(now + 30 * 60_000)],
    );
    if (left === 'submitted') {
      seeded[left] = { id, prompt, taskId };
      continue;
    }

    stack.sim.completeTask(taskId, left === 'failed' ? 'failure' : 'success');
    const status = await client.getProducerTask(taskId);
    if (left === 'webhookTaken') {
      // The webhook was verified and its news queued; the job waits for the complete entry.
      seeded[left] = { id, prompt, taskId };
      webhookStatus = status;
      continue;
    }
    const result = {
      state: status.state,
      clips: status.clips.map((clip) => ({
        clipId: clip.clipId,
        title: clip.title,
        lyrics: clip.lyrics,
        tags: clip.tags,
        audioUrl: clip.audioUrl,
        imageUrl: clip.imageUrl,
        durationSeconds: clip.durationSeconds,
      })),
    };
    const error = left === 'failed' ? { kind: 'upstream_failed', message: 'The music service could not make this one.', creditsReturned: cost } : null;
    await db.query(`update jobs set state = $2, result = $3, error = $4, completed_at = $5, updated_at = $5 where id = $1`, [
      id,
      left === 'failed' ? 'failed' : 'succeeded',
      result,
      error,
      at(10_000),
    ]);
    if (left === 'failed') await moveCredits(id, `job:${id}:credit`, 'refund', cost);
    if (left === 'delivered') {
      const messageId = '1300000000000000001';
      await db.query(`update jobs set delivery_state = 'delivered', message_id = $2, delivered_at = $3, updated_at = $3 where id = $1`, [id, messageId, at(5_000)]);
      seeded[left] = { id, prompt, taskId, messageId };
      continue;
    }
    seeded[left] = { id, prompt, taskId };
  }

  // Redis, as the previous release left it.
  const redis = new Redis(stack.redisUrl, { maxRetriesPerRequest: null });
  const options = { connection: redis, prefix: stack.prefix, defaultJobOptions: { removeOnComplete: true, removeOnFail: { age: 7 * 24 * 3600 } } };
  const queue = (name: string) => new Queue(name, options);
  const [submit, poll, complete, deliver] = [queue('submit'), queue('poll'), queue('complete'), queue('deliver')];
  const maintenance = new Queue('maintenance', { ...options, defaultJobOptions: { removeOnComplete: true, removeOnFail: 100 } });
  try {
    await submit.add('submit', { jobId: seeded.queued.id }, { jobId: `submit-${seeded.queued.id}`, attempts: 6, backoff: { type: 'jitter' } });
    // Polled twice already; the next poll due in a moment.
    await poll.add('poll', { jobId: seeded.submitted.id, attempt: 2 }, { jobId: `poll-${seeded.submitted.id}`, delay: 500 });
    const taken = seeded.webhookTaken;
    await complete.add(
      'complete',
      { jobId: taken.id, status: webhookStatus, taskId: taken.taskId, source: 'webhook', receivedAt: now - 1_000 },
      { jobId: `complete-${taken.id}`, attempts: 10, backoff: { type: 'exponential', delay: 500 } },
    );
    for (const left of ['succeeded', 'failed'] as const) {
      // Its first post failed: the retry waits in the deliver queue.
      await deliver.add('deliver', { jobId: seeded[left].id }, { jobId: `deliver-${seeded[left].id}`, delay: 1_000, attempts: 8, backoff: { type: 'exponential', delay: 1000 } });
    }
    await maintenance.upsertJobScheduler('reconcile', { every: 60_000 }, { name: 'reconcile', data: {} });
    await maintenance.upsertJobScheduler('allowances', { every: 60 * 60_000 }, { name: 'allowances', data: {} });
  } finally {
    for (const q of [submit, poll, complete, deliver, maintenance]) await q.close();
    await redis.quit();
  }
}

/** Successful posts of a job's result to the channel: what the members saw. */
function postsOf(jobId: string): number {
  return stack.emulator.requests.filter(
    (r) => r.method === 'POST' && r.path === `/channels/${stack.channelId}/messages` && r.status < 300 && JSON.stringify(r.body ?? {}).includes(jobId),
  ).length;
}

beforeAll(async () => {
  const database = await createTestDatabase({ migrations: tags.length - 1 });
  stack = await startStack({ startingCredits: STARTING_CREDITS, sim: { taskMs: 1_500 }, database });
  closers.push(() => stack.close());
  appliedBefore = await appliedMigrations(stack.db.pool);
  await seedPreviousRelease();

  // The documented upgrade (docs/operations.md): migrate once with the one-shot command, then
  // start the new release, which does not migrate itself.
  await promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/scripts/db-migrate.ts'], {
    cwd: path.resolve(import.meta.dirname, '../../..'),
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', DATABASE_URL: stack.env.DATABASE_URL! },
  });
  const config = loadConfig({ env: { ...stack.env, ATTACH_AUDIO: 'false', LOG_LEVEL: 'silent', MIGRATE_ON_START: 'false' } });
  app = await startApp(config, silentLogger, workerOnly(stack.prefix));
  closers.unshift(() => app!.stop());
});
afterAll(async () => {
  for (const close of closers) await close().catch(() => {});
});

describe('the current bot started on the previous release’s database and queues', () => {
  it('applies the newest migration', async () => {
    expect(tags.length).toBeGreaterThan(1);
    expect(appliedBefore).toBe(tags.length - 1);
    expect(await appliedMigrations(stack.db.pool)).toBe(tags.length);
  });

  it('ends every job once: each sent to the service once, charged once, posted once', async () => {
    const ids = LEFT.map((left) => seeded[left].id);
    // The positive signal: every job posted, and no queue entry left that could act on one.
    await vi.waitFor(async () => {
      const rows = await Promise.all(ids.map((id) => jobRow(stack.db.db, id)));
      if (!rows.every((row) => row?.deliveryState === 'delivered')) throw new Error('still waiting for every job delivered');
      const entries = await Promise.all(ids.map((id) => stack.queueEntriesOf(id)));
      return found(entries.every((entry) => Object.keys(entry).length === 0) || undefined, 'every job delivered, and its queue entries run out');
    }, 30_000);

    const states = Object.fromEntries(await Promise.all(LEFT.map(async (left) => [left, (await jobRow(stack.db.db, seeded[left].id))?.state])));
    expect(states).toEqual({ queued: 'succeeded', submitted: 'succeeded', webhookTaken: 'succeeded', succeeded: 'succeeded', failed: 'failed', delivered: 'succeeded' });

    for (const left of LEFT) {
      const { id, prompt, taskId } = seeded[left];
      const tasks = stack.sim.listTasks().filter((task) => task.body.sound === prompt);
      expect(tasks, `${left}: tasks at the service`).toHaveLength(1);
      if (taskId) expect((await jobRow(stack.db.db, id))?.upstreamTaskId, `${left}: its task`).toBe(taskId);

      const refund = left === 'failed' ? [{ kind: 'refund', amount: cost, key: `job:${id}:credit` }] : [];
      expect(await ledgerOfJob(stack.db.db, id), `${left}: its ledger`).toEqual([{ kind: 'reserve', amount: -cost, key: `job:${id}:debit` }, ...refund]);

      expect(postsOf(id), `${left}: posts of its result`).toBe(left === 'delivered' ? 0 : 1);
    }
    expect((await jobRow(stack.db.db, seeded.delivered.id))?.messageId).toBe(seeded.delivered.messageId);
    expect(await verifyLedger(stack.db.db)).toEqual([]);
  }, 60_000);
});
