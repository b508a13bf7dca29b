/**
 * Postgres ends every connection when it stops or restarts, also those checked out of the
 * pool in the middle of a transaction. The chaos suite's Postgres outage saw both
 * workers crash there, on an unhandled 'error' event of such a client. The transaction must
 * fail, the process go on, and the pool's next statement run on a new connection.
 */
import { sql } from 'drizzle-orm';
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { connectDatabase } from '../../../src/db/client.js';
import { createTestDatabase } from '../../support/database.js';

const test = await createTestDatabase();

describe('a connection that Postgres ends during a transaction', () => {
  it('fails the transaction, not the process, and the pool carries on', async () => {
    const handle = connectDatabase(test.url, { max: 2 });
    try {
      let checkedOut: pg.PoolClient | undefined;
      handle.pool.once('acquire', (client: pg.PoolClient) => (checkedOut = client));
      let backendPid: number | undefined;
      let goOn!: () => void;
      const paused = new Promise<void>((resolve) => (goOn = resolve));
      let inside!: () => void;
      const started = new Promise<void>((resolve) => (inside = resolve));
      const transaction = handle.db.transaction(async (tx) => {
        const { rows } = await tx.execute<{ pid: number }>(sql`select pg_backend_pid() as pid`);
        backendPid = rows[0]!.pid;
        inside();
        // Between two statements: no query is in flight when the server ends the connection.
        await paused;
        await tx.execute(sql`select 1`);
      });
      await started;
      expect(checkedOut).toBeDefined();
      // A plain listener: events.once would also listen for 'error', and so hide the crash this test is about.
      const ended = new Promise<void>((resolve) => checkedOut!.once('end', () => resolve()));
      // What a stopping server sends every backend: FATAL 57P01, "terminating connection due to administrator command".
      await test.pool.query('select pg_terminate_backend($1)', [backendPid]);
      // The client has read the termination and closed its socket (the crash came before this).
      await ended;
      goOn();
      await expect(transaction).rejects.toThrow();

      const { rows } = await handle.db.execute<{ pid: number }>(sql`select pg_backend_pid() as pid`);
      expect(rows[0]!.pid).not.toBe(backendPid);
    } finally {
      await handle.close();
    }
  });
});
