/**
 * Migrations only expand: while a release rolls out, the previous release's code runs against
 * the new schema, so a migration must not take away what that code reads or writes. Taking
 * something away (a contract step) comes a release after the code stopped using it, and its
 * migration says so with `-- contract: expands <tag of the earlier migration>`.
 *
 * A contract step here: DROP of a table, column, view, function, type, schema, extension,
 * trigger or default; DROP of a unique index or of a primary-key or unique constraint (the
 * ledger's "once" rests on them); any RENAME; SET NOT NULL and a column's new TYPE (the old
 * code may write what they refuse). Harmless, so allowed: DROP of a plain index, of
 * a check or foreign-key constraint, and DROP NOT NULL (each only lets more through).
 * docs/decisions/upgrades-and-restores.md gives the reasons.
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MIGRATIONS_FOLDER, ONLINE_CALL, ONLINE_STEP } from '../../../src/db/migrate.js';

const root = path.resolve(import.meta.dirname, '../../..');
const folder = path.join(root, 'migrations');

/**
 * Migrations that took something away before this check existed, by tag. None did: up to
 * 0006_account_checks every migration only adds.
 */
const GRANDFATHERED: readonly string[] = [];

export interface Migration {
  readonly tag: string;
  readonly sql: string;
}

/** The statements' text without comments, string literals and dollar-quoted bodies, upper-cased. */
function codeOf(sql: string): string {
  return sql
    .replace(/\$([A-Za-z_]*)\$[\s\S]*?\$\1\$/g, ' ')
    .replace(/--[^\n]*/g, ' ')
    .replace(/\/\*[\s\S]*?\*\//g, ' ')
    .replace(/'(?:[^']|'')*'/g, "''")
    .toUpperCase();
}

const IDENT = String.raw`(?:"(?:[^"]|"")+"|[A-Z_][A-Z0-9_$]*)`;
const NAME = String.raw`((?:${IDENT}\.)?${IDENT})`;
const unquote = (name: string) => name.split('.').at(-1)!.replace(/^"|"$/g, '').toLowerCase();

/** Names of the unique indexes and of the primary-key and unique constraints the migrations create. */
function uniqueNamesIn(code: string): Set<string> {
  const names = new Set<string>();
  for (const match of code.matchAll(new RegExp(String.raw`CREATE\s+UNIQUE\s+INDEX\s+(?:CONCURRENTLY\s+)?(?:IF\s+NOT\s+EXISTS\s+)?${NAME}`, 'g'))) {
    names.add(unquote(match[1]!));
  }
  for (const match of code.matchAll(new RegExp(String.raw`CONSTRAINT\s+${NAME}\s+(?:PRIMARY\s+KEY|UNIQUE)`, 'g'))) names.add(unquote(match[1]!));
  return names;
}

/**
 * The contract steps of one migration, as short descriptions ("DROP COLUMN", "RENAME"); empty
 * when it only expands. `unique` names the unique indexes and constraints made before it.
 */
export function contractStepsOf(sql: string, unique: ReadonlySet<string> = new Set()): string[] {
  const code = codeOf(sql);
  const steps: string[] = [];
  if (/\bRENAME\b/.test(code)) steps.push('RENAME');
  if (/\bSET\s+NOT\s+NULL\b/.test(code)) steps.push('SET NOT NULL');
  if (/\bALTER\s+(?:COLUMN\s+)?\S+\s+(?:SET\s+DATA\s+)?TYPE\b/.test(code)) steps.push('ALTER COLUMN TYPE');
  for (const match of code.matchAll(/\bDROP\s+(?:(NOT\s+NULL)|(CONSTRAINT|INDEX)(?:\s+CONCURRENTLY)?(?:\s+IF\s+EXISTS)?\s+([^\s,;]+)|([^\s,;()]+))/g)) {
    const [, notNull, kind, name, other] = match;
    if (notNull) continue;
    if (kind) {
      if (unique.has(unquote(name!))) steps.push(`DROP ${kind} of the unique ${unquote(name!)}`);
      continue;
    }
    // `ALTER TABLE t DROP c` drops a column: COLUMN is optional.
    const what = ['TABLE', 'COLUMN', 'VIEW', 'MATERIALIZED', 'FUNCTION', 'PROCEDURE', 'TYPE', 'SCHEMA', 'EXTENSION', 'TRIGGER', 'DEFAULT', 'SEQUENCE'].includes(other!)
      ? other!
      : 'COLUMN';
    steps.push(`DROP ${what}`);
  }
  return steps;
}

