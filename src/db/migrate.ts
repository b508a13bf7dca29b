import { existsSync } from 'node:fs';
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
 * Applies the committed migrations. Two processes starting together take turns on an
 * advisory lock, so the second finds the work done and changes nothing.
 */
export async function runMigrations(url: string, { migrationsFolder = MIGRATIONS_FOLDER }: MigrateOptions = {}): Promise<{ applied: number }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    const before = await countApplied(client);
    await migrate(drizzle(client), { migrationsFolder });
    const after = await countApplied(client);
    return { applied: after - before };
  } finally {
    await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => {});
    await client.end();
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
