/**
 * Run as root, Postgres runs as the `postgres` user. These tests put DATA_DIR in 0700 folders
 * like a checkout in /root and check that `npm run db:migrate` still works, says where the
 * data went, and finds it again on the next run.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { locationNoteFor, relocatedClusterDir } from '../../../src/embedded/embedded-postgres.js';
import { runCli } from './cli.js';

const asRoot = process.getuid?.() === 0;
const MOVED = 'embedded postgres data kept outside the data folder';
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempFolder(mode: number): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'pg-root-'));
  await chmod(dir, mode);
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

describe('npm run db:migrate as root', () => {
  it.skipIf(!asRoot)('keeps the cluster under /var/lib/music-bot when the postgres user cannot enter DATA_DIR, says so once, and finds it again', async () => {
    const home = await tempFolder(0o700);
    const dataDir = path.join(home, 'data');
    await mkdir(dataDir, { mode: 0o700 });
    const requested = path.join(dataDir, 'postgres');
    const relocated = relocatedClusterDir(requested);
    cleanups.push(() => rm(relocated, { recursive: true, force: true }));
    const env = { DATA_DIR: dataDir, LOG_LEVEL: 'info' };

    const first = await runCli('src/scripts/db-migrate.ts', env);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const lines = first.stdout.trim().split('\n');
    const notices = lines.filter((line) => line.includes(MOVED));
    expect(notices).toHaveLength(1);
    expect(JSON.parse(notices[0]!)).toMatchObject({ dataDir: relocated, requested, reason: `the postgres user cannot enter ${home}` });
    expect(lines.at(-1)).toMatch(/^applied \d+ migration\(s\) and \d+ online step\(s\)$/);

    const postgresUid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    expect((await stat(relocated)).uid).toBe(postgresUid);
    expect(existsSync(path.join(relocated, 'PG_VERSION'))).toBe(true);
    expect(existsSync(requested)).toBe(false);
    expect(await readFile(locationNoteFor(requested), 'utf8')).toContain(relocated);

    const second = await runCli('src/scripts/db-migrate.ts', env);
    expect(second.code).toBe(0);
    expect(second.stdout.trim().split('\n').filter((line) => line.includes(MOVED))).toHaveLength(1);
    expect(second.stdout.trim().split('\n').at(-1)).toBe('database schema is up to date');

    // Opening the folder later does not swap the data for an empty cluster in DATA_DIR.
    await chmod(home, 0o755);
    const third = await runCli('src/scripts/db-migrate.ts', env);
    expect(third.code).toBe(0);
    expect(third.stdout).toContain(MOVED);
    expect(third.stdout.trim().split('\n').at(-1)).toBe('database schema is up to date');
    expect(existsSync(requested)).toBe(false);
  }, 120_000);

  it.skipIf(!asRoot)('leaves the cluster in DATA_DIR when the postgres user can enter it', async () => {
    const dataDir = path.join(await tempFolder(0o755), 'data');
    const result = await runCli('src/scripts/db-migrate.ts', { DATA_DIR: dataDir, LOG_LEVEL: 'info' });
    expect(result.code).toBe(0);
    expect(result.stdout).not.toContain(MOVED);
    expect(existsSync(path.join(dataDir, 'postgres', 'PG_VERSION'))).toBe(true);
    expect(existsSync(locationNoteFor(path.join(dataDir, 'postgres')))).toBe(false);
  }, 120_000);
});
