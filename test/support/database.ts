/**
 * Each test file gets its own database, cloned from the migrated template: a clean state
 * in milliseconds, and files that run in parallel never see each other's rows.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, inject } from 'vitest';
import { connectDatabase, type DatabaseHandle } from '../../src/db/client.js';
import { MIGRATIONS_FOLDER, runMigrations } from '../../src/db/migrate.js';

export interface TestDatabase extends DatabaseHandle {
  readonly url: string;
  /** Empties every table, for tests inside one file that need a fresh start. */
  truncateAll(): Promise<void>;
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

export interface TestDatabaseOptions {
  /**
   * Which committed migrations it has: all (a clone of the migrated template), none (an empty
   * database, e.g. to restore a dump into), or the first `n` of the journal. @defaultValue 'all'
   */
  readonly migrations?: 'all' | 'none' | number;
  /** The server's maintenance database. @defaultValue the shared test server's */
  readonly adminUrl?: string;
  /**
   * Kept after the file, for the next files of its worker (a shared world, see
   * ../integration/commands/harness.ts): the run's global teardown drops it. Only on the shared
   * test server.
   */
  readonly keep?: boolean;
}


interface JournalEntry {
  readonly tag: string;
}

/** The committed migrations' tags, in the order they apply. */
export function committedMigrationTags(): string[] {
  const journal = JSON.parse(readFileSync(path.join(MIGRATIONS_FOLDER, 'meta/_journal.json'), 'utf8')) as { entries: JournalEntry[] };
  return journal.entries.map((entry) => entry.tag);
}

/**
 * Applies the first `count` committed migrations, as a release that had only those would; with
 * `online`, also the online steps that follow them: every committed one, or those up to the
 * file named (the steps of the release that had only those migrations).
 */
export async function migrateTo(url: string, count: number, { online = false }: { online?: boolean | string } = {}): Promise<void> {
  const folder = await mkdtemp(path.join(os.tmpdir(), 'migrations-'));
  try {
    const journal = JSON.parse(readFileSync(path.join(MIGRATIONS_FOLDER, 'meta/_journal.json'), 'utf8')) as { entries: JournalEntry[] };
    const entries = journal.entries.slice(0, count);
    await mkdir(path.join(folder, 'meta'));
    await writeFile(path.join(folder, 'meta/_journal.json'), JSON.stringify({ ...journal, entries }));
    for (const { tag } of entries) await copyFile(path.join(MIGRATIONS_FOLDER, `${tag}.sql`), path.join(folder, `${tag}.sql`));
    if (online !== false) {
      await mkdir(path.join(folder, 'online'));
      const steps = (await readdir(path.join(MIGRATIONS_FOLDER, 'online'))).filter((name) => online === true || name <= online);
      for (const step of steps) await copyFile(path.join(MIGRATIONS_FOLDER, 'online', step), path.join(folder, 'online', step));
    }
    await runMigrations(url, { migrationsFolder: folder });
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

/**
 * Postgres 15 and later copy a template block by block through the WAL unless told to copy its
 * files; for the small test template copying the files costs less than half the CPU, and so
 * does the drop at the file's end (docs/performance/suite-runs.md).
 */
async function fileCopyStrategy(admin: pg.Client): Promise<string> {
  const { rows } = await admin.query<{ server_version_num: string }>('show server_version_num');
  return Number(rows[0]!.server_version_num) >= 150_000 ? ' strategy file_copy' : '';
}

export async function createTestDatabase({ migrations = 'all', adminUrl = inject('postgresAdminUrl'), keep = false }: TestDatabaseOptions = {}): Promise<TestDatabase> {
  const name = `${keep ? inject('keptDatabasePrefix') : 'test_'}${randomUUID().replaceAll('-', '')}`;
  const fromTemplate = migrations === 'all' && adminUrl === inject('postgresAdminUrl');
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`create database ${name}${fromTemplate ? ` template ${inject('templateDatabase')}${await fileCopyStrategy(admin)}` : ''}`);
  } finally {
    await admin.end();
  }
  const url = withDatabase(adminUrl, name);
  if (migrations === 'all' && !fromTemplate) await runMigrations(url);
  if (typeof migrations === 'number') await migrateTo(url, migrations);
  const handle = connectDatabase(url);

  if (!keep) afterAll(async () => {
    await handle.close();
    const cleanup = new pg.Client({ connectionString: adminUrl });
    await cleanup.connect();
    try {
      await cleanup.query(`drop database if exists ${name} with (force)`);
    } finally {
      await cleanup.end();
    }
  });

  return {
    ...handle,
    url,
    async truncateAll() {
      const tables = await handle.pool.query<{ tablename: string }>(
        "select tablename from pg_tables where schemaname = 'public'",
      );
      const names = tables.rows.map((row) => `"${row.tablename}"`).join(', ');
      if (names) await handle.pool.query(`truncate ${names} restart identity cascade`);
    },
  };
}

/** A Redis URL and a key prefix of this file's own, so queues never collide. */
export function testRedis(): { url: string; prefix: string } {
  return { url: inject('redisUrl'), prefix: `test-${randomUUID()}` };
}
