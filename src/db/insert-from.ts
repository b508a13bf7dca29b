/**
 * Rows written by the same statement as the CTE they depend on, only for the rows it yields (the
 * job a reservation pays for). Values go through each column's mapping and are cast to its type,
 * since a SELECT or VALUES list gives a parameter no type of its own.
 */
import { getTableColumns, getTableName, sql, type SQL } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';

/** A row to write beside another: its table, with an `id` column, and its values, `id` among them. */
export interface RowFor<T extends PgTable = PgTable> {
  readonly table: T;
  readonly values: T['$inferInsert'] & { readonly id: string };
}

/** The columns a row sets (a null is set too: the statement's text then depends only on which). */
function columnsOf(row: RowFor): Array<[property: string, column: PgColumn]> {
  return Object.entries(getTableColumns(row.table)).filter(([property]) => (row.values as Record<string, unknown>)[property] !== undefined);
}

function typedValue(column: PgColumn, value: unknown): SQL {
  return sql`${value === null ? null : column.mapToDriverValue(value)}::${sql.raw(column.getSQLType())}`;
}

/** What makes rows fit in one statement: their table and the columns they set. */
export function rowShape(row: RowFor): string {
  return `${getTableName(row.table)}(${columnsOf(row)
    .map(([property]) => property)
    .join(',')})`;
}

/**
 * One insert for rows of one shape (see {@link rowShape}), each written only if `source` yields
 * a row whose `key` is the row's: `insert … select … from (values …) join <source> on key …
 * returning id`: one statement for any number of rows. Why: docs/decisions/first-answer-path.md
 */
export function insertFrom(rows: ReadonlyArray<{ readonly key: string; readonly row: RowFor }>, source: string): SQL {
  const [first] = rows;
  if (!first) throw new Error('insertFrom needs a row');
  const shape = rowShape(first.row);
  for (const { row } of rows) if (rowShape(row) !== shape) throw new Error(`rows of different shapes in one insert: ${shape}, ${rowShape(row)}`);
  const columns = columnsOf(first.row);
  const names = columns.map(([, column]) => sql.identifier(column.name));
  const tuples = rows.map(
    ({ key, row }) =>
      sql`(${key}::text, ${sql.join(
        columns.map(([property, column]) => typedValue(column, (row.values as Record<string, unknown>)[property])),
        sql`, `,
      )})`,
  );
  return sql`insert into ${sql.identifier(getTableName(first.row.table))} (${sql.join(names, sql`, `)})
    select ${sql.join(
      names.map((name) => sql`given.${name}`),
      sql`, `,
    )}
    from (values ${sql.join(tuples, sql`, `)}) as given (source_key, ${sql.join(names, sql`, `)})
    join ${sql.identifier(source)} on ${sql.identifier(source)}.key = given.source_key
    returning id`;
}
