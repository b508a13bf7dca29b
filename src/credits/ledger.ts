/**
 * The one place that changes `guilds.balance`. Every movement is a conditional update of the
 * balance and an append to the ledger, together, under the movement's unique key.
 */
import { eq, getTableColumns, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { executeNamed } from '../db/named.js';
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
   * A write made by the same statement, and only when the movement is made: the job a
   * reservation pays for. It reads the new ledger row from the CTE `entry` (see
   * db/insert-from.ts) and returns one row, given back as `alongside`.
   */
  readonly alongside?: SQL;
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
 * ledger entry under its key, and change the balance by the same amount. The row lock makes
 * concurrent movements on one guild take turns, so none can overdraw it; the entry's
 * `balance_after` and the new balance are computed from the same locked row.
 *
 * One statement, because the guild's row stays locked until the transaction ends: every round
 * trip after the lock is time the guild's other requests wait (issue 12: a movement used to
 * hold it over three, and a savepoint). Given the database, the statement is its own
 * transaction; given a caller's, it runs inside it and needs no savepoint, since it cannot
 * fail half-done. Two racing movements with the same key: the second's insert waits for the
 * first, then finds the key taken (`on conflict do nothing`), so it changes nothing, raises no
 * error (the caller's transaction goes on) and reports the first's entry as replayed.
 */
export async function moveCredits(executor: Executor, movement: Movement): Promise<MovementOutcome> {
  const spend = movement.amount < 0 ? sql`and balance >= ${-movement.amount}::integer` : sql``;
  const notFrozen = movement.refuseWhenFrozen ? sql`and frozen = false` : sql``;
  const { rows } = await executeNamed<Record<string, unknown>>(executor, sql`
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
    )${movement.alongside ? sql`, alongside as (${movement.alongside})` : sql``}
    -- Both balances come from the one locked row. Were they ever to differ, the failed cast
    -- aborts the statement, so nothing moves (a SQL statement has no other way to raise).
    select entry.*,
      case when (select balance from moved) is distinct from entry.balance_after
        then ('ledger entry and guild balance disagree: ' || entry.key)::integer end as disagreement
      ${movement.alongside ? sql`, (select to_jsonb(a) from alongside a) as alongside` : sql``}
    from entry`);
  const [row] = rows;
  if (row) {
    const alongside = row.alongside as Record<string, unknown> | null | undefined;
    return { status: 'moved', entry: ledgerEntryFrom(row), ...(alongside && { alongside }) };
  }
  const existing = await findEntryByKey(executor, movement.key);
  if (existing) return { status: 'replayed', entry: existing };
  return refusal(executor, movement);
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
