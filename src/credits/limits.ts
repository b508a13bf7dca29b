import { and, eq, inArray, is, sql } from 'drizzle-orm';
import { PgTransaction } from 'drizzle-orm/pg-core';
import type { Executor } from '../db/client.js';
import { guildRoleLimits, guilds } from '../db/schema.js';
import { AUDIT_ACTIONS, auditKeyUsed, lockGuild, writeAudit, type ChangeSource } from './audit.js';
import { CreditsError, requireInteger, requireText } from './errors.js';
import { atomically } from './ledger.js';
import { spentToday } from './reports.js';

export interface SpendingCheckInput {
  readonly guildId: string;
  readonly userId: string;
  /** The member's roles in the guild, for per-role cap overrides. */
  readonly roleIds: readonly string[];
  /** The cost about to be reserved. */
  readonly amount: number;
  readonly now?: Date;
  /**
   * What the caller's read of the guild for this very request already says (the freeze, and the
   * cap that holds for the member with these roles): the guild is not read again. The freeze is
   * checked again, atomically, by the reservation itself.
   */
  readonly read?: { readonly frozen: boolean; readonly dailyCap: number | null };
}

export type SpendingCheck =
  | { readonly ok: true }
  | { readonly ok: false; readonly reason: 'frozen' }
  /** `spent` today (UTC, net of refunds) plus `amount` would exceed `limit`. */
  | { readonly ok: false; readonly reason: 'user_cap'; readonly limit: number; readonly spent: number };

/**
 * The daily cap that holds for a member: if any of their roles has an override (`roleCaps`,
 * the overrides of the member's roles only), the most generous of them, even one lower than
 * the guild's cap, so that a role can also be held to less (e.g. new members); otherwise the
 * guild's cap. Null: no cap. The one statement of this rule; every reader of a cap calls it.
 */
export function effectiveDailyCap(guildCap: number | null, roleCaps: readonly number[]): number | null {
  return roleCaps.length > 0 ? Math.max(...roleCaps) : guildCap;
}

/**
 * The checks made before reserving: the guild is not frozen, and the member stays within
 * their daily cap (`effectiveDailyCap`).
 *
 * The balance is not checked here: `reserveForJob` is the atomic check. Inside a
 * transaction this takes a lock per member until commit, so a member's parallel requests
 * doing check-then-reserve in one transaction each cannot both slip under the cap.
 *
 * @throws CreditsError `unknown_guild`
 */
export async function checkSpendingLimits(executor: Executor, input: SpendingCheckInput): Promise<SpendingCheck> {
  requireInteger(input.amount, 'amount', { min: 0 });
  if (is(executor, PgTransaction)) {
    await executor.execute(
      sql`select pg_advisory_xact_lock(hashtextextended(${`credits-cap:${input.guildId}:${input.userId}`}, 0))`,
    );
  }
  const known = input.read ?? (await readLimits(executor, input));
  if (known.frozen) return { ok: false, reason: 'frozen' };
  const limit = known.dailyCap;
  if (limit === null) return { ok: true };
  const spent = await spentToday(executor, { guildId: input.guildId, userId: input.userId, now: input.now ?? new Date() });
  return spent + input.amount <= limit ? { ok: true } : { ok: false, reason: 'user_cap', limit, spent };
}

/** The guild's freeze and the cap that holds for the member: two reads. */
async function readLimits(executor: Executor, input: SpendingCheckInput): Promise<{ frozen: boolean; dailyCap: number | null }> {
  const [guild] = await executor
    .select({ frozen: guilds.frozen, userDailyCap: guilds.userDailyCap })
    .from(guilds)
    .where(eq(guilds.id, input.guildId));
  if (!guild) throw new CreditsError('unknown_guild', 'no credit account for guild', { guildId: input.guildId });
  return { frozen: guild.frozen, dailyCap: effectiveDailyCap(guild.userDailyCap, await roleCaps(executor, input.guildId, input.roleIds)) };
}

