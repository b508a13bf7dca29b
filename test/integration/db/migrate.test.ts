import { randomUUID } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { cp, mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { MIGRATIONS_FOLDER, runMigrations } from '../../../src/db/migrate.js';
import { committedMigrationTags, migrateTo } from '../../support/database.js';

const adminUrl = inject('postgresAdminUrl');
const created: string[] = [];

async function freshDatabase(): Promise<string> {
  const name = `migrate_${randomUUID().replaceAll('-', '')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  created.push(name);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function describeSchema(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const columns = await client.query(
      `select table_name, column_name, data_type, is_nullable, column_default
         from information_schema.columns where table_schema = 'public' order by 1, 2`,
    );
    const indexes = await client.query(`select indexdef from pg_indexes where schemaname = 'public' order by 1`);
    return [...columns.rows.map((row) => JSON.stringify(row)), ...indexes.rows.map((row) => row.indexdef as string)];
  } finally {
    await client.end();
  }
}

afterAll(async () => {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  for (const name of created) await admin.query(`drop database if exists ${name} with (force)`);
  await admin.end();
});

describe('runMigrations', () => {
  it('creates the schema, and a second run changes nothing', async () => {
    const url = await freshDatabase();
    const first = await runMigrations(url);
    expect(first.applied).toBeGreaterThan(0);
    const schema = await describeSchema(url);
    expect(schema.some((line) => line.includes('"table_name":"credit_ledger"'))).toBe(true);
    expect(schema.some((line) => line.includes('credit_ledger_key_unique'))).toBe(true);

    const second = await runMigrations(url);
    expect(second.applied).toBe(0);
    expect(await describeSchema(url)).toEqual(schema);
  });

  it('lets two processes start together: the advisory lock serialises them', async () => {
    const url = await freshDatabase();
    const results = await Promise.all([runMigrations(url), runMigrations(url), runMigrations(url)]);
    const applied = results.map((result) => result.applied).sort();
    expect(applied[0]).toBe(0);
    expect(applied[1]).toBe(0);
    expect(applied[2]).toBeGreaterThan(0);
  });
});

/** The committed online steps' file names. */
function committedOnlineSteps(): string[] {
  return readdirSync(path.join(MIGRATIONS_FOLDER, 'online')).filter((name) => name.endsWith('.sql'));
}

/** The committed migrations, with online steps of a test's own beside them. */
async function migrationsWithOnlineSteps(steps: Record<string, string>): Promise<string> {
  const folder = await mkdtemp(path.join(os.tmpdir(), 'migrations-online-'));
  await cp(MIGRATIONS_FOLDER, folder, { recursive: true });
  await mkdir(path.join(folder, 'online'), { recursive: true });
  for (const [name, sql] of Object.entries(steps)) await writeFile(path.join(folder, 'online', name), sql);
  return folder;
}

async function query<T extends pg.QueryResultRow>(url: string, text: string, values: readonly unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text, [...values])).rows;
  } finally {
    await client.end();
  }
}

describe('online steps (migrations/online)', () => {
  it('build an index concurrently after the migrations, once, and record it', async () => {
    const url = await freshDatabase();
    const folder = await migrationsWithOnlineSteps({
      '9001_jobs_updated.sql': '-- built while the bot writes\nCREATE INDEX CONCURRENTLY IF NOT EXISTS "jobs_updated_test_idx" ON "jobs" ("updated_at");\n',
    });
    const committed = committedOnlineSteps();
    expect(await runMigrations(url, { migrationsFolder: folder })).toMatchObject({ applied: expect.any(Number), online: committed.length + 1 });
    expect(await query(url, "select indexname from pg_indexes where indexname = 'jobs_updated_test_idx'")).toHaveLength(1);
    const recorded = await query<{ name: string }>(url, 'select name from drizzle.__online_steps order by name');
    expect(recorded.map((row) => row.name)).toEqual([...committed, '9001_jobs_updated.sql'].sort());
    expect(await runMigrations(url, { migrationsFolder: folder })).toEqual({ applied: 0, online: 0 });
  });

  it('name the song of the videos and downloads made before 0018, in batches, and leave the rest', async () => {
    const url = await freshDatabase();
    const tags = committedMigrationTags();
    await migrateTo(url, tags.indexOf('0018_jobs_parent'));
    const song = randomUUID();
    const rows = [
      [song, 'song', { prompt: 'a song' }],
      [randomUUID(), 'video', { clipId: 'c1', sourceJobId: song }],
      [randomUUID(), 'download', { clipId: 'c1', format: 'mp3', sourceJobId: song }],
      [randomUUID(), 'download', { clipId: 'c1', format: 'wav', sourceJobId: song }],
    ] as const;
    await query(url, "insert into guilds (id) values ('g1')");
    for (const [id, kind, request] of rows) {
      await query(url, "insert into jobs (id, guild_id, channel_id, user_id, kind, request, cost, state) values ($1, 'g1', 'c', 'u', $2, $3, 1, 'succeeded')", [id, kind, request]);
    }
    await migrateTo(url, tags.length, { online: true });
    const filled = await query<{ kind: string; parent_job_id: string | null }>(url, 'select kind, parent_job_id from jobs order by kind');
    expect(filled).toEqual([
      { kind: 'download', parent_job_id: song },
      { kind: 'download', parent_job_id: song },
      { kind: 'song', parent_job_id: null },
      { kind: 'video', parent_job_id: song },
    ]);
    // In batches that commit as they go: a batch smaller than the rows left, then nothing left.
    await query(url, 'update jobs set parent_job_id = null');
    await query(url, 'call jobs_parent_backfill(2)');
    expect(await query(url, 'select id from jobs where parent_job_id is null')).toEqual([{ id: song }]);
  });

  it('rebuild an index whose build failed half way (left invalid), once the cause is gone', async () => {
    const url = await freshDatabase();
    await runMigrations(url);
    // Two guilds of one balance make the unique build fail, as an interrupted build would, leaving an invalid index.
    await query(url, "insert into guilds (id) values ('1'), ('2')");
    const folder = await migrationsWithOnlineSteps({
      '9001_guild_balance.sql': 'CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "guilds_balance_test_idx" ON "guilds" ("balance");',
    });
    await expect(runMigrations(url, { migrationsFolder: folder })).rejects.toThrow(/could not create unique index/);
    const invalid = "select i.indisvalid as valid from pg_index i join pg_class c on c.oid = i.indexrelid where c.relname = 'guilds_balance_test_idx'";
    expect(await query(url, invalid)).toEqual([{ valid: false }]);
    expect(await query(url, "select name from drizzle.__online_steps where name = '9001_guild_balance.sql'")).toEqual([]);

    await query(url, "delete from guilds where id = '2'");
    expect(await runMigrations(url, { migrationsFolder: folder })).toEqual({ applied: 0, online: 1 });
    expect(await query(url, invalid)).toEqual([{ valid: true }]);
  });

  it('refuse a step that is not one concurrent index build, and apply nothing of it', async () => {
    const url = await freshDatabase();
    const folder = await migrationsWithOnlineSteps({ '9001_drop.sql': 'DROP TABLE "jobs";' });
    await expect(runMigrations(url, { migrationsFolder: folder })).rejects.toThrow('expected one CREATE INDEX CONCURRENTLY IF NOT EXISTS statement');
    expect(await query(url, "select to_regclass('public.jobs') is not null as present")).toEqual([{ present: true }]);
  });

  it('call a procedure that commits as it goes, once, and record it; a failed call is not recorded and runs again', async () => {
    const url = await freshDatabase();
    await runMigrations(url);
    // Stands for a fill: two commits, and it fails while the table says so.
    await query(
      url,
      `create table step_calls (n serial primary key, at timestamptz default now());
       create table step_fails (fail boolean);
       insert into step_fails values (true);
       create procedure step_fill() language plpgsql as $$
       begin
         insert into step_calls default values;
         commit;
         if (select fail from step_fails) then raise exception 'step_fill failed'; end if;
         insert into step_calls default values;
         commit;
       end $$;`,
    );
    const folder = await migrationsWithOnlineSteps({ '9001_fill.sql': '-- a fill\nCALL step_fill();\n' });
    await expect(runMigrations(url, { migrationsFolder: folder })).rejects.toThrow('step_fill failed');
    // What it committed before failing stays; the step is not recorded.
    expect(await query(url, 'select count(*)::int as n from step_calls')).toEqual([{ n: 1 }]);
    expect(await query(url, "select name from drizzle.__online_steps where name = '9001_fill.sql'")).toEqual([]);

    await query(url, 'update step_fails set fail = false');
    expect(await runMigrations(url, { migrationsFolder: folder })).toEqual({ applied: 0, online: 1 });
    expect(await query(url, 'select count(*)::int as n from step_calls')).toEqual([{ n: 3 }]);
    expect(await runMigrations(url, { migrationsFolder: folder })).toEqual({ applied: 0, online: 0 });
    expect(await query(url, 'select count(*)::int as n from step_calls')).toEqual([{ n: 3 }]);
  });

  it('refuse a call with arguments or beside another statement', async () => {
    const url = await freshDatabase();
    for (const sql of ['CALL credit_usage_backfill(1);', 'CALL credit_usage_backfill(); DROP TABLE "jobs";']) {
      const folder = await migrationsWithOnlineSteps({ '9001_call.sql': sql });
      await expect(runMigrations(url, { migrationsFolder: folder }), sql).rejects.toThrow('or one CALL <procedure>();');
    }
    expect(await query(url, "select to_regclass('public.jobs') is not null as present")).toEqual([{ present: true }]);
  });
});
