import { and, eq, sql } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { creditLedger, guilds } from '../db/schema.js';

export interface LedgerMismatch {
  readonly guildId: string;
  readonly balance: number;
  /** What the balance should be: the sum of the guild's ledger. */
  readonly ledgerSum: number;
}

/**
 * The invariant: every guild's balance is the sum of its ledger. Returns the guilds where it
 * does not hold (empty when all is well), for tests and the operator's check.
 */
export async function verifyLedger(executor: Executor, guildId?: string): Promise<LedgerMismatch[]> {
  const sums = executor
    .select({
      guildId: creditLedger.guildId,
      total: sql<string>`sum(${creditLedger.amount})`.as('total'),
    })
    .from(creditLedger)
    .groupBy(creditLedger.guildId)
    .as('sums');
  const ledgerSum = sql<number>`coalesce(${sums.total}, 0)`.mapWith(Number);
  return executor
    .select({ guildId: guilds.id, balance: guilds.balance, ledgerSum })
    .from(guilds)
    .leftJoin(sums, eq(sums.guildId, guilds.id))
    .where(and(sql`${guilds.balance} <> ${ledgerSum}`, guildId !== undefined ? eq(guilds.id, guildId) : undefined))
    .orderBy(guilds.id);
}
