/**
 * The credit movements of Discord purchases: a pack claimed for a server, and what a refund
 * takes back (a subscription's monthly allowance is the month's floor: allowance.ts). Each is
 * keyed by the entitlement id, so a second event, a replay or another process moves nothing,
 * and each changes the entitlement's row in the same transaction as the ledger.
 */
import { and, eq, isNull, ne, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { entitlements, guilds } from '../db/schema.js';
import { ensureGuild } from './accounts.js';
import { lockGuild, type GuildRow } from './audit.js';
import { ledgerKeys, purchaseOf } from './keys.js';
import { atomically, findEntryByKey, moveCredits } from './ledger.js';
import { utcMonth } from './periods.js';

export type EntitlementRow = typeof entitlements.$inferSelect;

export type ClaimOutcome =
  | { readonly status: 'claimed'; readonly guildId: string; readonly credits: number; readonly balance: number }
  /** Claimed before (by this call's twin, another process or the buyer's own click): nothing moved. */
  | { readonly status: 'already'; readonly guildId: string; readonly credits: number }
  | { readonly status: 'refunded' }
  | { readonly status: 'unknown' };

/**
 * Adds a pack's credits to `guildId` once: the ledger key is the entitlement's, whichever
 * server asks, so two claims for two servers move credits into one of them.
 */
export async function claimPack(
  executor: Executor,
  input: { readonly entitlementId: string; readonly guildId: string; readonly actorId?: string; readonly startingCredits?: number; readonly now?: Date },
): Promise<ClaimOutcome> {
  await ensureGuild(executor, input.guildId, { startingCredits: input.startingCredits ?? 0 });
  return atomically(executor, async (tx) => {
    // The guild first, then the entitlement: the order refunds and allowances lock in.
    await lockGuild(tx, input.guildId);
    const [row] = await tx.select().from(entitlements).where(eq(entitlements.id, input.entitlementId)).for('update');
    if (!row || row.kind !== 'pack') return { status: 'unknown' };
    if (row.deletedAt) return { status: 'refunded' };
    if (row.claimedAt && row.guildId) return { status: 'already', guildId: row.guildId, credits: row.credits };
    const outcome = await moveCredits(tx, {
      guildId: input.guildId,
      key: ledgerKeys.entitlement(row.id),
      kind: 'purchase',
      amount: row.credits,
      userId: row.userId,
      actorId: input.actorId ?? null,
      reason: `credit pack ${row.skuId}`,
    });
    if (outcome.status === 'refused') throw new Error(`claiming a pack was refused: ${outcome.reason}`);
    // A replay means the credits went in under this key before the row said so: keep where they went.
    const guildId = outcome.entry.guildId;
    await tx
      .update(entitlements)
      .set({ guildId, claimedAt: input.now ?? new Date(), updatedAt: sql`now()` })
      .where(eq(entitlements.id, row.id));
    if (outcome.status === 'replayed') return { status: 'already', guildId, credits: row.credits };
    return { status: 'claimed', guildId, credits: row.credits, balance: outcome.entry.balanceAfter };
  });
}

/**
 * What a subscription gave the guild this month that the month would not have given without
 * it: its part of the month's floor, or its raise, less what the owners' allowance or another
 * live subscription gives the month anyway. The month's floor drops to that remaining allowance.
 */
async function monthGivenBy(tx: Executor, guild: GuildRow, row: EntitlementRow, now: Date): Promise<number> {
  const period = utcMonth(now);
  const floor = await findEntryByKey(tx, ledgerKeys.allowance(guild.id, period));
  const raise = await findEntryByKey(tx, ledgerKeys.subscription(row.id, period));
  const given = (floor && purchaseOf(floor)?.entitlementId === row.id ? floor.amount : 0) + (raise?.amount ?? 0);
  const [other] = await tx
    .select({ credits: entitlements.credits })
    .from(entitlements)
    .where(and(liveSubscriptions(now, guild.id), ne(entitlements.id, row.id)))
    .orderBy(sql`${entitlements.credits} desc`)
    .limit(1);
  const remaining = Math.max(guild.monthlyAllowance, other?.credits ?? 0);
  if (remaining >= guild.allowanceFloor) return 0;
  await tx.update(guilds).set({ allowanceFloor: remaining, updatedAt: sql`now()` }).where(eq(guilds.id, guild.id));
  return Math.min(given, guild.allowanceFloor - remaining);
}

/** Whether a subscription gives its allowance at `now`: not refunded, started, not ended. */
export function isLive(row: Pick<EntitlementRow, 'kind' | 'deletedAt' | 'startsAt' | 'endsAt'>, now: Date): boolean {
  return row.kind === 'subscription' && !row.deletedAt && (!row.startsAt || row.startsAt <= now) && (!row.endsAt || row.endsAt > now);
}

/** The SQL of {@link isLive}: the guild's subscriptions (all guilds' when no guild is given) that give their allowance at `now`. */
export function liveSubscriptions(now: Date, guildId?: string): SQL {
  return and(
    ...(guildId === undefined ? [] : [eq(entitlements.guildId, guildId)]),
    eq(entitlements.kind, 'subscription'),
    isNull(entitlements.deletedAt),
    sql`(${entitlements.startsAt} is null or ${entitlements.startsAt} <= ${now})`,
    sql`(${entitlements.endsAt} is null or ${entitlements.endsAt} > ${now})`,
  )!;
}

/** The live subscription with the largest allowance on the guild, or undefined. */
export async function largestSubscription(executor: Executor, guildId: string, now: Date): Promise<EntitlementRow | undefined> {
  const [row] = await executor
    .select()
    .from(entitlements)
    .where(liveSubscriptions(now, guildId))
    .orderBy(sql`${entitlements.credits} desc`, entitlements.id)
    .limit(1);
  return row;
}

/** Sets `guilds.subscription_allowance` from the guild's live subscriptions. */
export async function refreshSubscriptionAllowance(executor: Executor, guildId: string, now: Date): Promise<number> {
  const largest = await largestSubscription(executor, guildId, now);
  const allowance = largest?.credits ?? 0;
  await executor
    .update(guilds)
    .set({ subscriptionAllowance: allowance })
    .where(and(eq(guilds.id, guildId), sql`${guilds.subscriptionAllowance} <> ${allowance}`));
  return allowance;
}

export interface ReversalOutcome {
  readonly status: 'reversed' | 'already' | 'unknown';
  /** Credits taken back from the guild. */
  readonly taken: number;
  /** Credits the guild's balance could not give back, recorded for the owners. */
  readonly unrecovered: number;
  readonly guildId: string | null;
}

/**
 * A refund (Discord deleted the entitlement): marks it deleted and takes back what it gave,
 * as far as the guild's balance allows: a claimed pack's credits, or what a subscription gave
 * the current month beyond what the month gives without it (its allowance stops). What cannot
 * be taken back is recorded on the row.
 */
export async function reverseEntitlement(executor: Executor, input: { readonly entitlementId: string; readonly now?: Date }): Promise<ReversalOutcome> {
  // A claim may land between the look and the locks: then the guild to lock has changed, and the step starts again.
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await reverseOnce(executor, input);
    } catch (error) {
      if (!(error instanceof GuildChanged) || attempt >= 5) throw error;
    }
  }
}

