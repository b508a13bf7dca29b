import { and, eq, sql } from 'drizzle-orm';
import type { Database } from '../../src/db/client.js';
import { creditLedger, guilds, jobs } from '../../src/db/schema.js';

export async function ledgerOfJob(db: Database, jobId: string) {
  return db
    .select({ kind: creditLedger.kind, amount: creditLedger.amount, key: creditLedger.key })
    .from(creditLedger)
    .where(eq(creditLedger.jobId, jobId))
    .orderBy(creditLedger.id);
}

export async function balanceOf(db: Database, guildId: string): Promise<number> {
  const [row] = await db.select({ balance: guilds.balance }).from(guilds).where(eq(guilds.id, guildId));
  return row?.balance ?? Number.NaN;
}

/** The balance must always equal the sum of the guild's ledger. */
export async function ledgerSum(db: Database, guildId: string): Promise<number> {
  const [row] = await db
    .select({ sum: sql<number>`coalesce(sum(${creditLedger.amount}), 0)::int` })
    .from(creditLedger)
    .where(eq(creditLedger.guildId, guildId));
  return row?.sum ?? Number.NaN;
}

export async function jobRow(db: Database, jobId: string) {
  const [row] = await db.select().from(jobs).where(and(eq(jobs.id, jobId)));
  return row;
}
