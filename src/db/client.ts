import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import { createHash } from 'node:crypto';
import { sql, type SQL } from 'drizzle-orm';
import type { AnyPgColumn, PgDialect, PgSession } from 'drizzle-orm/pg-core';
import pg from 'pg';
import * as schema from './schema.js';

export type Database = NodePgDatabase<typeof schema>;
/** What a transaction callback receives: the same query API as the database. */
export type Transaction = Parameters<Parameters<Database['transaction']>[0]>[0];
export type Executor = Database | Transaction;

export interface DatabaseHandle {
  readonly db: Database;
  readonly pool: pg.Pool;
  close(): Promise<void>;
}

export interface PoolOptions {
  /** @defaultValue 10 */
  readonly max?: number;
  /** @defaultValue 'music-bot' */
  readonly applicationName?: string;
  /** Postgres's `statement_timeout` on every connection of the pool. @defaultValue none */
  readonly statementTimeoutMs?: number;
  /** How long opening one connection may take, TCP to ready. @defaultValue none */
  readonly connectTimeoutMs?: number;
}

/**
 * pg's client whose `connect` gives up after `ms`. Given to the pool as its `Client`, so that the
 * pool's own `connectionTimeoutMillis`, which would also bound the wait for a free connection, stays unset.
 */
function clientConnectingWithin(ms: number): typeof pg.Client {
  return class extends pg.Client {
    constructor(config?: string | pg.ClientConfig) {
      super({ ...(typeof config === 'string' ? { connectionString: config } : config), connectionTimeoutMillis: ms });
    }
  };
}

/**
 * A pool on `url`. Its connections carry `applicationName` (default `music-bot`), so that an
 * operator finds the bot's connections, by role, in `pg_stat_activity`, and plan the named
 * statements (see {@link preparedOnce}) once: Postgres would otherwise go on planning one whose
 * generic plan it guesses dearer (the guild's read, 0.35 ms a command).
 *
 * Every statement with parameters is then planned without their values, unnamed ones too. A
 * partial index is used only when the statement names its predicate's constants: write those
 * with {@link constants}, never as parameters.
 *
 * `statementTimeoutMs` cancels any statement of the pool that runs longer (a path that needs
 * longer sets its own with `set local statement_timeout` in its transaction);
 * `connectTimeoutMs` bounds opening a connection, not waiting for a busy pool's free one.
 */
export function connectDatabase(url: string, options: PoolOptions = {}): DatabaseHandle {
  const settings = ['set plan_cache_mode = force_generic_plan'];
  if (options.statementTimeoutMs !== undefined) settings.push(`set statement_timeout = ${Math.trunc(options.statementTimeoutMs)}`);
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 10,
    application_name: options.applicationName ?? 'music-bot',
    ...(options.connectTimeoutMs !== undefined && { Client: clientConnectingWithin(options.connectTimeoutMs) }),
    // SETs before the connection's first use, not startup options, which poolers such as
    // PgBouncer refuse. Should one fail, plans are only made more often, or statements run unbounded.
    // (Typed as returning void, but pg-pool waits for the promise before handing the client out.)
    onConnect: async (client) => {
      for (const setting of settings) await client.query(setting).catch(() => {});
    },
  });
  // An idle client that loses its connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  // A checked-out client has no pool listener: one that Postgres disconnects between two
  // statements (a transaction's, when the server stops or restarts) would emit an unhandled
  // 'error' and crash the process. Its next statement fails instead, and the pool discards it.
  pool.on('connect', (client) => client.on('error', () => {}));
  const db = drizzle(pool, { schema });
  return {
    db,
    pool,
    close: () => pool.end(),
  };
}

/**
 * One connection of its own for the health checks' `select 1`: a pool whose connections are all
 * taken (a flood of webhooks) must not make a live Postgres look slow or down. It connects on
 * the first ping and again after a failure, and lets go of an idle connection after a minute.
 */
export function connectHealthProbe(
  url: string,
  applicationName = 'music-bot',
  options: Pick<PoolOptions, 'connectTimeoutMs'> = {},
): { ping(): Promise<void>; close(): Promise<void> } {
  const pool = new pg.Pool({
    connectionString: url,
    max: 1,
    idleTimeoutMillis: 60_000,
    application_name: `${applicationName} health`,
    ...(options.connectTimeoutMs !== undefined && { Client: clientConnectingWithin(options.connectTimeoutMs) }),
  });
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  return {
    ping: async () => {
      await pool.query('select 1');
    },
    close: () => pool.end(),
  };
}

/**
 * A statement built once per database by `build` (a drizzle query ending in `.prepare(name)`)
 * and run by name, so Postgres parses it once per connection and this process builds it once.
 */
export function preparedOnce<T>(build: (db: Database) => T): (db: Database) => T {
  const built = new WeakMap<Database, T>();
  return (db) => {
    let statement = built.get(db);
    if (!statement) built.set(db, (statement = build(db)));
    return statement;
  };
}

/**
 * `column in ('a', 'b')` with the values in the statement's text, not parameters: the form a
 * partial index's predicate can be matched by under generic plans (see {@link connectDatabase}).
 * For the code's own constants only (states, kinds), never for a caller's input.
 */
export function constants(column: AnyPgColumn, values: readonly string[]): SQL {
  if (values.length === 0 || values.some((value) => !/^[a-z_]+$/.test(value))) throw new Error(`not constants: ${values.join(', ')}`);
  return sql`${column} in (${sql.raw(values.map((value) => `'${value}'`).join(', '))})`;
}

/**
 * Runs `statement` on `executor` (the database or a transaction) as a named statement, named by
 * `prefix` and a digest of its text, so that Postgres parses and plans it once per connection.
 * For statements built afresh each time whose text does not depend on the values. Rows come raw.
 */
export async function executeNamed(executor: Executor, prefix: string, statement: SQL): Promise<{ rows: Array<Record<string, unknown>> }> {
  const { dialect, session } = executor as unknown as { dialect: PgDialect; session: PgSession };
  const query = dialect.sqlToQuery(statement);
  const name = `${prefix}_${createHash('sha1').update(query.sql).digest('hex').slice(0, 16)}`;
  return (await session.prepareQuery(query, undefined, name, false).execute()) as { rows: Array<Record<string, unknown>> };
}

/**
 * Runs `work` while the rows `lock` selects (a `select … for update`) stay locked, on one
 * connection held meanwhile: `begin` and the lock leave together, one round trip (a query of
 * two statements, which Postgres takes only without parameters: the lock's values are written
 * into its text, so it may hold only values the code checked, such as a row's id), then
 * `commit` once `work` resolves, `rollback` when it throws.
 */
export async function whileLocked<T>(db: Database, lock: SQL, work: (rows: ReadonlyArray<Record<string, unknown>>) => Promise<T>): Promise<T> {
  const { dialect, $client: pool } = db as unknown as { dialect: PgDialect; $client: pg.Pool };
  const text = dialect.sqlToQuery(lock.inlineParams()).sql;
  const client = await pool.connect();
  // Set once the transaction is over: a connection that may still be inside one is dropped.
  let settled = false;
  try {
    const results = (await client.query(`begin; ${text}`)) as unknown as pg.QueryResult[];
    let outcome: T;
    try {
      outcome = await work(results[1]!.rows);
    } catch (error) {
      await client.query('rollback');
      settled = true;
      throw error;
    }
    await client.query('commit');
    settled = true;
    return outcome;
  } finally {
    client.release(!settled);
  }
}
