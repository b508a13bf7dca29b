/**
 * The programs outside npm that `npm test` and `npm run playground` need: found, or named in
 * one line with the command that installs them, before anything else starts. A machine is
 * made to lack a program by a PATH of links to everything else.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bundledFfmpegDir, checkTools, onPath, pathWithBundledFfmpeg, ROOT } from '../src/index.js';

const folders: string[] = [];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

/** A folder for PATH holding node, sh (npm runs scripts with it) and every named program this machine has, except those left out. */
function pathWithout(...leftOut: string[]): string {
  const folder = mkdtempSync(path.join(os.tmpdir(), 'tools-test-'));
  folders.push(folder);
  symlinkSync(process.execPath, path.join(folder, 'node'));
  for (const name of ['sh', 'redis-server', 'chromium', 'caddy', 'ffmpeg']) {
    const found = onPath(name);
    if (found && !leftOut.includes(name)) symlinkSync(found, path.join(folder, name));
  }
  return folder;
}

/** npm itself, run by this Node. */
function npmCli(): string {
  const fromNpm = process.env.npm_execpath;
  if (fromNpm && /npm-cli\.js$/.test(fromNpm)) return fromNpm;
  const onThePath = onPath('npm');
  if (!onThePath) throw new Error('npm is not on the PATH');
  return realpathSync(onThePath);
}

/** `npm <args>` in the checkout with only `pathValue` for PATH; its exit code and output. */
async function npm(args: readonly string[], pathValue: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [npmCli(), ...args], {
    cwd: ROOT,
    // No update check: npm would ask the registry for its latest version (weekly, by the date).
    env: { PATH: pathValue, HOME: process.env.HOME ?? os.tmpdir(), npm_config_update_notifier: 'false' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => void (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stdout, stderr };
}

/** What the command itself wrote to stderr, without npm's own lines (its error report, notices of a newer npm). */
function ownLines(stderr: string): string[] {
  return stderr.split('\n').filter((line) => line.trim() !== '' && !/^npm (error|warn|notice)\b/.test(line));
}

describe('checkTools', () => {
  it('names what is missing and the command that installs it, in one line', () => {
    const check = checkTools('test', { PATH: pathWithout('redis-server', 'caddy') });
    expect(check.missing).toEqual(expect.arrayContaining(['redis-server', 'caddy']));
    expect(check.line).toMatch(/^npm test needs .*redis-server.* and caddy, which this machine lacks; install with: /);
    if (process.platform === 'linux' && existsSync('/usr/bin/apt-get')) {
      expect(check.line).toMatch(/apt-get update && (sudo )?apt-get install -y .*redis-server.*caddy/);
    }
    expect(check.line).not.toContain('\n');
  });

  it('asks the playground only for what it runs', () => {
    const lacking = checkTools('playground', { PATH: pathWithout('redis-server', 'caddy', 'chromium') });
    expect(lacking.missing).toEqual(['redis-server']);
    expect(lacking.line).toMatch(/^npm run playground needs redis-server, which this machine lacks; install with: .*redis/);
  });

  it('takes CHROMIUM_PATH for the browser', () => {
    const without = pathWithout('chromium');
    expect(checkTools('test', { PATH: without }).missing).toContain('chromium');
    expect(checkTools('test', { PATH: without, CHROMIUM_PATH: process.execPath }).missing).not.toContain('chromium');
  });

  it.runIf(bundledFfmpegDir() !== undefined)('finds npm’s ffmpeg where the system has none, after any system one', () => {
    const without = pathWithout('ffmpeg');
    expect(checkTools('playground', { PATH: without }).missing).not.toContain('ffmpeg');
    const extended = pathWithBundledFfmpeg(without);
    expect(extended.split(path.delimiter)).toEqual([without, bundledFfmpegDir()]);
    expect(onPath('ffmpeg', { PATH: extended })).toBe(path.join(bundledFfmpegDir()!, 'ffmpeg'));
    expect(pathWithBundledFfmpeg(extended)).toBe(extended);
  });
});

describe('npm test with a program missing', () => {
  it('stops before any test, with the one line', async () => {
    const result = await npm(['test'], pathWithout('caddy'));
    expect(result.code).not.toBe(0);
    expect(ownLines(result.stderr)).toEqual([expect.stringMatching(/^npm test needs caddy, which this machine lacks; install with: .*caddy/)]);
    // vitest never started.
    expect(result.stdout).not.toMatch(/RUN|passed|failed/);
  }, 30_000);
});

describe('npm run playground with a program missing', () => {
  it('stops before starting anything, with the one line', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'tools-test-data-'));
    folders.push(dataDir);
    const result = await npm(['run', 'playground', '--', '--data-dir', dataDir], pathWithout('redis-server'));
    expect(result.code).toBe(1);
    expect(ownLines(result.stderr)).toEqual([expect.stringMatching(/^npm run playground needs redis-server, which this machine lacks; install with: /)]);
    expect(result.stdout).not.toContain('Starting the playground');
  }, 30_000);
});
