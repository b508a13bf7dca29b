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
}

/**
 * Applies the committed migrations, then the online steps (below). Two processes starting
 * together take turns on an advisory lock, so the second finds the work done and changes nothing.
 */
export async function runMigrations(
  url: string,
  { migrationsFolder = MIGRATIONS_FOLDER }: MigrateOptions = {},
): Promise<{ applied: number; online: number }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await takeMigrationLock(client);
    const before = await countApplied(client);
    await migrate(drizzle(client), { migrationsFolder });
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

/** What an online step may hold: one index built without blocking writes. */
export const ONLINE_STEP = /^\s*CREATE\s+(?:UNIQUE\s+)?INDEX\s+CONCURRENTLY\s+IF\s+NOT\s+EXISTS\s+"?(\w+)"?\s+ON\s+[^;]+;?\s*$/i;

/**
 * `migrations/online/*.sql`: indexes on live tables, built with `CREATE INDEX CONCURRENTLY`,
 * which Postgres refuses inside a transaction and drizzle's migrator runs every migration in
 * one. Each file is one such statement, applied once, in name order, after the migrations,
 * and recorded in `drizzle.__online_steps`. A build that was interrupted leaves an invalid
 * index behind: it is dropped (concurrently too) and built again.
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
    if (index === undefined) throw new Error(`migrations/online/${file}: expected one CREATE INDEX CONCURRENTLY IF NOT EXISTS statement`);
    const leftover = await client.query<{ valid: boolean }>(
      'select i.indisvalid as valid from pg_index i join pg_class c on c.oid = i.indexrelid where c.relname = $1 and pg_table_is_visible(c.oid)',
      [index],
    );
    if (leftover.rows[0]?.valid === false) await client.query(`drop index concurrently if exists "${index}"`);
    await client.query(statement);
    await client.query('insert into drizzle.__online_steps (name) values ($1) on conflict do nothing', [file]);
    applied += 1;
  }
  return applied;
}
