/**
 * deploy/backup.sh when the dump fails: no file that looks like a backup, and no old backup
 * removed (the dump that works, with its pruning, runs in test/integration/db/restore.test.ts).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { findFreePort } from '../../../src/embedded/free-port.js';

const script = path.resolve(import.meta.dirname, '../../../deploy/backup.sh');

/** A folder of its own for one test, removed when the test ends. */
function tempFolder(prefix: string): string {
  const folder = mkdtempSync(path.join(os.tmpdir(), prefix));
  onTestFinished(() => rmSync(folder, { recursive: true, force: true }));
  return folder;
}

describe('deploy/backup.sh', () => {
  it('leaves no dump and prunes nothing when the database cannot be read', async () => {
    const folder = tempFolder('backup-fail-');
    const old = path.join(folder, 'musicbot-2000-01-01T000000Z.dump');
    writeFileSync(old, 'an old dump');
    utimesSync(old, new Date('2000-01-01'), new Date('2000-01-01'));
    const port = await findFreePort();
    const run = spawnSync('bash', [script, folder, '14'], {
      env: { PATH: `/usr/lib/postgresql/15/bin:${process.env.PATH ?? ''}`, DATABASE_URL: `postgres://nobody@127.0.0.1:${port}/none` },
      encoding: 'utf8',
    });
    expect(run.status).not.toBe(0);
    expect(readdirSync(folder)).toEqual([path.basename(old)]);
  });

  it('refuses days to keep that are not a number', () => {
    const run = spawnSync('bash', [script, tempFolder('backup-days-'), 'soon'], { encoding: 'utf8' });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('days to keep: a whole number');
  });
});
