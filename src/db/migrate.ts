import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { drizzle } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';

/** The checkout's `migrations/`, from the sources (src/db) or from the compiled build (build/src/db). */
export const MIGRATIONS_FOLDER = [new URL('../../migrations', import.meta.url), new URL('../../../migrations', import.meta.url)]
  .map((url) => fileURLToPath(url))
  .find((folder) => existsSync(path.join(folder, 'meta', '_journal.json'))) ?? fileURLToPath(new URL('../../migrations', import.meta.url));

/** Any constant will do; it only has to be the same for every process of this bot. */
const MIGRATION_LOCK_KEY = 7_215_334_101;

export interface MigrateOptions {
  /** A folder laid out as drizzle-kit writes one (tests migrate to an earlier point). @defaultValue the committed migrations */
  readonly migrationsFolder?: string;
  /**
   * How long a migration may wait for a lock on a table (`lock_timeout`) before it gives up and
   * applies nothing. A waiting `ALTER TABLE` queues every later reader of that table behind it,
   * so a long wait would stall the bot. The online steps wait as long as they need: they block
   * no reader or writer. @defaultValue none
   */
  readonly lockTimeoutMs?: number;
  /** How long opening the connection may take. @defaultValue none */
  readonly connectTimeoutMs?: number;
}

/** Thrown when a migration gave up waiting for a lock: nothing of that run was applied. */
export class MigrationLockTimeout extends Error {
  constructor(lockTimeoutMs: number, cause: unknown) {
    super(
      `a migration waited more than ${lockTimeoutMs} ms (MIGRATION_LOCK_TIMEOUT_MS) for a lock on a table another session holds, and gave up: ` +
        'nothing was applied. A long transaction or a session idle in one holds it (see pg_stat_activity); run the migrations again once it ends, or raise MIGRATION_LOCK_TIMEOUT_MS.',
      { cause },
    );
    this.name = 'MigrationLockTimeout';
  }
}

/**
 * Applies the committed migrations, then the online steps (below). Two processes starting
 * together take turns on an advisory lock, so the second finds the work done and changes nothing.
 */
export async function runMigrations(
  url: string,
  { migrationsFolder = MIGRATIONS_FOLDER, lockTimeoutMs, connectTimeoutMs }: MigrateOptions = {},
): Promise<{ applied: number; online: number }> {
  const client = new pg.Client({ connectionString: url, ...(connectTimeoutMs !== undefined && { connectionTimeoutMillis: connectTimeoutMs }) });
  await client.connect();
  try {
    await takeMigrationLock(client);
    const before = await countApplied(client);
    if (lockTimeoutMs !== undefined) await client.query(`set lock_timeout = ${Math.trunc(lockTimeoutMs)}`);
    try {
      await migrate(drizzle(client), { migrationsFolder });
    } catch (error) {
      const code = (error as { cause?: { code?: unknown }; code?: unknown }).cause?.code ?? (error as { code?: unknown }).code;
      if (lockTimeoutMs !== undefined && code === '55P03') throw new MigrationLockTimeout(lockTimeoutMs, error);
      throw error;
    }
    await client.query('set lock_timeout = 0');
    const after = await countApplied(client);
    const online = await applyOnlineSteps(client, path.join(migrationsFolder, 'online'));
    return { applied: after - before, online };
  } finally {
    await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => {});
    await client.end();
  }
}

/**
 * The migration lock, tried until taken rather than waited for: a session blocked in
 * `pg_advisory_lock` holds a snapshot, which `CREATE INDEX CONCURRENTLY` in the lock holder's
 * session waits for, and Postgres would end the pair as a deadlock.
 */
async function takeMigrationLock(client: pg.Client): Promise<void> {
  for (let waitMs = 25; ; waitMs = Math.min(waitMs * 2, 500)) {
    const { rows } = await client.query<{ taken: boolean }>('select pg_try_advisory_lock($1) as taken', [MIGRATION_LOCK_KEY]);
    if (rows[0]?.taken) return;
    await new Promise((resolve) => setTimeout(resolve, waitMs));
  }
}

async function countApplied(client: pg.Client): Promise<number> {
  const exists = await client.query<{ present: boolean }>(
    "select to_regclass('drizzle.__drizzle_migrations') is not null as present",
  );
  if (!exists.rows[0]?.present) return 0;
  const result = await client.query<{ count: string }>('select count(*) from drizzle.__drizzle_migrations');
  return Number(result.rows[0]?.count ?? 0);
}

/** What an online step may hold: one index built without blocking writes… */
export const ONLINE_STEP = /^\s*CREATE\s+(?:UNIQUE\s+)?INDEX\s+CONCURRENTLY\s+IF\s+NOT\s+EXISTS\s+"?(\w+)"?\s+ON\s+[^;]+;?\s*$/i;

/** …or one call of a procedure a migration made, without arguments (a fill that commits as it goes). */
export const ONLINE_CALL = /^\s*CALL\s+"?(\w+)"?\s*\(\s*\)\s*;?\s*$/i;

/**
 * `migrations/online/*.sql`: work on live tables that must not run in one transaction, which
 * drizzle's migrator puts every migration in. Each file is one statement, applied once, in name
 * order, after the migrations, and recorded in `drizzle.__online_steps`:
 * - an index built with `CREATE INDEX CONCURRENTLY` (refused in a transaction). A build that was
 *   interrupted leaves an invalid index behind: it is dropped (concurrently too) and built again.
 * - `CALL <procedure>();`, a procedure that commits as it goes (so it holds no lock for long); it
 *   must be safe to run again, since an interrupted run is not recorded and runs again whole.
 */
async function applyOnlineSteps(client: pg.Client, folder: string): Promise<number> {
  if (!existsSync(folder)) return 0;
  const files = readdirSync(folder).filter((name) => name.endsWith('.sql')).sort();
  if (files.length === 0) return 0;
  await client.query('create table if not exists drizzle.__online_steps (name text primary key, applied_at timestamptz not null default now())');
  const done = new Set((await client.query<{ name: string }>('select name from drizzle.__online_steps')).rows.map((row) => row.name));
  let applied = 0;
  for (const file of files) {
    if (done.has(file)) continue;
    const statement = readFileSync(path.join(folder, file), 'utf8').replace(/^\s*--.*$/gm, '').trim();
    const index = ONLINE_STEP.exec(statement)?.[1];
    if (index !== undefined) {
      const leftover = await client.query<{ valid: boolean }>(
        'select i.indisvalid as valid from pg_index i join pg_class c on c.oid = i.indexrelid where c.relname = $1 and pg_table_is_visible(c.oid)',
        [index],
      );
      if (leftover.rows[0]?.valid === false) await client.query(`drop index concurrently if exists "${index}"`);
    } else if (!ONLINE_CALL.test(statement)) {
      throw new Error(`migrations/online/${file}: expected one CREATE INDEX CONCURRENTLY IF NOT EXISTS statement, or one CALL <procedure>();`);
    }
    // A query without parameters goes as a simple query, outside any transaction: a procedure may commit.
    await client.query(statement);
    await client.query('insert into drizzle.__online_steps (name) values ($1) on conflict do nothing', [file]);
    applied += 1;
  }
  return applied;
}