/** What `-- contract: expands <tag>` names, if the migration carries the marker. */
export function expandedTagOf(sql: string): string | undefined {
  return /^--\s*contract:\s*expands\s+(\S+)/m.exec(sql)?.[1];
}

/**
 * The problems of a list of migrations in journal order: a contract step without the marker,
 * or with a marker that names no earlier migration. Empty when all is well.
 */
export function expandOnlyProblems(migrations: readonly Migration[], grandfathered: readonly string[] = GRANDFATHERED): string[] {
  const problems: string[] = [];
  const unique = new Set<string>();
  migrations.forEach((migration, index) => {
    const steps = contractStepsOf(migration.sql, unique);
    for (const name of uniqueNamesIn(codeOf(migration.sql))) unique.add(name);
    if (steps.length === 0 || grandfathered.includes(migration.tag)) return;
    const expands = expandedTagOf(migration.sql);
    const earlier = migrations.slice(0, index).map((m) => m.tag);
    if (expands === undefined) {
      problems.push(`${migration.tag}: ${steps.join(', ')} without "-- contract: expands <earlier migration>"`);
    } else if (!earlier.includes(expands)) {
      problems.push(`${migration.tag}: marked as the contract step of ${expands}, which is not an earlier migration`);
    }
  });
  return problems;
}

function committedMigrations(): Migration[] {
  const journal = JSON.parse(readFileSync(path.join(folder, 'meta/_journal.json'), 'utf8')) as { entries: Array<{ tag: string }> };
  return journal.entries.map(({ tag }) => ({ tag, sql: readFileSync(path.join(folder, `${tag}.sql`), 'utf8') }));
}

describe('committed migrations', () => {
  it('only expand, or are marked as the contract step of an earlier one', () => {
    expect(expandOnlyProblems(committedMigrations())).toEqual([]);
  });

  it('are all in the journal, so that none escapes the check', () => {
    const files = readdirSync(folder).filter((name) => name.endsWith('.sql')).map((name) => name.replace(/\.sql$/, ''));
    expect(files.sort()).toEqual(committedMigrations().map((m) => m.tag).sort());
  });

  it('grandfather only migrations that exist', () => {
    const tags = committedMigrations().map((m) => m.tag);
    for (const tag of GRANDFATHERED) expect(tags).toContain(tag);
  });
});

