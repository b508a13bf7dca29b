import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const root = path.resolve(import.meta.dirname, '../../..');

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs an entry point (`src/….ts`) from the test folder, so no .env is read, with only PATH and
 * `env` set: compiled, from the suite's bundle of the build the image runs (MUSIC_BOT_BUILD_DIR,
 * made by the global setup), else as `npm run ...` does, through tsx (without npm's own notices
 * on stderr).
 */
export async function runCli(script: string, env: Record<string, string>): Promise<CliResult> {
  const build = process.env.MUSIC_BOT_BUILD_DIR;
  const [command, args] = build
    ? [process.execPath, [path.join(build, 'bundle', script.replace(/\.ts$/, '.js'))]]
    : [path.join(root, 'node_modules/.bin/tsx'), [path.join(root, script)]];
  try {
    const { stdout, stderr } = await run(command, args, {
      cwd: path.join(root, 'test'),
      env: { PATH: process.env.PATH ?? '', ...env },
      timeout: 90_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failure = error as { code: number; stdout: string; stderr: string };
    return { code: failure.code, stdout: failure.stdout, stderr: failure.stderr };
  }
}

/** Settings `npm start` needs before it gets as far as starting Postgres and Redis. */
export const BOT_ENV = {
  DISCORD_TOKEN: 'MTIzNDU2Nzg5MDEyMzQ1Njc4.GhIjKl.abcdefghijklmnopqrstuvwxyz0123',
  DISCORD_APPLICATION_ID: '123456789012345678',
  MUSIC_API_URL: 'https://api.example.com',
  MUSIC_API_KEY: 'k',
};
