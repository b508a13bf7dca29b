/**
 * `insert into <table> (…) select … from <source> returning …`: a row written by the same
 * statement as the CTE it depends on, and only when that CTE yields a row (the job a
 * reservation pays for, see credits/ledger.ts). Values go through each column's own mapping
 * and are cast to the column's type, since a SELECT list gives a parameter no type of its own.
 */
import { getTableColumns, getTableName, sql, type SQL } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';

export function insertFrom<T extends PgTable>(table: T, values: T['$inferInsert'], source: string, returning: SQL): SQL {
  const names: SQL[] = [];
  const selected: SQL[] = [];
  for (const [property, column] of Object.entries(getTableColumns(table))) {
    const value: unknown = (values as Record<string, unknown>)[property];
    if (value === undefined) continue;
    const type = sql.raw(column.getSQLType());
    names.push(sql`${sql.identifier(column.name)}`);
    // A null is a parameter too: the statement's text then depends only on which columns are set.
    selected.push(sql`${value === null ? null : column.mapToDriverValue(value)}::${type}`);
  }
  return sql`insert into ${sql.identifier(getTableName(table))} (${sql.join(names, sql`, `)})
    select ${sql.join(selected, sql`, `)} from ${sql.identifier(source)}
    returning ${returning}`;
}
