/**
 * The bot's connections plan statements without their parameters' values (db/client.ts), so a
 * partial index serves only a statement that names its predicate's constants. The queue's
 * position, the reconciler's open jobs and the delivery sweep each read their partial index on a
 * table of mostly finished jobs, never the whole table: Postgres's own scan counters say so.
 * A control, the same count with the state as a parameter, shows the counters would see it.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { connectDatabase, type DatabaseHandle } from '../../../src/db/client.js';
import { listOpenJobs, listUndelivered, queuePositionOf } from '../../../src/pipeline/job-rows.js';
import { createTestDatabase } from '../../support/database.js';

const test = await createTestDatabase();
// One connection: its statistics are flushed on demand before each reading.
const bot: DatabaseHandle = connectDatabase(test.url, { max: 1 });
afterAll(() => bot.close());

async function scans(): Promise<{ seq: number; idx: number }> {
  await bot.pool.query('select pg_stat_force_next_flush()');
  // A statement after the flush is asked: the backend reports when it goes idle after it.
  await bot.pool.query('select 1');
  const { rows } = await test.pool.query<{ seq: string; idx: string }>(
    "select seq_scan as seq, coalesce(idx_scan, 0) as idx from pg_stat_user_tables where relname = 'jobs'",
  );
  return { seq: Number(rows[0]!.seq), idx: Number(rows[0]!.idx) };
}

/** Waits until the statistics show `calls` more scans of either kind than `before`, then returns the readings. */
async function scansAfter(before: { seq: number; idx: number }, calls: number): Promise<{ seq: number; idx: number }> {
  let now = before;
  await expect.poll(async () => ((now = await scans()).idx + now.seq) - (before.idx + before.seq), { timeout: 15_000, interval: 200 }).toBeGreaterThanOrEqual(calls);
  return now;
}

describe('partial indexes under generic plans', () => {
  it('the queue counts, the open jobs and the undelivered ones never read the whole table', async () => {
    await test.pool.query(`insert into guilds (id) values ('g-partial') on conflict do nothing`);
    // A table as a running bot has it: thousands finished and delivered, a few open or waiting for delivery.
    await test.pool.query(`
      insert into jobs (id, guild_id, channel_id, user_id, kind, request, cost, state, delivery_state, completed_at, created_at)
      select gen_random_uuid(), 'g-partial', 'c', 'u' || i, 'song', '{"kind":"song","prompt":"p"}', 1,
        case when i <= 10 then 'queued' when i <= 40 then 'submitted' else 'succeeded' end,
        case when i <= 40 then 'pending' when i <= 45 then 'pending' else 'delivered' end,
        case when i <= 40 then null else now() end,
        now() - make_interval(secs => 10000 - i)
      from generate_series(1, 6000) i`);
    await test.pool.query('analyze jobs');
    const { rows } = await test.pool.query<{ id: string; kind: 'song'; created_at: Date }>(
      "select id, kind, created_at from jobs where state = 'queued' order by created_at limit 1 offset 5",
    );
    const queued = rows[0]!;

    const control = await scans();
    await bot.pool.query('select count(*) from jobs where state = $1', ['queued']);
    await expect.poll(async () => (await scans()).seq - control.seq, { timeout: 15_000, interval: 200 }).toBeGreaterThanOrEqual(1);

    const before = await scans();
    expect(await queuePositionOf(bot.db, { id: queued.id, kind: 'song', createdAt: queued.created_at, state: 'queued' })).toBe(6);
    expect(await listOpenJobs(bot.db)).toHaveLength(40);
    expect(await listUndelivered(bot.db)).toHaveLength(5);
    const after = await scansAfter(before, 3);
    expect({ seqScans: after.seq - before.seq }).toEqual({ seqScans: 0 });
  });
});
