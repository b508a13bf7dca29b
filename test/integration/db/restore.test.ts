/**
 * A backup taken with pg_dump while jobs are in flight, restored with pg_restore into a fresh
 * database, and the bot started on it (Redis kept, as when only Postgres was lost). Jobs whose
 * task was recorded go on polling it; none is sent to the service twice; the ledger verifies.
 * The dump is taken when no job can change state before the old bot stops (the service is at
 * its cap and its tasks take seconds): what a restore loses is what happened after the dump
 * (docs/decisions/upgrades-and-restores.md), and this test checks that it loses nothing else.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startApp, type App } from '../../../src/app.js';
import { loadConfig } from '../../../src/config.js';
import { verifyLedger } from '../../../src/credits/index.js';
import type { Database } from '../../../src/db/client.js';
import { silentLogger } from '../../../src/logger.js';
import { committedMigrationTags, createTestDatabase, type TestDatabase } from '../../support/database.js';
import { found } from '../../support/found.js';
import { jobRow, ledgerOfJob } from '../../support/ledger.js';
import { findPgTools, runPgTool, serverFor, type PgTools } from '../../support/pg-tools.js';
import { workerOnly } from '../../support/pipeline-harness.js';
import { startStack, type Stack } from '../../support/stack.js';

const root = path.resolve(import.meta.dirname, '../../..');

const tools = await findPgTools();
const JOBS = 5;
const IN_FLIGHT = 2;

const title = 'missing' in tools ? `skipped: ${tools.missing}` : `pg_dump ${tools.major} from ${tools.binDir}, ${tools.server === 'shared' ? 'on the shared test server' : 'on a server of its own installation'}`;

describe.skipIf('missing' in tools)(`a restore of a dump taken with jobs in flight (${title})`, () => {
  const pgTools = tools as PgTools;
  const closers: Array<() => Promise<unknown>> = [];
  let stack: Stack;
  let restored: TestDatabase;
  let dumpDir: string;
  let restoredAt: number;
  let mismatchesAtRestore: unknown[];
  const jobIds: string[] = [];
  const prompts = new Map<string, string>();
  /** Each job's state and task id in the dump. */
  const atDump = new Map<string, { state: string; upstreamTaskId: string | null }>();

  const startBot = (databaseUrl: string, settings: { upstreamMaxInFlight: number }): Promise<App> =>
    startApp(loadConfig({ env: { ...stack.env, DATABASE_URL: databaseUrl, ATTACH_AUDIO: 'false', LOG_LEVEL: 'silent' } }), silentLogger, workerOnly(stack.prefix, settings));

  const rowsOf = (db: Database) => Promise.all(jobIds.map(async (id) => (await jobRow(db, id))!));

  beforeAll(async () => {
    const server = await serverFor(pgTools);
    closers.push(() => server.stop());
    const source = await createTestDatabase({ adminUrl: server.adminUrl });
    // Tasks long enough that none ends between the dump and the old bot's stop.
    stack = await startStack({ startingCredits: 100, sim: { taskMs: 8_000 }, database: source });
    closers.unshift(() => stack.close());
    dumpDir = await mkdtemp(path.join(os.tmpdir(), 'musicbot-dump-'));
    closers.push(() => rm(dumpDir, { recursive: true, force: true }));

    const old = await startBot(source.url, { upstreamMaxInFlight: IN_FLIGHT });
    closers.unshift(() => old.stop());
    for (let i = 0; i < JOBS; i += 1) {
      const prompt = `backed up ${i}`;
      const { jobId } = await old.pipeline.submit({
        requester: { guildId: stack.guild.id, channelId: stack.channelId, userId: stack.members.alice },
        request: { kind: 'song', prompt },
      });
      jobIds.push(jobId);
      prompts.set(jobId, prompt);
    }
    // In flight: as many at the service as it takes, the others waiting for their turn.
    await vi.waitFor(async () => {
      const rows = await rowsOf(source.db);
      const submitted = rows.filter((row) => row.state === 'submitted').length;
      const queued = rows.filter((row) => row.state === 'queued').length;
      return found(submitted === IN_FLIGHT && queued === JOBS - IN_FLIGHT ? true : undefined, `${IN_FLIGHT} jobs at the service and the others waiting`);
    }, 20_000);

    // The documented nightly backup (deploy/backup.sh), with an old dump for it to prune.
    const stale = path.join(dumpDir, 'musicbot-2000-01-01T000000Z.dump');
    writeFileSync(stale, 'an old dump');
    utimesSync(stale, new Date('2000-01-01'), new Date('2000-01-01'));
    const dump = execFileSync('bash', [path.join(root, 'deploy/backup.sh'), dumpDir, '14'], {
      env: { PATH: `${pgTools.binDir}:${process.env.PATH ?? ''}`, DATABASE_URL: source.url },
      encoding: 'utf8',
    }).trim();
    expect(readdirSync(dumpDir)).toEqual([path.basename(dump)]);
    await old.stop();
    for (const row of await rowsOf(source.db)) atDump.set(row.id, { state: row.state, upstreamTaskId: row.upstreamTaskId });

    restored = await createTestDatabase({ adminUrl: server.adminUrl, migrations: 'none' });
    runPgTool(pgTools, 'pg_restore', ['--no-owner', '--exit-on-error', `--dbname=${restored.url}`, dump]);
    mismatchesAtRestore = await verifyLedger(restored.db);
    restoredAt = Date.now();
    stack.sim.setTaskMs(500);
    const bot = await startBot(restored.url, { upstreamMaxInFlight: JOBS });
    closers.unshift(() => bot.stop());
  });
  afterAll(async () => {
    for (const close of closers) await close().catch(() => {});
  });

  it('dumps the jobs as they stood, every task the service took recorded, and a ledger that verifies', async () => {
    const states = [...atDump.values()].map((job) => job.state).sort();
    expect(states).toEqual([...Array(JOBS - IN_FLIGHT).fill('queued'), ...Array(IN_FLIGHT).fill('submitted')].sort());
    // The old bot sent nothing after the dump: the service has exactly the recorded tasks.
    expect(stack.sim.listTasks().map((task) => task.taskId).sort()).toEqual(
      [...atDump.values()].flatMap((job) => (job.upstreamTaskId ? [job.upstreamTaskId] : [])).sort(),
    );
    const { rows } = await restored.pool.query<{ n: number }>('select count(*)::int as n from drizzle.__drizzle_migrations');
    expect(rows[0]!.n).toBe(committedMigrationTags().length);
    expect(mismatchesAtRestore).toEqual([]);
  });

  it('finishes every job on the restored database: recorded tasks polled, none sent twice, each charged and posted once', async () => {
    await vi.waitFor(async () => {
      if (!(await rowsOf(restored.db)).every((row) => row.deliveryState === 'delivered')) throw new Error('still waiting for every job delivered');
      const entries = await Promise.all(jobIds.map((id) => stack.queueEntriesOf(id)));
      return found(entries.every((entry) => Object.keys(entry).length === 0) || undefined, 'every job delivered, and its queue entries run out');
    }, 40_000);

    for (const row of await rowsOf(restored.db)) {
      const before = atDump.get(row.id)!;
      expect(row.state).toBe('succeeded');
      expect(stack.sim.listTasks().filter((task) => task.body.sound === prompts.get(row.id))).toHaveLength(1);
      if (before.upstreamTaskId) {
        expect(row.upstreamTaskId).toBe(before.upstreamTaskId);
        const polled = stack.sim.requests.filter((r) => r.at >= restoredAt && r.path === `/api/v1/producer/task/${before.upstreamTaskId}`);
        expect(polled.length).toBeGreaterThan(0);
      }
      expect(await ledgerOfJob(restored.db, row.id)).toEqual([{ kind: 'reserve', amount: -row.cost, key: `job:${row.id}:debit` }]);
      const posts = stack.emulator.requests.filter(
        (r) => r.method === 'POST' && r.path === `/channels/${stack.channelId}/messages` && r.status < 300 && JSON.stringify(r.body ?? {}).includes(row.id),
      );
      expect(posts).toHaveLength(1);
    }
    expect(await verifyLedger(restored.db)).toEqual([]);
  }, 60_000);
});
