/**
 * The bot's limits on Postgres, each made to fire against the real server: a statement past
 * the pool's `statement_timeout`, a connection to an address that accepts and never answers,
 * and a migration that waits on a lock another session holds.
 */
import { readFileSync } from 'node:fs';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { connectDatabase, connectHealthProbe } from '../../../src/db/client.js';
import { MIGRATIONS_FOLDER, runMigrations } from '../../../src/db/migrate.js';
import { createTestDatabase, type TestDatabase } from '../../support/database.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});

/** A TCP server that takes connections and never says a word: Postgres behind a dead link. */
let silent: net.Server;
const held = new Set<net.Socket>();
beforeAll(async () => {
  silent = net.createServer((socket) => {
    held.add(socket);
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
});
afterAll(async () => {
  for (const socket of held) socket.destroy();
  await new Promise<void>((resolve) => silent.close(() => resolve()));
});
const silentUrl = () => `postgres://musicbot:secret@127.0.0.1:${(silent.address() as net.AddressInfo).port}/musicbot`;

/** How long `promise` took to reject, and with what; fails the test if it took longer than `withinMs`. */
async function rejection(promise: Promise<unknown>, withinMs: number): Promise<{ error: Error; ms: number }> {
  const started = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`still waiting after ${withinMs} ms`)), withinMs);
  });
  try {
    await Promise.race([promise.then(() => Promise.reject(new Error('it succeeded'))), late]);
    throw new Error('unreachable');
  } catch (error) {
    if ((error as Error).message.startsWith('still waiting') || (error as Error).message === 'it succeeded') throw error;
    return { error: error as Error, ms: Date.now() - started };
  } finally {
    clearTimeout(timer);
  }
}

describe("the pool's statement_timeout", () => {
  it('cancels a statement that runs past it, and lets a short one through', async () => {
    const handle = connectDatabase(database.url, { statementTimeoutMs: 300 });
    onTestFinished(() => handle.close());
    await expect(handle.db.execute(sql`select pg_sleep(0.05)`)).resolves.toBeDefined();
    const { error, ms } = await rejection(handle.db.execute(sql`select pg_sleep(3)`), 2_500);
    const cause = (error.cause ?? error) as Error & { code?: string };
    expect(cause.code).toBe('57014');
    expect(cause.message).toMatch(/statement timeout/);
    expect(ms).toBeLessThan(2_000);
    // The connection is still good for the next statement.
    await expect(handle.db.execute(sql`select 1`)).resolves.toBeDefined();
  });
});

describe('the connect timeout', () => {
  it("gives up on an address that accepts and never answers within the pool's limit", async () => {
    const handle = connectDatabase(silentUrl(), { connectTimeoutMs: 300 });
    onTestFinished(() => handle.close());
    const { error, ms } = await rejection(handle.db.execute(sql`select 1`), 3_000);
    expect(String(error.cause ?? error)).toMatch(/timeout/i);
    expect(ms).toBeLessThan(1_500);
  });

  it("gives up within the health probe's limit too", async () => {
    const probe = connectHealthProbe(silentUrl(), 'music-bot test', { connectTimeoutMs: 300 });
    onTestFinished(() => probe.close());
    const { error, ms } = await rejection(probe.ping(), 3_000);
    expect(String(error)).toMatch(/timeout/i);
    expect(ms).toBeLessThan(1_500);
  });

  it('gives up within the migrations\' limit too', async () => {
    const { error, ms } = await rejection(runMigrations(silentUrl(), { connectTimeoutMs: 300 }), 3_000);
    expect(String(error)).toMatch(/timeout/i);
    expect(ms).toBeLessThan(1_500);
  });
});

describe("the migrations' lock_timeout", () => {
  it('gives up on a table another session holds, says so, applies nothing, and succeeds once the lock is gone', async () => {
    // The committed migrations, and one more that alters a table the bot reads all the time.
    const folder = await mkdtemp(path.join(os.tmpdir(), 'migrations-lock-'));
    onTestFinished(() => rm(folder, { recursive: true, force: true }));
    await cp(MIGRATIONS_FOLDER, folder, { recursive: true });
    const journal = JSON.parse(readFileSync(path.join(folder, 'meta/_journal.json'), 'utf8')) as { entries: Array<{ idx: number; when: number; tag: string }> };
    const last = journal.entries.at(-1)!;
    journal.entries.push({ ...last, idx: last.idx + 1, when: last.when + 1, tag: '9999_lock_probe' });
    await writeFile(path.join(folder, 'meta/_journal.json'), JSON.stringify(journal));
    await writeFile(path.join(folder, '9999_lock_probe.sql'), 'ALTER TABLE "guilds" ADD COLUMN "lock_probe" integer;');

    // A session in a transaction that has read guilds: ALTER TABLE must wait for it to end.
    const holder = new pg.Client({ connectionString: database.url });
    await holder.connect();
    onTestFinished(() => holder.end());
    await holder.query('begin');
    await holder.query('select count(*) from guilds');

    const { error, ms } = await rejection(runMigrations(database.url, { migrationsFolder: folder, lockTimeoutMs: 400 }), 10_000);
    expect(error.message).toMatch(/MIGRATION_LOCK_TIMEOUT_MS/);
    expect(error.message).toMatch(/400 ms/);
    expect(ms).toBeLessThan(5_000);
    const column = "select 1 from information_schema.columns where table_name = 'guilds' and column_name = 'lock_probe'";
    expect((await holder.query(column)).rowCount).toBe(0);

    await holder.query('rollback');
    expect(await runMigrations(database.url, { migrationsFolder: folder, lockTimeoutMs: 400 })).toMatchObject({ applied: 1 });
    expect((await holder.query(column)).rowCount).toBe(1);
  });
});
