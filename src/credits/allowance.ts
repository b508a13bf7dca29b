import { and, eq, gt, isNull, lt, or, sql } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { entitlements, guilds } from '../db/schema.js';
import { ensureGuild } from './accounts.js';
import { AUDIT_ACTIONS, auditKeyUsed, lockGuild, writeAudit, type ChangeSource, type GuildRow } from './audit.js';
import { CreditsError, requireInteger, requireText } from './errors.js';
import { ledgerKeys } from './keys.js';
import { atomically, moveCredits } from './ledger.js';
import { utcMonth } from './periods.js';
import { isLive, largestSubscription, refreshSubscriptionAllowance, type EntitlementRow } from './purchase-credits.js';

/** The allowance a guild is topped up to each month: the larger of the owners' and its server plan's. */
export function allowanceInForce(guild: { readonly monthlyAllowance: number; readonly subscriptionAllowance: number }): number {
  return Math.max(guild.monthlyAllowance, guild.subscriptionAllowance);
}

export interface SetMonthlyAllowanceInput {
  readonly guildId: string;
  /** Credits per month; 0 turns the allowance off. */
  readonly amount: number;
  readonly actorId: string;
  /** Idempotency key (the interaction id): a replay changes nothing, even after a later change. */
  readonly key: string;
  /**
   * Count this month as done, so that an allowance not yet applied this month first tops the
   * balance up next month instead of at the guild's next use.
   */
  readonly fromNextMonth?: boolean;
  readonly now?: Date;
  readonly source?: ChangeSource;
}

/**
 * Sets the monthly allowance and records who did it. The new amount counts from the next
 * period not yet applied: a guild that never had one gets it at its next use (unless
 * `fromNextMonth`); a guild whose allowance for this month was already applied gets the new
 * amount next month.
 */
export async function setMonthlyAllowance(
  executor: Executor,
  input: SetMonthlyAllowanceInput,
): Promise<{ monthlyAllowance: number; previous: number; replayed: boolean }> {
  requireInteger(input.amount, 'amount', { min: 0 });
  requireText(input.actorId, 'actorId');
  requireText(input.key, 'key');
  return atomically(executor, async (tx) => {
    const guild = await lockGuild(tx, input.guildId);
    if (await auditKeyUsed(tx, input.guildId, AUDIT_ACTIONS.monthlyAllowance, input.key)) {
      return { monthlyAllowance: guild.monthlyAllowance, previous: guild.monthlyAllowance, replayed: true };
    }
    const month = utcMonth(input.now ?? new Date());
    const skipThisMonth = input.fromNextMonth === true && (guild.allowancePeriod === null || guild.allowancePeriod < month);
    await tx
      .update(guilds)
      .set({ monthlyAllowance: input.amount, ...(skipThisMonth && { allowancePeriod: month, allowanceFloor: 0 }), updatedAt: sql`now()` })
      .where(eq(guilds.id, input.guildId));
    await writeAudit(tx, {
      guildId: input.guildId,
      actorId: input.actorId,
      action: AUDIT_ACTIONS.monthlyAllowance,
      details: { amount: input.amount, previous: guild.monthlyAllowance, ...(skipThisMonth && { fromNextMonth: true }) },
      key: input.key,
      source: input.source,
    });
    return { monthlyAllowance: input.amount, previous: guild.monthlyAllowance, replayed: false };
  });
}

export interface AllowanceResult {
  readonly guildId: string;
  /** The UTC month (`YYYY-MM`) this call looked at. */
  readonly period: string;
  /** True when this call applied the period (even if no credits were needed). */
  readonly applied: boolean;
  /** Credits added by this call. */
  readonly amount: number;
  readonly balance: number;
}

