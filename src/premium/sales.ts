/**
 * The owners' reading of purchases through Discord: what was sold in a month, set beside what
 * the music service charged in it, and what refunds took back or could not.
 */
import { and, eq, gte, lt, sql } from 'drizzle-orm';
import { liveSubscriptions, nextAllowanceTopUp, upstreamSpentBetween, utcMonthStart } from '../credits/index.js';
import type { Executor } from '../db/client.js';
import { creditLedger, entitlements } from '../db/schema.js';

export interface SalesReport {
  readonly since: Date;
  readonly until: Date;
  /** Packs first seen in the month (refunded ones too: the refunds say what came back). */
  readonly packs: { readonly count: number; readonly credits: number; readonly waiting: number };
  /** Subscriptions live at `now` (all servers), and the allowance credits they gave in the month. */
  readonly subscriptions: { readonly live: number; readonly credits: number };
  /** Pack credits and subscription allowance of the month. */
  readonly sold: number;
  /** What the ledger says the music service charged in the month (src/credits/upstream-spend.ts). */
  readonly serviceCharged: number;
  /** Entitlements refunded in the month: credits taken back, and credits the balance could not give back. */
  readonly refunds: { readonly count: number; readonly taken: number; readonly unrecovered: number };
}

/** The sales of the UTC month of `now`, across all servers. */
export async function salesReport(executor: Executor, now: Date = new Date()): Promise<SalesReport> {
  const since = utcMonthStart(now);
  const until = nextAllowanceTopUp(now);
  const inMonth = (column: typeof entitlements.createdAt | typeof entitlements.deletedAt) => and(gte(column, since), lt(column, until));
  const total = (value: unknown) => sql<number>`coalesce(sum(${value}), 0)`.mapWith(Number);

  const [[packs], [live], [given], [refunds], serviceCharged] = await Promise.all([
    executor
      .select({
        count: sql<number>`count(*)`.mapWith(Number),
        credits: total(entitlements.credits),
        waiting: sql<number>`count(*) filter (where ${entitlements.claimedAt} is null and ${entitlements.deletedAt} is null)`.mapWith(Number),
      })
      .from(entitlements)
      .where(and(eq(entitlements.kind, 'pack'), inMonth(entitlements.createdAt))),
    executor
      .select({ count: sql<number>`count(*)`.mapWith(Number) })
      .from(entitlements)
      .where(liveSubscriptions(now)),
    executor
      .select({ credits: total(creditLedger.amount) })
      .from(creditLedger)
      .where(and(eq(creditLedger.kind, 'subscription'), gte(creditLedger.createdAt, since), lt(creditLedger.createdAt, until))),
    executor
      .select({
        count: sql<number>`count(*)`.mapWith(Number),
        taken: total(entitlements.reversedCredits),
        unrecovered: total(entitlements.unrecoveredCredits),
      })
      .from(entitlements)
      .where(inMonth(entitlements.deletedAt)),
    upstreamSpentBetween(executor, since, until),
  ]);
  const subscriptionCredits = given?.credits ?? 0;
  return {
    since,
    until,
    packs: { count: packs?.count ?? 0, credits: packs?.credits ?? 0, waiting: packs?.waiting ?? 0 },
    subscriptions: { live: live?.count ?? 0, credits: subscriptionCredits },
    sold: (packs?.credits ?? 0) + subscriptionCredits,
    serviceCharged,
    refunds: { count: refunds?.count ?? 0, taken: refunds?.taken ?? 0, unrecovered: refunds?.unrecovered ?? 0 },
  };
}

/** Whether the report has anything to show: a sale, a live subscription or a refund. */
export function hasSales(report: SalesReport): boolean {
  return report.packs.count > 0 || report.subscriptions.live > 0 || report.subscriptions.credits > 0 || report.refunds.count > 0;
}

/** The SKUs of the server's live subscriptions: their Subscribe buttons are not shown again. */
export async function liveSubscriptionSkus(executor: Executor, guildId: string, now: Date = new Date()): Promise<string[]> {
  const rows = await executor
    .selectDistinct({ skuId: entitlements.skuId })
    .from(entitlements)
    .where(liveSubscriptions(now, guildId));
  return rows.map((row) => row.skuId);
}
