/** Helpers for the credits integration tests: ids of their own, and what the ledger holds. */
import { randomUUID } from 'node:crypto';
import { asc, eq, sql } from 'drizzle-orm';
import { expect } from 'vitest';
import { ensureGuild, verifyLedger, type LedgerEntry } from '../../../src/credits/index.js';
import type { Executor } from '../../../src/db/client.js';
import { creditLedger, guilds } from '../../../src/db/schema.js';

export function newGuildId(): string {
  return `guild-${randomUUID()}`;
}

/**
 * A guild as `guildWith` makes it, written in SQL for a database migrated only part of the way:
 * the schema module names columns that later migrations add.
 */
export async function guildOnEarlierSchema(db: Executor, credits: number): Promise<string> {
  const guildId = newGuildId();
  await db.execute(sql`
    with g as (insert into guilds (id, balance) values (${guildId}, ${credits}) returning id, balance)
    insert into credit_ledger (guild_id, key, kind, amount, balance_after)
    select id, ${`guild:${guildId}:starting-credits`}, 'grant', balance, balance from g where balance > 0`);
  return guildId;
}

/** A guild of its own for one test, starting with `credits` (recorded as a grant). */
export async function guildWith(db: Executor, credits: number): Promise<string> {
  const guildId = newGuildId();
  await ensureGuild(db, guildId, { startingCredits: credits });
  return guildId;
}

export async function ledgerOf(db: Executor, guildId: string): Promise<LedgerEntry[]> {
  return db.select().from(creditLedger).where(eq(creditLedger.guildId, guildId)).orderBy(asc(creditLedger.id));
}

export async function balanceOf(db: Executor, guildId: string): Promise<number> {
  const [row] = await db.select({ balance: guilds.balance }).from(guilds).where(eq(guilds.id, guildId));
  if (!row) throw new Error(`no guild ${guildId}`);
  return row.balance;
}

/** The balance equals the ledger sum, and each row's balance_after chains from the previous one. */
export async function expectConsistent(db: Executor, guildId: string): Promise<void> {
  expect(await verifyLedger(db, guildId)).toEqual([]);
  const rows = await ledgerOf(db, guildId);
  let running = 0;
  for (const row of rows) {
    running += row.amount;
    expect(row.balanceAfter).toBe(running);
  }
  expect(await balanceOf(db, guildId)).toBe(running);
}
