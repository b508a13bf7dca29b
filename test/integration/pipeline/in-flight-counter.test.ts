/**
 * The in-flight counter (`jobs_in_flight`) that the submission claim reads: kept by triggers on
 * `jobs`, it equals a recount of the jobs in 'submitting' or 'submitted' at every committed
 * moment, through a storm of reservations, claims, requeues, failures, completions, timeouts
 * and cancellations on two task types and two guilds at once; and that storm ends without a
 * deadlock, the lock order being advisory lock, job row, guild row, counter row
 * (docs/decisions/in-flight-counter.md).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import { reserveForJob, verifyLedger } from '../../../src/credits/index.js';
import type { RowFor } from '../../../src/db/insert-from.js';
import { jobs, type JobKind } from '../../../src/db/schema.js';
import { silentLogger } from '../../../src/logger.js';
import { createMetrics } from '../../../src/metrics.js';
import { DEFAULT_SETTINGS, type PipelineDeps } from '../../../src/pipeline/deps.js';
import { claimSubmission } from '../../../src/pipeline/job-rows.js';
import {
  cancelQueuedJob,
  completeJob,
  failAtSubmission,
  markSubmitted,
  requeue,
  timeOutJob,
} from '../../../src/pipeline/transitions.js';
import { runMigrations } from '../../../src/db/migrate.js';
import { committedMigrationTags, createTestDatabase } from '../../support/database.js';
import { randomForTest, type SeededRandom } from '../../support/seeded-random.js';
import { guildOnEarlierSchema, guildWith } from '../credits/support.js';

const test = await createTestDatabase();
const db = test.db;
const deps = {
  db,
  now: () => new Date(),
  settings: { ...DEFAULT_SETTINGS, publicUrl: undefined },
  metrics: createMetrics({ deploymentGauges: false }),
  logger: silentLogger,
} as unknown as PipelineDeps;

const KINDS: readonly JobKind[] = ['song', 'lyrics'];
const COST = 2;

/** Per kind: the counter and a recount, read in one snapshot. */
async function counterAndRecount(): Promise<Array<{ kind: string; counter: number; recount: number }>> {
  return db.transaction(
    async (tx) => {
      const { rows } = await tx.execute<{ kind: string; counter: number; recount: number }>(sql`
        select k.kind,
               coalesce((select count from jobs_in_flight f where f.kind = k.kind), 0)::int as counter,
               (select count(*) from jobs j where j.kind = k.kind and j.state in ('submitting', 'submitted'))::int as recount
        from unnest(${`{${KINDS.join(',')}}`}::text[]) as k(kind)
        order by k.kind`);
      return rows;
    },
    { isolationLevel: 'repeatable read', accessMode: 'read only' },
  );
}

/** A job recorded by its reservation's own statement, as a member's request records it. */
async function reserve(guildId: string, kind: JobKind): Promise<{ id: string; kind: JobKind }> {
  const id = randomUUID();
  const row: RowFor<typeof jobs> = {
    table: jobs,
    values: { id, guildId, channelId: 'c', userId: 'u', kind, request: { kind, prompt: 'storm' }, cost: COST, webhookSecret: 's' },
  };
  const reservation = await reserveForJob(db, { guildId, jobId: id, userId: 'u', amount: COST, alongside: row });
  if (!reservation.ok) throw new Error(`reservation refused: ${reservation.reason}`);
  return { id, kind };
}

/** The running test's draws: seeded, the seed named in its failure (set first thing in each test that draws). */
let random: SeededRandom;
const pause = (most: number) => new Promise((resolve) => setTimeout(resolve, random.below(most)));
const pick = <T,>(choices: readonly T[]): T => choices[random.below(choices.length)]!;

/** A final status carrying what a song and lyrics need, so a success is not an empty one. */
function status(state: 'succeeded' | 'failed') {
  return { state, clips: [{ audioUrl: 'https://media.invalid/a.mp3', lyrics: 'la la' }], lyrics: 'la la' } as unknown as Parameters<typeof completeJob>[2];
}

beforeEach(async () => {
  await test.truncateAll();
});