async function roleCaps(executor: Executor, guildId: string, roleIds: readonly string[]): Promise<number[]> {
  if (roleIds.length === 0) return [];
  const rows = await executor
    .select({ cap: guildRoleLimits.dailyCap })
    .from(guildRoleLimits)
    .where(and(eq(guildRoleLimits.guildId, guildId), inArray(guildRoleLimits.roleId, [...roleIds])));
  return rows.map((row) => row.cap);
}

export interface SetUserDailyCapInput {
  readonly guildId: string;
  /** Credits per member per UTC day; null removes the cap (or, with `roleId`, the role's override). */
  readonly amount: number | null;
  /** Sets this role's override instead of the guild-wide cap. */
  readonly roleId?: string;
  readonly actorId: string;
  /** Optional idempotency key (the interaction id). */
  readonly key?: string;
  readonly source?: ChangeSource;
}

/** Sets the guild's per-member daily cap, or one role's override of it, and records who did it. */
export async function setUserDailyCap(
  executor: Executor,
  input: SetUserDailyCapInput,
): Promise<{ previous: number | null; replayed: boolean }> {
  if (input.amount !== null) requireInteger(input.amount, 'amount', { min: 0 });
  requireText(input.actorId, 'actorId');
  if (input.roleId !== undefined) requireText(input.roleId, 'roleId');
  return atomically(executor, async (tx) => {
    const guild = await lockGuild(tx, input.guildId);
    if (input.key !== undefined && (await auditKeyUsed(tx, input.guildId, AUDIT_ACTIONS.dailyCap, input.key))) {
      return { previous: null, replayed: true };
    }
    let previous: number | null;
    if (input.roleId === undefined) {
      previous = guild.userDailyCap;
      await tx.update(guilds).set({ userDailyCap: input.amount, updatedAt: sql`now()` }).where(eq(guilds.id, input.guildId));
    } else {
      const where = and(eq(guildRoleLimits.guildId, input.guildId), eq(guildRoleLimits.roleId, input.roleId));
      const [existing] = await tx.select({ dailyCap: guildRoleLimits.dailyCap }).from(guildRoleLimits).where(where);
      previous = existing?.dailyCap ?? null;
      if (input.amount === null) {
        await tx.delete(guildRoleLimits).where(where);
      } else {
        await tx
          .insert(guildRoleLimits)
          .values({ guildId: input.guildId, roleId: input.roleId, dailyCap: input.amount })
          .onConflictDoUpdate({ target: [guildRoleLimits.guildId, guildRoleLimits.roleId], set: { dailyCap: input.amount } });
      }
    }
    await writeAudit(tx, {
      guildId: input.guildId,
      actorId: input.actorId,
      action: AUDIT_ACTIONS.dailyCap,
      details: { roleId: input.roleId ?? null, amount: input.amount, previous },
      key: input.key,
      source: input.source,
    });
    return { previous, replayed: false };
  });
}

/**
 * Freezes or unfreezes a guild's spending: while frozen, `reserveForJob` refuses every job.
 * Moderators' movements and refunds still go through. An audit row names who did it; asking
 * for the state the guild is already in changes and records nothing.
 */
export async function setFrozen(
  executor: Executor,
  input: { guildId: string; frozen: boolean; actorId: string; source?: ChangeSource },
): Promise<{ frozen: boolean; changed: boolean }> {
  requireText(input.actorId, 'actorId');
  return atomically(executor, async (tx) => {
    const guild = await lockGuild(tx, input.guildId);
    if (guild.frozen === input.frozen) return { frozen: input.frozen, changed: false };
    await tx.update(guilds).set({ frozen: input.frozen, updatedAt: sql`now()` }).where(eq(guilds.id, input.guildId));
    await writeAudit(tx, {
      guildId: input.guildId,
      actorId: input.actorId,
      action: AUDIT_ACTIONS.frozen,
      details: { frozen: input.frozen },
      source: input.source,
    });
    return { frozen: input.frozen, changed: true };
  });
}