/**
 * Applies the monthly allowance at the first use in a new UTC month.
 *
 * The rule: one floor per guild and month. On the first call in a month (`YYYY-MM`, UTC) later
 * than `allowancePeriod`, the balance is topped up to the largest live allowance, the owners'
 * or a subscription's: a movement of `max(0, allowance - balance)` keyed
 * `allowance:<guildId>:<YYYY-MM>` whichever allowance it is (kind `subscription`, naming the
 * entitlement, when a subscription's). Credits above the allowance (bought or granted) are
 * kept and nothing is added; unspent allowance does not pile up month after month. Later calls
 * in the same month, and calls with a `now` earlier than the applied month, change nothing. A
 * guild with no allowance (0) is left alone and its period untouched, so an allowance set
 * mid-month applies at the next use. A subscription first seen later in the month may add the
 * difference ({@link startSubscription}). Why: docs/decisions/monthly-floor.md
 *
 * Call it when a guild uses the bot (before checking limits and reserving); a scheduler calls
 * {@link applyDueAllowances} hourly for guilds that stay quiet.
 *
 * @throws CreditsError `unknown_guild`
 */
export async function applyMonthlyAllowance(
  executor: Executor,
  guildId: string,
  now: Date = new Date(),
): Promise<AllowanceResult> {
  const period = utcMonth(now);
  // Most calls find nothing due: answer them without taking the guild's row lock.
  const [peek] = await executor
    .select({ balance: guilds.balance, allowance: sql<number>`greatest(${guilds.monthlyAllowance}, ${guilds.subscriptionAllowance})`, period: guilds.allowancePeriod })
    .from(guilds)
    .where(eq(guilds.id, guildId));
  if (!peek) throw new CreditsError('unknown_guild', 'no credit account for guild', { guildId });
  if (!isDue(peek.allowance, peek.period, period)) {
    return { guildId, period, applied: false, amount: 0, balance: peek.balance };
  }
  return atomically(executor, async (tx) => ({ guildId, period, ...(await applyFloor(tx, await lockGuild(tx, guildId), now, false)) }));
}

/**
 * What a live subscription gives when it is received (each event, each listing): in a month not
 * yet applied, the month's floor, as {@link applyMonthlyAllowance} gives it; in a month already
 * applied, the difference between its allowance and the month's floor when it is the larger,
 * topping the balance up to its allowance at most (key `entitlement:<id>:<YYYY-MM>`). Once the
 * month's floor is its allowance, later receives move nothing. It also keeps the guild's
 * `subscription_allowance` up to date. With `takeNotice`, it also takes the buyer's notice
 * (`buyer_told_at`) when no start took it before: of two starts at once, the one that ran first
 * under the guild's lock, whose `amount` is what the subscription added.
 */
export async function startSubscription(
  executor: Executor,
  input: { readonly entitlementId: string; readonly startingCredits?: number; readonly now?: Date; readonly takeNotice?: boolean },
): Promise<{ readonly amount: number; readonly guildId: string | null; readonly noticeTaken?: boolean }> {
  const now = input.now ?? new Date();
  const notice = (taken: boolean) => (input.takeNotice ? { noticeTaken: taken } : {});
  const [peek] = await executor.select({ guildId: entitlements.guildId }).from(entitlements).where(eq(entitlements.id, input.entitlementId));
  if (!peek?.guildId) return { amount: 0, guildId: null, ...notice(false) };
  await ensureGuild(executor, peek.guildId, { startingCredits: input.startingCredits ?? 0 });
  return atomically(executor, async (tx) => {
    // The guild first, then the entitlement: the order claims and refunds lock in.
    const guild = await lockGuild(tx, peek.guildId!);
    const [row] = await tx.select().from(entitlements).where(eq(entitlements.id, input.entitlementId)).for('update');
    await refreshSubscriptionAllowance(tx, guild.id, now);
    if (!row || !isLive(row, now)) return { amount: 0, guildId: guild.id, ...notice(false) };
    const { amount } = await applyFloor(tx, guild, now, true);
    const take = input.takeNotice === true && row.buyerToldAt === null;
    if (take) await tx.update(entitlements).set({ buyerToldAt: now }).where(eq(entitlements.id, row.id));
    return { amount, guildId: guild.id, ...notice(take) };
  });
}

/**
 * The month's floor on a locked guild: applied when its month is due; with `raise`, in a month
 * already applied, the largest live subscription adds the difference above the month's floor.
 */
