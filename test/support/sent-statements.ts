/**
 * What a pool's clients are sent, statement by statement, for the tests and benchmarks that read
 * what a path sends (its plans, its count). Only the pool given is observed.
 */
import type pg from 'pg';

export interface SentStatement {
  readonly text: string;
  /** However pg was given them: `(text, values)`, or a config with or without its own. */
  readonly values: readonly unknown[];
}

/** Calls `observe` with each statement, before it goes out, on every client `pool` connects from now on. */
export function observeStatements(pool: pg.Pool, observe: (statement: SentStatement) => void): void {
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      const [first, second] = args;
      const config = typeof first === 'object' && first !== null ? (first as { text: string; values?: unknown[] }) : undefined;
      observe({ text: config ? config.text : String(first), values: config?.values ?? (Array.isArray(second) ? second : []) });
      return query(...args);
    };
  });
}
