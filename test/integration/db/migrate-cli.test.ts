import { execFile } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../../..');

describe('npm run db:migrate', () => {
  const dataDir = mkdtemp(path.join(os.tmpdir(), 'migrate-cli-'));
  afterAll(async () => rm(await dataDir, { recursive: true, force: true }));

  it('creates the schema in the embedded Postgres under DATA_DIR, and a second run changes nothing', async () => {
    const dir = await dataDir;
    await chmod(dir, 0o755);
    const env = { PATH: process.env.PATH ?? '', DATA_DIR: dir, LOG_LEVEL: 'warn' };
    const script = path.join(root, 'src/scripts/db-migrate.ts');
    const tsx = path.join(root, 'node_modules/.bin/tsx');
    const first = await run(tsx, [script], { cwd: path.join(root, 'test'), env, timeout: 90_000 });
    expect(first.stdout.trim()).toMatch(/^applied \d+ migration\(s\) and \d+ online step\(s\)$/);
    const second = await run(tsx, [script], { cwd: path.join(root, 'test'), env, timeout: 90_000 });
    expect(second.stdout.trim()).toBe('database schema is up to date');
  }, 120_000);
});
