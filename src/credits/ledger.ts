/**
 * The one place that changes `guilds.balance`. Every movement is a conditional update of the
 * balance and an append to the ledger, together, under the movement's unique key.
 */
import { eq, getTableColumns, sql } from 'drizzle-orm';
import { executeNamed, type Executor } from '../db/client.js';
import { insertFrom, rowShape, type RowFor } from '../db/insert-from.js';
import { creditLedger, guilds, type LedgerKind } from '../db/schema.js';

export type LedgerEntry = typeof creditLedger.$inferSelect;

export interface Movement {
  readonly guildId: string;
  readonly key: string;
  readonly kind: LedgerKind;
  /** Signed: negative spends. */
  readonly amount: number;
  readonly jobId?: string | null;
  readonly userId?: string | null;
  readonly actorId?: string | null;
  readonly reason?: string | null;
  /** Member spending stops while a guild is frozen; moderators' movements and refunds do not. */
  readonly refuseWhenFrozen?: boolean;
  /**
   * A row written by the same statement, and only when the movement is made: the job a
   * reservation pays for (see db/insert-from.ts). Given back as `alongside` (its `id`).
   */
  readonly alongside?: RowFor;
}

export type RefusalReason = 'unknown_guild' | 'frozen' | 'insufficient_credits';

export type MovementOutcome =
  | { readonly status: 'moved'; readonly entry: LedgerEntry; readonly alongside?: Record<string, unknown> }
  /** The key was already in the ledger: nothing moved; `entry` is the movement recorded then. */
  | { readonly status: 'replayed'; readonly entry: LedgerEntry }
  | { readonly status: 'refused'; readonly reason: RefusalReason; readonly balance: number };

/**
 * Runs `work` atomically: in a new transaction when given the database, in a savepoint when
 * given a caller's transaction, so a failure undoes only this step and the caller may go on.
 */
export function atomically<T>(executor: Executor, work: (tx: Executor) => Promise<T>): Promise<T> {
  return executor.transaction(work);
}

export async function findEntryByKey(executor: Executor, key: string): Promise<LedgerEntry | undefined> {
  const [entry] = await executor.select().from(creditLedger).where(eq(creditLedger.key, key));
  return entry;
}

export async function currentBalance(executor: Executor, guildId: string): Promise<number | null> {
  const [guild] = await executor.select({ balance: guilds.balance }).from(guilds).where(eq(guilds.id, guildId));
  return guild?.balance ?? null;
}

/**
 * Moves credits once per key, in one statement: lock the guild's row if the movement is
 * allowed (the balance covers a spend, the guild is not frozen when so asked), append the
 * ledger entry under its key, and change the balance by the same amount. Concurrent movements
 * on one guild take turns on the row lock, so none can overdraw it. Given the database, the
 * statement is its own transaction; given a caller's, it runs inside it (no savepoint needed).
 * A key already taken, even by a racing movement, changes nothing, raises no error and
 * reports the first entry as replayed. Why one statement: docs/decisions/first-answer-path.md
 */
