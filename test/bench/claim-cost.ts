/**
 * The submission claim's cost with none and with many tasks in flight: `claim_submission`,
 * which reads the in-flight counter, beside a copy of the claim that counted the jobs
 * (migration 0005), on the same rows of a throwaway Postgres. Prints the median and the worst
 * per-claim time of each round; the cap is as high as `scale` sets it, so the count never stops early.
 *
 *   npx tsx test/bench/claim-cost.ts [in-flight counts, default 0,20000] [rounds, default 5]
 */
import { readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { runMigrations } from '../../src/db/migrate.js';
import { startEmbeddedPostgres } from '../../src/embedded/embedded-postgres.js';
import { ROOT } from '@music-bot/test-world';
import { medianOf, printTable, round, settlePostgres } from './support.js';

const IN_FLIGHT = (process.argv[2] ?? '0,20000').split(',').map(Number);
const ROUNDS = Number(process.argv[3] ?? 5);
const CLAIMS_PER_ROUND = 200;
const CAP = 1_000_000;

/** The claim of migration 0005, which counted the jobs in flight, under another name: for comparison only. */
const COUNTING_CLAIM = readFileSync(path.join(ROOT, 'migrations/0005_claim_submission.sql'), 'utf8').replace(
  'CREATE FUNCTION claim_submission(',
  'CREATE FUNCTION claim_submission_counting(',
);

async function main(): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'claim-cost-'));
  await chmod(dir, 0o755);
  const postgres = await startEmbeddedPostgres({ dataDir: path.join(dir, 'postgres'), database: 'claims' });
  const url = new URL(postgres.adminUrl);
  url.pathname = '/claims';
  const db = new pg.Pool({ connectionString: url.toString(), max: 2 });
  try {
    await runMigrations(url.toString());
    await db.query(COUNTING_CLAIM);
    await db.query(`insert into guilds (id) values ('bench')`);
    const rows: Array<Record<string, string | number>> = [];
    for (const inFlight of IN_FLIGHT) {
      await db.query(`truncate jobs cascade`);
      await db.query(
        `insert into jobs (guild_id, channel_id, user_id, kind, request, cost, state)
         select 'bench', 'c', 'u', 'song', '{}', 0, 'submitted' from generate_series(1, $1)`,
        [inFlight],
      );
      await db.query('vacuum analyze jobs');
      await settlePostgres(db);
      for (const claim of ['claim_submission', 'claim_submission_counting']) {
        const medians: number[] = [];
        const worsts: number[] = [];
        const commitMedians: number[] = [];
        for (let r = 0; r < ROUNDS; r += 1) {
          const { rows: queued } = await db.query<{ id: string }>(
            `insert into jobs (guild_id, channel_id, user_id, kind, request, cost)
             select 'bench', 'c', 'u', 'song', '{}', 0 from generate_series(1, $1) returning id`,
            [CLAIMS_PER_ROUND],
          );
          const calls: number[] = [];
          const commits: number[] = [];
          const client = await db.connect();
          try {
            for (const { id } of queued) {
              // The call (lock, read, move) and its commit (the counter's deferred update, the WAL
              // flush) timed apart: the call is what the task type's other claims wait for.
              await client.query('begin');
              const start = performance.now();
              const { rows: outcome } = await client.query<{ o: string }>(`select ${claim}($1::uuid, '{song}'::text[], 'musicbot:inflight:create_music', $2::integer) as o`, [id, CAP]);
              const called = performance.now();
              await client.query('commit');
              calls.push(called - start);
              commits.push(performance.now() - called);
              if (outcome[0]?.o !== 'claimed') throw new Error(`${claim}: ${outcome[0]?.o}`);
            }
          } finally {
            client.release();
          }
          // Back to where the round started, so every round claims over the same number in flight.
          await db.query(`delete from jobs where id = any($1::uuid[])`, [queued.map((row) => row.id)]);
          medians.push(medianOf(calls));
          worsts.push(Math.max(...calls));
          commitMedians.push(medianOf(commits));
        }
        rows.push({
          'in flight': inFlight,
          claim: claim === 'claim_submission' ? 'counter (0010)' : 'count (0005)',
          'call median ms (median of rounds)': round(medianOf(medians), 3),
          'call median ms, each round': medians.map((m) => round(m, 3)).join(' '),
          'call worst ms (worst of rounds)': round(Math.max(...worsts), 3),
          'commit median ms': round(medianOf(commitMedians), 3),
        });
      }
    }
    printTable(`claim_submission, ${CLAIMS_PER_ROUND} claims a round, ${ROUNDS} rounds, one connection, cap ${CAP}`, rows);
  } finally {
    await db.end();
    await postgres.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