async function applyFloor(tx: Executor, guild: GuildRow, now: Date, raise: boolean): Promise<Omit<AllowanceResult, 'guildId' | 'period'>> {
  const period = utcMonth(now);
  const due = guild.allowancePeriod === null || guild.allowancePeriod < period;
  const nothing = { applied: false, amount: 0, balance: guild.balance };
  if (!due && !(raise && guild.allowancePeriod === period)) return nothing;
  const subscription = await largestSubscription(tx, guild.id, now);
  const fromSubscription = subscription !== undefined && (due ? subscription.credits > guild.monthlyAllowance : subscription.credits > guild.allowanceFloor);
  if (!due && !fromSubscription) return nothing;
  const allowance = fromSubscription ? subscription.credits : guild.monthlyAllowance;
  if (allowance === 0) return nothing;
  const topUp = due ? allowance - guild.balance : Math.min(allowance - guild.allowanceFloor, allowance - guild.balance);
  let { balance } = guild;
  let amount = 0;
  if (topUp > 0) {
    const outcome = await moveCredits(tx, {
      guildId: guild.id,
      ...(!due
        ? { key: ledgerKeys.subscription(subscription!.id, period), kind: 'subscription', userId: subscription!.userId, reason: subscriptionReason(subscription!, period, false) }
        : fromSubscription
          ? { key: ledgerKeys.allowance(guild.id, period), kind: 'subscription', userId: subscription.userId, reason: subscriptionReason(subscription, period, true) }
          : { key: ledgerKeys.allowance(guild.id, period), kind: 'allowance', reason: `monthly allowance ${period}` }),
      amount: topUp,
    });
    if (outcome.status === 'moved') {
      balance = outcome.entry.balanceAfter;
      amount = outcome.entry.amount;
    }
  }
  await tx.update(guilds).set({ allowancePeriod: period, allowanceFloor: allowance, updatedAt: sql`now()` }).where(eq(guilds.id, guild.id));
  return { applied: true, amount, balance };
}

/** A subscription's movement names its SKU and month; the month's floor, under the guild's key, names the entitlement too (see `purchaseOf`). */
function subscriptionReason(subscription: EntitlementRow, period: string, floor: boolean): string {
  return `subscription ${subscription.skuId} ${period}${floor ? ` entitlement ${subscription.id}` : ''}`;
}

/** Whether the guild's monthly allowance is still to be applied this month (no database call). */
export function allowanceDue(
  guild: { monthlyAllowance: number; subscriptionAllowance: number; allowancePeriod: string | null },
  now: Date,
): boolean {
  return isDue(Math.max(guild.monthlyAllowance, guild.subscriptionAllowance), guild.allowancePeriod, utcMonth(now));
}

function isDue(allowance: number, appliedPeriod: string | null, period: string): boolean {
  return allowance > 0 && (appliedPeriod === null || appliedPeriod < period);
}

export interface DueAllowancesResult {
  readonly applied: AllowanceResult[];
  readonly failed: ReadonlyArray<{ readonly guildId: string; readonly error: unknown }>;
}

/**
 * Applies the allowance of every guild that is due this month, each in its own transaction
 * so one failure does not hold back the others (the failures are returned for the caller to
 * log). Safe to run as often as wanted and alongside first-use calls.
 */
export async function applyDueAllowances(executor: Executor, now: Date = new Date()): Promise<DueAllowancesResult> {
  const period = utcMonth(now);
  const due = await executor
    .select({ id: guilds.id })
    .from(guilds)
    .where(
      and(
        or(gt(guilds.monthlyAllowance, 0), gt(guilds.subscriptionAllowance, 0)),
        or(isNull(guilds.allowancePeriod), lt(guilds.allowancePeriod, period)),
      ),
    )
    .orderBy(guilds.id);

  const applied: AllowanceResult[] = [];
  const failed: Array<{ guildId: string; error: unknown }> = [];
  for (const { id } of due) {
    try {
      const result = await applyMonthlyAllowance(executor, id, now);
      if (result.applied) applied.push(result);
    } catch (error) {
      failed.push({ guildId: id, error });
    }
  }
  return { applied, failed };
}