export async function moveCredits(executor: Executor, movement: Movement): Promise<MovementOutcome> {
  const spend = movement.amount < 0 ? sql`and balance >= ${-movement.amount}::integer` : sql``;
  const notFrozen = movement.refuseWhenFrozen ? sql`and frozen = false` : sql``;
  const statement = sql`
    with locked as (
      select id, balance from guilds
      where id = ${movement.guildId} ${spend} ${notFrozen}
        and not exists (select 1 from credit_ledger where key = ${movement.key})
      -- Not FOR UPDATE: callers hold key-share locks on the guild (their rows that reference it,
      -- such as the job being paid for), which FOR UPDATE would wait on, and two would deadlock.
      for no key update
    ), entry as (
      insert into credit_ledger (guild_id, key, kind, amount, balance_after, job_id, user_id, actor_id, reason)
      select id, ${movement.key}::text, ${movement.kind}::text, ${movement.amount}::integer, balance + ${movement.amount}::integer,
        ${movement.jobId ?? null}::uuid, ${movement.userId ?? null}::text, ${movement.actorId ?? null}::text, ${movement.reason ?? null}::text
      from locked
      on conflict (key) do nothing
      returning *
    ), moved as (
      update guilds set
        balance = guilds.balance + entry.amount,
        -- Re-arm the low-balance alert as soon as the balance is back at or above its threshold.
        alert_sent_at = case when guilds.balance + entry.amount >= guilds.alert_below then null else guilds.alert_sent_at end,
        updated_at = now()
      from entry
      where guilds.id = entry.guild_id
      returning guilds.balance
    )${movement.alongside ? sql`, alongside as (${insertFrom([{ key: movement.key, row: movement.alongside }], 'entry')})` : sql``}
    -- Both balances come from the one locked row. Were they ever to differ, the failed cast
    -- aborts the statement, so nothing moves (a SQL statement has no other way to raise).
    select entry.*,
      case when (select balance from moved) is distinct from entry.balance_after
        then ('ledger entry and guild balance disagree: ' || entry.key)::integer end as disagreement
      ${movement.alongside ? sql`, (select to_jsonb(a) from alongside a) as alongside` : sql``}
    from entry`;
  const { rows } = movement.alongside ? await executeNamed(executor, 'move', statement) : await executor.execute<Record<string, unknown>>(statement);
  const [row] = rows;
  if (row) {
    const alongside = row.alongside as Record<string, unknown> | null | undefined;
    return { status: 'moved', entry: ledgerEntryFrom(row), ...(alongside && { alongside }) };
  }
  const existing = await findEntryByKey(executor, movement.key);
  if (existing) return { status: 'replayed', entry: existing };
  return refusal(executor, movement);
}

/** One spend of a group: see {@link spendTogether}. */
export type Spend = Omit<Movement, 'guildId' | 'refuseWhenFrozen'>;

/** What a group's statement moved, by key: each entry, and the row written beside it. */
export type MovedSpends = Map<string, { readonly entry: LedgerEntry; readonly alongside?: Record<string, unknown> }>;

/**
 * Several spends from one guild (not frozen) in one statement, in their order: the guild's row
 * is locked once for all of them. Each takes its amount if the balance left by the ones before
 * covers it; being spends, those that fit are the first ones, and the rest move nothing. A key
 * already in the ledger moves nothing either. Returns what moved, by key; a spend missing from
 * it is for the caller to make alone, which says why (refused, or replayed).
 *
 * Throws, moving nothing, when Postgres does (a key taken by a racing statement in between
 * makes the balances disagree, and the statement aborts as moveCredits' does).
 */
