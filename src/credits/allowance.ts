import { and, eq, gt, isNull, lt, or, sql } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { guilds } from '../db/schema.js';
import { AUDIT_ACTIONS, auditKeyUsed, lockGuild, writeAudit } from './audit.js';
import { CreditsError, requireInteger, requireText } from './errors.js';
import { ledgerKeys } from './keys.js';
import { atomically, moveCredits } from './ledger.js';
import { utcMonth } from './periods.js';
import { largestSubscription } from './premium.js';

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
      .set({ monthlyAllowance: input.amount, ...(skipThisMonth && { allowancePeriod: month }), updatedAt: sql`now()` })
      .where(eq(guilds.id, input.guildId));
    await writeAudit(tx, {
      guildId: input.guildId,
      actorId: input.actorId,
      action: AUDIT_ACTIONS.monthlyAllowance,
      details: { amount: input.amount, previous: guild.monthlyAllowance, ...(skipThisMonth && { fromNextMonth: true }) },
      key: input.key,
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
 * The rule: the allowance is a floor, not a gift on top. On the first call in a month
 * (`YYYY-MM`, UTC) later than `allowancePeriod`, the balance is topped up to the allowance —
 * an `allowance` movement of `max(0, allowance - balance)` keyed
 * `allowance:<guildId>:<YYYY-MM>` — and `allowancePeriod` becomes that month. Credits above
 * the allowance (bought or granted) are kept and nothing is added; unspent allowance does not
 * pile up month after month. Later calls in the same month, and calls with a `now` earlier
 * than the applied month, change nothing. A guild with no allowance (0) is left alone and its
 * period untouched, so an allowance set mid-month applies at the next use.
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

  return atomically(executor, async (tx) => {
    const guild = await lockGuild(tx, guildId);
    // The largest allowance wins: the owners', or a live subscription's (premium.ts).
    const subscription = guild.subscriptionAllowance > 0 ? await largestSubscription(tx, guildId, now) : undefined;
    const fromSubscription = subscription !== undefined && subscription.credits > guild.monthlyAllowance;
    const allowance = fromSubscription ? subscription.credits : guild.monthlyAllowance;
    if (!isDue(Math.max(guild.monthlyAllowance, guild.subscriptionAllowance), guild.allowancePeriod, period)) {
      return { guildId, period, applied: false, amount: 0, balance: guild.balance };
    }
    const topUp = Math.max(0, allowance - guild.balance);
    let balance = guild.balance;
    let amount = 0;
    if (topUp > 0) {
      const outcome = await moveCredits(tx, {
        guildId,
        ...(fromSubscription
          ? { key: ledgerKeys.subscription(subscription.id, period), kind: 'subscription', userId: subscription.userId, reason: `subscription ${subscription.skuId} ${period}` }
          : { key: ledgerKeys.allowance(guildId, period), kind: 'allowance', reason: `monthly allowance ${period}` }),
        amount: topUp,
      });
      if (outcome.status === 'moved') {
        balance = outcome.entry.balanceAfter;
        amount = outcome.entry.amount;
      }
    }
    await tx.update(guilds).set({ allowancePeriod: period, updatedAt: sql`now()` }).where(eq(guilds.id, guildId));
    return { guildId, period, applied: true, amount, balance };
  });
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