describe('the expand-only rule', () => {
  const init: Migration = {
    tag: '0000_init',
    sql: 'CREATE TABLE "jobs" ("id" uuid PRIMARY KEY, "state" text);\n--> statement-breakpoint\nCREATE UNIQUE INDEX "jobs_key_unique" ON "jobs" ("id");--> statement-breakpoint\nCREATE INDEX "jobs_state_idx" ON "jobs" ("state");',
  };
  const problemsOf = (sql: string, tag = '0001_next') => expandOnlyProblems([init, { tag, sql }], []);

  it.each([
    ['a dropped column', 'ALTER TABLE "jobs" DROP COLUMN "state";', 'DROP COLUMN'],
    ['a dropped column without the COLUMN keyword', 'ALTER TABLE jobs DROP state;', 'DROP COLUMN'],
    ['a dropped table', 'DROP TABLE "jobs";', 'DROP TABLE'],
    ['a renamed column', 'ALTER TABLE "jobs" RENAME COLUMN "state" TO "status";', 'RENAME'],
    ['a renamed table', 'ALTER TABLE "jobs" RENAME TO "tasks";', 'RENAME'],
    ['a dropped function', 'DROP FUNCTION claim_submission(uuid, text[], text, integer);', 'DROP FUNCTION'],
    ['a dropped default', 'ALTER TABLE "jobs" ALTER COLUMN "state" DROP DEFAULT;', 'DROP DEFAULT'],
    ['a dropped unique index', 'DROP INDEX "jobs_key_unique";', 'DROP INDEX of the unique jobs_key_unique'],
    ['a column made NOT NULL', 'ALTER TABLE "jobs" ALTER COLUMN "state" SET NOT NULL;', 'SET NOT NULL'],
    ['a column of a new type', 'ALTER TABLE "jobs" ALTER COLUMN "state" SET DATA TYPE integer USING 0;', 'ALTER COLUMN TYPE'],
  ])('fails on %s', (_what, sql, step) => {
    expect(problemsOf(sql)).toEqual([`0001_next: ${step} without "-- contract: expands <earlier migration>"`]);
  });

  it.each([
    ['a new column', 'ALTER TABLE "jobs" ADD COLUMN "locale" text;'],
    ['a new NOT NULL column with a default', 'ALTER TABLE "jobs" ADD COLUMN "tries" integer DEFAULT 0 NOT NULL;'],
    ['a dropped plain index', 'DROP INDEX "jobs_state_idx";'],
    ['a dropped check constraint', 'ALTER TABLE "jobs" DROP CONSTRAINT "jobs_cost_non_negative";'],
    ['a dropped NOT NULL', 'ALTER TABLE "jobs" ALTER COLUMN "state" DROP NOT NULL;'],
    ['the words in a comment, a string or a function body', "-- drop table jobs\nCOMMENT ON TABLE jobs IS 'rename me';\nCREATE FUNCTION f() RETURNS void LANGUAGE plpgsql AS $$ BEGIN DROP TABLE x; END $$;"],
  ])('lets through %s', (_what, sql) => {
    expect(problemsOf(sql)).toEqual([]);
  });

  it('lets a contract step through when it names the earlier migration it contracts', () => {
    expect(problemsOf('-- contract: expands 0000_init\nALTER TABLE "jobs" DROP COLUMN "state";')).toEqual([]);
  });

  it('fails on a marker that names no earlier migration', () => {
    expect(problemsOf('-- contract: expands 0007_later\nALTER TABLE "jobs" DROP COLUMN "state";')).toEqual([
      '0001_next: marked as the contract step of 0007_later, which is not an earlier migration',
    ]);
  });

  it('lets a grandfathered migration through', () => {
    expect(expandOnlyProblems([init, { tag: '0001_next', sql: 'DROP TABLE "jobs";' }], ['0001_next'])).toEqual([]);
  });
});

describe('online steps (migrations/online)', () => {
  it('each hold one concurrent index build named after nothing else in the migrations, or one call of a procedure a migration makes', () => {
    const folder = path.join(MIGRATIONS_FOLDER, 'online');
    const files = readdirSync(folder).filter((name) => name.endsWith('.sql'));
    expect(files.length).toBeGreaterThan(0);
    const migrations = readdirSync(MIGRATIONS_FOLDER).filter((name) => name.endsWith('.sql')).map((name) => readFileSync(path.join(MIGRATIONS_FOLDER, name), 'utf8')).join('\n');
    for (const file of files) {
      const statement = readFileSync(path.join(folder, file), 'utf8').replace(/^\s*--.*$/gm, '').trim();
      const index = ONLINE_STEP.exec(statement)?.[1];
      const procedure = ONLINE_CALL.exec(statement)?.[1];
      expect(index ?? procedure, file).toBeDefined();
      if (index !== undefined) expect(migrations, `${file}: its index is built by a migration too`).not.toContain(`"${index}"`);
      if (procedure !== undefined) expect(migrations, `${file}: no migration makes ${procedure}`).toMatch(new RegExp(String.raw`CREATE\s+(?:OR\s+REPLACE\s+)?PROCEDURE\s+"?${procedure}"?\s*\(`, 'i'));
    }
    // The usage summaries count from the ledger until their fill's step is recorded, by its file name.
    expect(migrations).toContain("WHERE name = '0006_credit_usage_backfill.sql'");
    expect(readFileSync(path.join(folder, '0006_credit_usage_backfill.sql'), 'utf8')).toMatch(/^CALL credit_usage_backfill\(\);$/m);
    expect(ONLINE_CALL.test('CALL credit_usage_backfill(1);'), 'with arguments').toBe(false);
    expect(ONLINE_STEP.test('CREATE INDEX "x" ON "jobs" ("id");'), 'without CONCURRENTLY').toBe(false);
    expect(ONLINE_STEP.test('CREATE INDEX CONCURRENTLY IF NOT EXISTS "x" ON "jobs" ("id"); DROP TABLE "jobs";'), 'two statements').toBe(false);
  });
});