export async function spendTogether(
  executor: Executor,
  guildId: string,
  spends: readonly Spend[],
): Promise<MovedSpends> {
  for (const spend of spends) if (spend.amount >= 0) throw new Error(`spendTogether takes spends only: ${spend.key} moves ${spend.amount}`);
  const requests = sql.join(
    spends.map(
      (spend, ord) =>
        sql`(${ord}::integer, ${spend.key}::text, ${spend.kind}::text, ${spend.amount}::integer, ${spend.jobId ?? null}::uuid, ${spend.userId ?? null}::text, ${spend.actorId ?? null}::text, ${spend.reason ?? null}::text)`,
    ),
    sql`, `,
  );
  // The rows written beside the spends: one insert per shape (one, for a group of requests).
  const shapes = new Map<string, Array<{ key: string; row: RowFor }>>();
  for (const spend of spends) {
    if (!spend.alongside) continue;
    const shape = rowShape(spend.alongside);
    let rows = shapes.get(shape);
    if (!rows) shapes.set(shape, (rows = []));
    rows.push({ key: spend.key, row: spend.alongside });
  }
  const inserts = [...shapes.values()].map((rows, n) => ({ name: sql.raw(`alongside_${n}`), rows }));
  const alongside = inserts.map(({ name, rows }) => sql`, ${name} as (${insertFrom(rows, 'entry')})`);
  const alongsideColumn =
    inserts.length > 0
      ? sql`, (select coalesce(jsonb_agg(id), '[]'::jsonb) from (${sql.join(
          inserts.map(({ name }) => sql`select id from ${name}`),
          sql` union all `,
        )}) written) as alongside_ids`
      : sql``;
  const { rows } = await executor.execute<Record<string, unknown>>(sql`
    with request (ord, key, kind, amount, job_id, user_id, actor_id, reason) as (values ${requests}),
    locked as (
      select id, balance from guilds where id = ${guildId} and frozen = false
      for no key update
    ), running as (
      -- Spends only: the running balance falls, so those it covers are the first ones.
      select request.*, locked.id as guild_id, locked.balance + sum(request.amount) over (order by request.ord) as balance_after
      from request cross join locked
      where not exists (select 1 from credit_ledger where credit_ledger.key = request.key)
    ), entry as (
      insert into credit_ledger (guild_id, key, kind, amount, balance_after, job_id, user_id, actor_id, reason)
      select guild_id, key, kind, amount, balance_after, job_id, user_id, actor_id, reason from running
      where balance_after >= 0
      -- In order, so that the entries' ids follow their balances, as one at a time would.
      order by ord
      on conflict (key) do nothing
      returning *
    ), moved as (
      update guilds set
        balance = guilds.balance + total.amount,
        alert_sent_at = case when guilds.balance + total.amount >= guilds.alert_below then null else guilds.alert_sent_at end,
        updated_at = now()
      from (select sum(amount)::integer as amount from entry) total
      where guilds.id = ${guildId} and total.amount is not null
      returning guilds.balance
    )${sql.join(alongside, sql``)}
    -- The guild's new balance is the last entry's: a key skipped under a racing statement would
    -- leave the later entries' balances wrong, and the failed cast aborts the whole statement.
    -- (Cast from a column: from parameters alone, Postgres would fold it while planning.)
    select entry.*,
      case when (select balance from moved) is distinct from (select min(balance_after) from entry)
        then ('ledger entries and guild balance disagree: ' || entry.guild_id)::integer end as disagreement
      ${alongsideColumn}
    from entry`);
  const written = new Set(((rows[0]?.alongside_ids ?? []) as unknown[]).map((id) => String(id).toLowerCase()));
  const byKey = new Map(spends.map((spend) => [spend.key, spend]));
  const moved: MovedSpends = new Map();
  for (const row of rows) {
    const entry = ledgerEntryFrom(row);
    const id = byKey.get(entry.key)?.alongside?.values.id.toLowerCase();
    moved.set(entry.key, { entry, ...(id !== undefined && written.has(id) && { alongside: { id } }) });
  }
  return moved;
}

const LEDGER_COLUMNS = Object.entries(getTableColumns(creditLedger));

/** A raw `credit_ledger` row (snake_case, driver values) as the typed entry drizzle would return. */
function ledgerEntryFrom(row: Record<string, unknown>): LedgerEntry {
  const entry: Record<string, unknown> = {};
  for (const [property, column] of LEDGER_COLUMNS) {
    const value = row[column.name];
    entry[property] = value === null || value === undefined ? null : column.mapFromDriverValue(value);
  }
  return entry as LedgerEntry;
}

async function refusal(executor: Executor, movement: Movement): Promise<MovementOutcome> {
  const [guild] = await executor
    .select({ balance: guilds.balance, frozen: guilds.frozen })
    .from(guilds)
    .where(eq(guilds.id, movement.guildId));
  if (!guild) return { status: 'refused', reason: 'unknown_guild', balance: 0 };
  if (movement.refuseWhenFrozen && guild.frozen) return { status: 'refused', reason: 'frozen', balance: guild.balance };
  return { status: 'refused', reason: 'insufficient_credits', balance: guild.balance };
}
