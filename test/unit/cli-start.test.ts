import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');

const valid = {
  DISCORD_TOKEN: 'MTIzNDU2Nzg5MDEyMzQ1Njc4.GhIjKl.abcdefghijklmnopqrstuvwxyz0123',
  DISCORD_APPLICATION_ID: '123456789012345678',
  MUSIC_API_URL: 'https://api.example.com',
  MUSIC_API_KEY: 'k',
};

/** Runs `src/main.ts` as `npm start` does (`node --import tsx`), from a folder without a .env. */
async function start(env: Record<string, string>): Promise<{ code: number; stderr: string; stdout: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', path.join(root, 'src/main.ts')], {
      cwd: path.join(root, 'test'),
      env: { PATH: process.env.PATH ?? '', ...env },
      timeout: 30_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failure = error as { code: number; stdout: string; stderr: string };
    return { code: failure.code, stdout: failure.stdout, stderr: failure.stderr };
  }
}

describe('npm start with a bad configuration', () => {
  it('without DISCORD_TOKEN prints one line that names it and exits 1', async () => {
    const { DISCORD_TOKEN: _omitted, ...env } = valid;
    const result = await start(env);
    expect(result.code).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^DISCORD_TOKEN is not set/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  }, 40_000);

  it("with a PUBLIC_URL too long for the service's webhook_url limit says so in one line and exits 1", async () => {
    const result = await start({ ...valid, PUBLIC_URL: `https://bot.example.com/${'x'.repeat(1000)}` });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^PUBLIC_URL: expected at most 972 characters: .*1024/)]);
  }, 40_000);

  it('with a bad MUSIC_API_URL names it and exits 1', async () => {
    const result = await start({ ...valid, MUSIC_API_URL: 'ftp//nowhere' });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^MUSIC_API_URL: expected /)]);
  }, 40_000);
});

describe("npm start with the spec's model list", () => {
  it("says in one line that the spec's model names are placeholders when MUSIC_MODELS is unset and the service is not local", async () => {
    // Postgres and Redis refuse at once: start-up gets far enough to speak, then stops.
    const unreachable = { DATABASE_URL: 'postgres://127.0.0.1:1/none', REDIS_URL: 'redis://127.0.0.1:1' };
    const notices = (output: string) => output.split('\n').filter((line) => line.includes('MUSIC_MODELS is not set'));
    const unset = await start({ ...valid, ...unreachable });
    expect(unset.stdout).toContain('start-up failed');
    expect(notices(unset.stdout)).toEqual([expect.stringContaining("the spec's model names are offered (ModelA 3 Pro")]);
    const set = await start({ ...valid, ...unreachable, MUSIC_MODELS: 'FUZZ-2.0' });
    expect(set.stdout).toContain('start-up failed');
    expect(notices(set.stdout)).toEqual([]);
  }, 60_000);
});
