/**
 * Named (server-side prepared) statements for the statements every command runs (issue 12).
 *
 * Postgres parses and plans an unnamed statement each time it gets one; a named statement is
 * parsed once per connection, and each later use only binds and runs it. The name is derived
 * from the statement's text, so the same text always gets the same name and a statement whose
 * text changes gets a new one: only for statements of a few fixed shapes (the values travel as
 * parameters), never for text that grows with its input, since every name stays prepared on
 * every pooled connection.
 */
import { createHash } from 'node:crypto';
import type { SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import type { QueryResult } from 'pg';
import type { Executor } from './client.js';

const dialect = new PgDialect();
const names = new Map<string, string>();

function nameOf(text: string): string {
  let name = names.get(text);
  if (name === undefined) {
    name = `s_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
    names.set(text, name);
  }
  return name;
}

/** `executor.execute(query)` as a named statement: the same rows, in the caller's transaction if any. */
export async function executeNamed<T extends Record<string, unknown>>(executor: Executor, query: SQL): Promise<QueryResult<T>> {
  const built = dialect.sqlToQuery(query);
  const prepared = executor._.session.prepareQuery(built, undefined, nameOf(built.sql), false);
  return (await prepared.execute()) as QueryResult<T>;
}
