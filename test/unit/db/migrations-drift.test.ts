import { execFile } from 'node:child_process';
import { cp, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../../..');

describe('committed migrations', () => {
  const temp = mkdtemp(path.join(os.tmpdir(), 'drift-'));
  afterAll(async () => rm(await temp, { recursive: true, force: true }));

  it('match src/db/schema.ts: drizzle-kit generates nothing new from them', async () => {
    const dir = await temp;
    await cp(path.join(root, 'migrations'), path.join(dir, 'migrations'), { recursive: true });
    const config = path.join(dir, 'drizzle.config.ts');
    await writeFile(
      config,
      // drizzle-kit resolves paths relative to the folder it runs in.
      `export default { dialect: 'postgresql', schema: ${JSON.stringify(path.relative(dir, path.join(root, 'src/db/schema.ts')))}, out: './migrations' };\n`,
    );
    const before = await readdir(path.join(dir, 'migrations'));
    const { stdout, stderr } = await run(path.join(root, 'node_modules/.bin/drizzle-kit'), ['generate', `--config=${config}`], {
      cwd: dir,
    });
    const after = await readdir(path.join(dir, 'migrations'));
    expect(after).toEqual(before);
    expect(stdout + stderr).toMatch(/No schema changes/);
  }, 60_000);
});