class GuildChanged extends Error {}

async function reverseOnce(executor: Executor, input: { readonly entitlementId: string; readonly now?: Date }): Promise<ReversalOutcome> {
  const now = input.now ?? new Date();
  const [peek] = await executor.select({ guildId: entitlements.guildId }).from(entitlements).where(eq(entitlements.id, input.entitlementId));
  if (!peek) return { status: 'unknown', taken: 0, unrecovered: 0, guildId: null };
  return atomically(executor, async (tx) => {
    // The guild first, then the entitlement: the order claims and allowances lock in.
    const guild = peek.guildId ? await lockGuild(tx, peek.guildId).catch(() => undefined) : undefined;
    const [row] = await tx.select().from(entitlements).where(eq(entitlements.id, input.entitlementId)).for('update');
    if (!row) return { status: 'unknown', taken: 0, unrecovered: 0, guildId: null };
    if (row.guildId !== peek.guildId) throw new GuildChanged();
    if (row.deletedAt) return { status: 'already', taken: row.reversedCredits, unrecovered: row.unrecoveredCredits, guildId: row.guildId };
    let given = 0;
    if (row.kind === 'pack' && row.claimedAt && row.guildId) {
      given = (await findEntryByKey(tx, ledgerKeys.entitlement(row.id)))?.amount ?? 0;
    } else if (row.kind === 'subscription' && guild && row.guildId === guild.id && guild.allowancePeriod === utcMonth(now)) {
      given = await monthGivenBy(tx, guild, row, now);
    }
    let taken = 0;
    if (given > 0 && guild && row.guildId === guild.id) {
      const amount = Math.min(given, guild.balance);
      if (amount > 0) {
        const outcome = await moveCredits(tx, {
          guildId: guild.id,
          key: ledgerKeys.entitlementReversal(row.id),
          kind: 'reversal',
          amount: -amount,
          userId: row.userId,
          reason: `refund of ${row.kind === 'pack' ? 'credit pack' : 'subscription'} ${row.skuId}`,
        });
        if (outcome.status === 'moved') taken = amount;
      }
    }
    const unrecovered = Math.max(0, given - taken);
    await tx
      .update(entitlements)
      .set({ deletedAt: now, reversedCredits: taken, unrecoveredCredits: unrecovered, updatedAt: sql`now()` })
      .where(eq(entitlements.id, row.id));
    if (row.kind === 'subscription' && row.guildId) await refreshSubscriptionAllowance(tx, row.guildId, now);
    return { status: 'reversed', taken, unrecovered, guildId: row.guildId };
  });
}
