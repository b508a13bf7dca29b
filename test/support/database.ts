/**
 * Each test file gets its own database, cloned from the migrated template: a clean state
 * in milliseconds, and files that run in parallel never see each other's rows.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, inject } from 'vitest';
import { connectDatabase, type DatabaseHandle } from '../../src/db/client.js';

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

export async function createTestDatabase(): Promise<TestDatabase> {
  const adminUrl = inject('postgresAdminUrl');
  const name = `test_${randomUUID().replaceAll('-', '')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`create database ${name} template ${inject('templateDatabase')}`);
  } finally {
    await admin.end();
  }
  const url = withDatabase(adminUrl, name);
  const handle = connectDatabase(url);

  afterAll(async () => {
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
