/**
 * Gives the integration and end-to-end tests a throwaway Postgres and Redis, unless
 * TEST_DATABASE_URL / TEST_REDIS_URL point at running ones. The schema is migrated once
 * into a template database; each test file clones it (see ./database.ts). Both projects name
 * this setup; one run starts the services once and stops them after the last project.
 */
import { randomUUID } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { runMigrations } from '../../src/db/migrate.js';
import { startEmbeddedPostgres } from '../../src/embedded/embedded-postgres.js';
import { startRedisServer } from '../../src/embedded/redis-server.js';
import { compiledBot } from './bot-build.js';

export const TEMPLATE_DATABASE = 'musicbot_test_template';

declare module 'vitest' {
  export interface ProvidedContext {
    postgresAdminUrl: string;
    templateDatabase: string;
    redisUrl: string;
    /** What the names of this run's kept databases start with (see createTestDatabase's `keep`); the teardown drops them. */
    keptDatabasePrefix: string;
  }
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

interface Services {
  readonly postgresAdminUrl: string;
  readonly redisUrl: string;
  readonly keptDatabasePrefix: string;
  readonly teardown: () => Promise<void>;
}

/** Shared by the projects' setups, which vitest may load as separate module instances. */
const SHARED = Symbol.for('music-bot.test-services');
type Shared = { services: Promise<Services>; users: number };
const shared = globalThis as typeof globalThis & { [SHARED]?: Shared };

export default async function setup(project: TestProject) {
  const running = (shared[SHARED] ??= { services: startServices(), users: 0 });
  running.users += 1;
  const services = await running.services;
  project.provide('postgresAdminUrl', services.postgresAdminUrl);
  project.provide('templateDatabase', TEMPLATE_DATABASE);
  project.provide('redisUrl', services.redisUrl);
  project.provide('keptDatabasePrefix', services.keptDatabasePrefix);
  return async () => {
    running.users -= 1;
    if (running.users > 0) return;
    delete shared[SHARED];
    await services.teardown();
  };
}

async function startServices(): Promise<Services> {
  const stops: Array<() => Promise<void>> = [];
  const keptDatabasePrefix = `test_run_${randomUUID().replaceAll('-', '').slice(0, 12)}_`;
  const tempDir = await mkdtemp(path.join(os.tmpdir(), 'musicbot-test-'));
  // Run as root, Postgres runs as the `postgres` user. Let it in, so the cluster stays in here and
  // goes with the teardown instead of being kept under /var/lib/music-bot (see postgres-as-root.ts).
  await chmod(tempDir, 0o755);
  const teardown = async () => {
    for (const stop of stops.reverse()) await stop().catch(() => {});
    await rm(tempDir, { recursive: true, force: true });
  };

  try {
    // Compiled while Postgres and Redis start; the bot processes the tests start run from it
    // (the test world's BotProcess reads MUSIC_BOT_BUILD_DIR), as the image runs the bot.
    const build = compiledBot();
    build.catch(() => {});
    let adminUrl = process.env.TEST_DATABASE_URL;
    if (!adminUrl) {
      // Test files run side by side, each with its own app, workers and bot processes.
      // Thrown away after the run: no test needs it to survive a crash, so commits skip the disk
      // flush (the chaos suite's and the restore test's servers are their own, with the defaults).
      const postgres = await startEmbeddedPostgres({
        dataDir: path.join(tempDir, 'postgres'),
        database: 'postgres',
        maxConnections: 500,
        settings: { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off' },
      });
      stops.push(() => postgres.stop());
      adminUrl = postgres.adminUrl;
    } else {
      // A server of the caller's outlives the run: the databases kept for shared worlds go here.
      const serverUrl = adminUrl;
      stops.push(() => dropKeptDatabases(serverUrl, keptDatabasePrefix));
    }

    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    try {
      await admin.query(`drop database if exists ${TEMPLATE_DATABASE} with (force)`);
      await admin.query(`create database ${TEMPLATE_DATABASE}`);
    } finally {
      await admin.end();
    }
    await runMigrations(withDatabase(adminUrl, TEMPLATE_DATABASE));

    let redisUrl = process.env.TEST_REDIS_URL;
    if (!redisUrl) {
      const redis = await startRedisServer({ dataDir: path.join(tempDir, 'redis'), persistent: false });
      stops.push(() => redis.stop());
      redisUrl = redis.url;
    }

    process.env.MUSIC_BOT_BUILD_DIR = await build;
    return { postgresAdminUrl: adminUrl, redisUrl, keptDatabasePrefix, teardown };
  } catch (error) {
    await teardown();
    throw error;
  }
}

/** Drops the databases this run kept for its shared worlds (their workers are gone by now). */
async function dropKeptDatabases(adminUrl: string, prefix: string): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ datname: string }>('select datname from pg_database where starts_with(datname, $1)', [prefix]);
    for (const { datname } of rows) await admin.query(`drop database if exists ${datname} with (force)`);
  } finally {
    await admin.end();
  }
}
