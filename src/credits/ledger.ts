/**
 * The one place that changes `guilds.balance`. Every movement is a conditional update of the
 * balance and an append to the ledger, together, under the movement's unique key.
 */
import { and, eq, gte, sql } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
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
}

export type RefusalReason = 'unknown_guild' | 'frozen' | 'insufficient_credits';

export type MovementOutcome =
  | { readonly status: 'moved'; readonly entry: LedgerEntry }
  /** The key was already in the ledger: nothing moved; `entry` is the movement recorded then. */
  | { readonly status: 'replayed'; readonly entry: LedgerEntry }
  | { readonly status: 'refused'; readonly reason: RefusalReason; readonly balance: number };

const LEDGER_KEY_CONSTRAINT = 'credit_ledger_key_unique';

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
 * Moves credits once per key. The balance changes only through a single conditional UPDATE
 * (never below zero, never while frozen when so asked), so concurrent movements on one guild
 * serialise on its row and none can overdraw it. Two racing movements with the same key:
 * the loser's ledger insert hits the unique key, its savepoint rolls back its balance change,
 * and it reports the winner's entry as replayed.
 */
export async function moveCredits(executor: Executor, movement: Movement): Promise<MovementOutcome> {
  const existing = await findEntryByKey(executor, movement.key);
  if (existing) return { status: 'replayed', entry: existing };

  try {
    return await atomically(executor, async (tx): Promise<MovementOutcome> => {
      const [updated] = await tx
        .update(guilds)
        .set({
          balance: sql`${guilds.balance} + ${movement.amount}`,
          // Re-arm the low-balance alert as soon as the balance is back at or above its threshold.
          alertSentAt: sql`case when ${guilds.balance} + ${movement.amount} >= ${guilds.alertBelow} then null else ${guilds.alertSentAt} end`,
          updatedAt: sql`now()`,
        })
        .where(
          and(
            eq(guilds.id, movement.guildId),
            movement.amount < 0 ? gte(guilds.balance, -movement.amount) : undefined,
            movement.refuseWhenFrozen ? eq(guilds.frozen, false) : undefined,
          ),
        )
        .returning({ balance: guilds.balance });
      if (!updated) return refusal(tx, movement);

      const [entry] = await tx
        .insert(creditLedger)
        .values({
          guildId: movement.guildId,
          key: movement.key,
          kind: movement.kind,
          amount: movement.amount,
          balanceAfter: updated.balance,
          jobId: movement.jobId ?? null,
          userId: movement.userId ?? null,
          actorId: movement.actorId ?? null,
          reason: movement.reason ?? null,
        })
        .returning();
      if (!entry) throw new Error('ledger insert returned no row');
      return { status: 'moved', entry };
    });
  } catch (error) {
    if (!isUniqueViolation(error, LEDGER_KEY_CONSTRAINT)) throw error;
    const winner = await findEntryByKey(executor, movement.key);
    if (!winner) throw error;
    return { status: 'replayed', entry: winner };
  }
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

/** drizzle wraps driver errors (DrizzleQueryError), so the pg error may sit in `cause`. */
export function isUniqueViolation(error: unknown, constraint: string): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth += 1) {
    const candidate = current as Error & { code?: unknown; constraint?: unknown };
    if (candidate.code === '23505' && candidate.constraint === constraint) return true;
    current = candidate.cause;
  }
  return false;
}
