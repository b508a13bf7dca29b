import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { runMigrations } from '../../../src/db/migrate.js';

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
