import { eq } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { guildRoleLimits, guilds } from '../db/schema.js';
import { requireInteger, requireText } from './errors.js';
import { ledgerKeys } from './keys.js';
import { atomically, currentBalance, moveCredits } from './ledger.js';

export interface EnsureGuildOptions {
  /**
   * Credits a new guild starts with, recorded as a `grant`.
   * @defaultValue 0
   */
  readonly startingCredits?: number;
}

/**
 * Creates the guild's credit account if it has none. Only the call that creates it grants
 * the starting credits (key `guild:<id>:starting-credits`), so calling this on every
 * interaction is safe.
 */
export async function ensureGuild(
  executor: Executor,
  guildId: string,
  options: EnsureGuildOptions = {},
): Promise<{ created: boolean; balance: number }> {
  requireText(guildId, 'guildId');
  const startingCredits = options.startingCredits ?? 0;
  requireInteger(startingCredits, 'startingCredits', { min: 0 });

  return atomically(executor, async (tx) => {
    const inserted = await tx.insert(guilds).values({ id: guildId }).onConflictDoNothing().returning({ id: guilds.id });
    const created = inserted.length > 0;
    if (created && startingCredits > 0) {
      const outcome = await moveCredits(tx, {
        guildId,
        key: ledgerKeys.startingCredits(guildId),
        kind: 'grant',
        amount: startingCredits,
        reason: 'starting credits',
      });
      if (outcome.status === 'moved') return { created, balance: outcome.entry.balanceAfter };
    }
    return { created, balance: (await currentBalance(tx, guildId)) ?? 0 };
  });
}

/** The guild's balance, or null when it has no credit account. */
export function getBalance(executor: Executor, guildId: string): Promise<number | null> {
  return currentBalance(executor, guildId);
}

export interface GuildCredits {
  readonly guildId: string;
  readonly balance: number;
  readonly frozen: boolean;
  /** 0 means no allowance. */
  readonly monthlyAllowance: number;
  /** The largest allowance of the guild's live subscriptions; 0 means none. The larger of the two applies. */
  readonly subscriptionAllowance: number;
  /** `YYYY-MM` whose allowance was last applied, or null. */
  readonly allowancePeriod: string | null;
  /** Per-member daily cap; null means none. */
  readonly userDailyCap: number | null;
  readonly roleLimits: ReadonlyArray<{ readonly roleId: string; readonly dailyCap: number }>;
  readonly lowBalanceAlert: { readonly channelId: string; readonly below: number } | null;
}

/** Everything about a guild's credits that a `/credits` command shows, or null for an unknown guild. */
export async function getGuildCredits(executor: Executor, guildId: string): Promise<GuildCredits | null> {
  const [guild] = await executor.select().from(guilds).where(eq(guilds.id, guildId));
  if (!guild) return null;
  const roleLimits = await executor
    .select({ roleId: guildRoleLimits.roleId, dailyCap: guildRoleLimits.dailyCap })
    .from(guildRoleLimits)
    .where(eq(guildRoleLimits.guildId, guildId))
    .orderBy(guildRoleLimits.roleId);
  return {
    guildId: guild.id,
    balance: guild.balance,
    frozen: guild.frozen,
    monthlyAllowance: guild.monthlyAllowance,
    subscriptionAllowance: guild.subscriptionAllowance,
    allowancePeriod: guild.allowancePeriod,
    userDailyCap: guild.userDailyCap,
    roleLimits,
    lowBalanceAlert:
      guild.alertChannelId !== null && guild.alertBelow !== null
        ? { channelId: guild.alertChannelId, below: guild.alertBelow }
        : null,
  };
}