describe('the in-flight counter', () => {
  it('equals a recount in every snapshot through a storm of moves on two task types, which ends without a deadlock', async () => {
    random = randomForTest();
    const CAP = 6;
    const guildIds = [await guildWith(db, 10_000), await guildWith(db, 10_000)];
    const endings = new Map<string, number>();
    const ended = (how: string) => endings.set(how, (endings.get(how) ?? 0) + 1);

    /** One job's life, each step a transition a worker, the reconciler or a member makes. */
    async function life(guildId: string, kind: JobKind): Promise<void> {
      const job = await reserve(guildId, kind);
      await pause(5);
      if (random.next() < 0.15) {
        if (await cancelQueuedJob(deps, job.id)) return void ended('cancelled');
      }
      for (;;) {
        const outcome = await claimSubmission(db, job, CAP);
        if (outcome === 'not_queued') throw new Error(`job ${job.id} was not queued`);
        if (outcome === 'cap_reached') {
          await pause(10);
          continue;
        }
        await pause(3);
        const step = random.next();
        if (step < 0.15) {
          await requeue(deps, job.id);
          continue;
        }
        if (step < 0.25) {
          await failAtSubmission(deps, job.id, { kind: 'bad_request', message: 'refused' });
          return void ended('failed at submission');
        }
        break;
      }
      const taskId = `task-${randomBytes(6).toString('hex')}`;
      if (random.next() < 0.8) await markSubmitted(deps, job.id, taskId);
      await pause(5);
      const end = pick(['succeeded', 'failed', 'deadline', 'unconfirmed', 'race'] as const);
      if (end === 'succeeded' || end === 'failed') await completeJob(deps, job.id, status(end), taskId);
      else if (end === 'race') {
        // A webhook's completion and the reconciler's timeout at once: one of them wins.
        await Promise.all([completeJob(deps, job.id, status('succeeded'), taskId), timeOutJob(deps, job, false)]);
      } else await timeOutJob(deps, job, end === 'unconfirmed');
      ended(end);
    }

    const lives: Array<Promise<void>> = [];
    for (let i = 0; i < 60; i += 1) for (const guildId of guildIds) for (const kind of KINDS) lives.push(life(guildId, kind));

    // Watch while the storm runs: each snapshot's counter against its recount, and the cap.
    const mismatches: unknown[] = [];
    let snapshots = 0;
    let mostInFlight = 0;
    let running = true;
    const storm = Promise.allSettled(lives).finally(() => (running = false));
    while (running) {
      for (const row of await counterAndRecount()) {
        if (row.counter !== row.recount) mismatches.push(row);
        mostInFlight = Math.max(mostInFlight, row.recount);
      }
      snapshots += 1;
    }
    const results = await storm;

    // Every move settled: no deadlock (40P01) and no other error ended any of them.
    expect(results.filter((result) => result.status === 'rejected')).toEqual([]);
    expect(snapshots).toBeGreaterThan(5);
    // The storm did fill the cap, and the counter never let a claim past it.
    expect(mostInFlight).toBe(CAP);
    expect(mismatches).toEqual([]);
    expect([...endings.values()].reduce((sum, n) => sum + n, 0)).toBe(lives.length);
    expect(await counterAndRecount()).toEqual(KINDS.map((kind) => ({ kind, counter: 0, recount: 0 })).sort((a, b) => a.kind.localeCompare(b.kind)));
    expect(await verifyLedger(db)).toEqual([]);
  }, 60_000);

  it('keeps the lock order when a guild\'s row is held: waits form a chain, not a cycle, and exits of the task type go on', async () => {
    const [held, free] = [await guildWith(db, 100), await guildWith(db, 100)];
    const [queuedSong, waitingSong, lyrics, doneOnHeld, doneOnFree] = await Promise.all([
      reserve(held, 'song'),
      reserve(held, 'song'),
      reserve(free, 'lyrics'),
      reserve(held, 'song'),
      reserve(free, 'song'),
    ]);
    for (const job of [doneOnHeld, doneOnFree]) {
      expect(await claimSubmission(db, job, 10)).toBe('claimed');
      expect(await markSubmitted(deps, job.id, `task-${job.id}`)).toBe(true);
    }
    const lockWaits = async () => {
      const { rows } = await db.execute<{ n: number }>(
        sql`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
      );
      return rows[0]!.n;
    };

    // A reservation group holding the guild's row, as a busy guild's does.
    const holder = await test.pool.connect();
    // Let go even when a wait below never ends (a test timeout), so that the other waits end too.
    onTestFinished(async () => {
      await holder.query('rollback').catch(() => {});
      holder.release();
    });
    await holder.query('begin');
    await holder.query('select 1 from guilds where id = $1 for update', [held]);
    // The member cancels: the job's row, then the guild's row (waits).
    const cancel = cancelQueuedJob(deps, queuedSong.id);
    await expect.poll(lockWaits).toBe(1);
    // A worker claims that job: the task type's lock, then the job's row (waits).
    const claim = claimSubmission(db, queuedSong, 10);
    await expect.poll(lockWaits).toBe(2);
    // A completion on the held guild: its job's row, then the guild's row (waits).
    const failedOnHeld = completeJob(deps, doneOnHeld.id, status('failed'), `task-${doneOnHeld.id}`);
    await expect.poll(lockWaits).toBe(3);
    // The next claim of the task type waits for its lock.
    const nextClaim = claimSubmission(db, waitingSong, 10);
    await expect.poll(lockWaits).toBe(4);

    // Meanwhile an exit of the same task type on another guild commits, counter and all,
    // and a claim of another task type goes through.
    expect((await completeJob(deps, doneOnFree.id, status('succeeded'), `task-${doneOnFree.id}`))?.state).toBe('succeeded');
    expect(await claimSubmission(db, lyrics, 10)).toBe('claimed');
    expect(await lockWaits()).toBe(4);

    await holder.query('commit');
    expect((await cancel)?.state).toBe('cancelled');
    expect(await claim).toBe('not_queued');
    expect((await failedOnHeld)?.state).toBe('failed');
    expect(await nextClaim).toBe('claimed');
    expect(await counterAndRecount()).toEqual([
      { kind: 'lyrics', counter: 1, recount: 1 },
      { kind: 'song', counter: 1, recount: 1 },
    ]);
    expect(await verifyLedger(db)).toEqual([]);
  });

  it('follows jobs written in flight directly, moved from one kind to another, deleted, and emptied by TRUNCATE', async () => {
    const guildId = await guildWith(db, 0);
    const values = (kind: JobKind, state: 'queued' | 'submitted') => ({
      id: randomUUID(),
      guildId,
      channelId: 'c',
      userId: 'u',
      kind,
      state,
      request: { kind },
      cost: 0,
    });
    const rows = [values('song', 'submitted'), values('song', 'submitted'), values('lyrics', 'queued')];
    await db.insert(jobs).values(rows);
    expect(await counterAndRecount()).toEqual([
      { kind: 'lyrics', counter: 0, recount: 0 },
      { kind: 'song', counter: 2, recount: 2 },
    ]);
    await db.execute(sql`update jobs set kind = 'lyrics' where id = ${rows[0]!.id}`);
    await db.execute(sql`delete from jobs where id = ${rows[1]!.id}`);
    expect(await counterAndRecount()).toEqual([
      { kind: 'lyrics', counter: 1, recount: 1 },
      { kind: 'song', counter: 0, recount: 0 },
    ]);
    // Moved in and out within one transaction: nothing counted.
    await db.transaction(async (tx) => {
      await tx.execute(sql`update jobs set state = 'submitting' where id = ${rows[2]!.id}`);
      await tx.execute(sql`update jobs set state = 'failed' where id = ${rows[2]!.id}`);
    });
    expect(await counterAndRecount()).toEqual([
      { kind: 'lyrics', counter: 1, recount: 1 },
      { kind: 'song', counter: 0, recount: 0 },
    ]);
    await db.execute(sql`truncate jobs cascade`);
    const { rows: left } = await db.execute<{ n: number }>(sql`select count(*)::int as n from jobs_in_flight`);
    expect(left[0]!.n).toBe(0);
  });

  it('starts from an exact count when the migration runs while jobs move in and out of flight', async () => {
    random = randomForTest();
    const before = await createTestDatabase({ migrations: committedMigrationTags().indexOf('0010_in_flight_counter') });
    const guildId = await guildOnEarlierSchema(before.db, 0);
    const states = ['queued', 'submitting', 'submitted'] as const;
    const rows = Array.from({ length: 300 }, (_, i) => ({
      id: randomUUID(),
      guildId,
      channelId: 'c',
      userId: 'u',
      kind: KINDS[i % 2]!,
      state: states[i % 3]!,
      request: {},
      cost: 0,
    }));
    // In the earlier schema's columns: today's jobs table has more.
    const values = rows.map((row) => sql`(${row.id}, ${row.guildId}, ${row.channelId}, ${row.userId}, ${row.kind}, ${row.state}, '{}'::jsonb, ${row.cost})`);
    await before.db.execute(sql`insert into jobs (id, guild_id, channel_id, user_id, kind, state, request, cost) values ${sql.join(values, sql`, `)}`);

    // Workers of the previous release keep moving jobs while the new release migrates.
    let migrated = false;
    let movesAfter = 0;
    const mover = async () => {
      while (movesAfter < 100) {
        const to = pick(states);
        await before.db.execute(sql`update jobs set state = ${to} where id = ${pick(rows).id}`);
        if (migrated) movesAfter += 1;
      }
    };
    const movers = [mover(), mover(), mover()];
    await runMigrations(before.url);
    migrated = true;
    await Promise.all(movers);

    const { rows: counts } = await before.db.execute<{ kind: string; counter: number; recount: number }>(sql`
      select k.kind,
             coalesce((select count from jobs_in_flight f where f.kind = k.kind), 0)::int as counter,
             (select count(*) from jobs j where j.kind = k.kind and j.state in ('submitting', 'submitted'))::int as recount
      from unnest(${`{${KINDS.join(',')}}`}::text[]) as k(kind)`);
    expect(counts.every((row) => row.recount > 0)).toBe(true);
    for (const row of counts) expect(row.counter).toBe(row.recount);
  });
});
