/**
 * The overview's figures for one server: what `/credits` shows (read through the same credits
 * functions, so the page and the command agree), the pace of the last 30 days and when the
 * balance runs out at it, the low-balance alert and the freeze.
 */
import { allowanceInForce, getGuildCredits, guildUsage, nextAllowanceTopUp, utcDay, utcMonthStart } from '../../credits/index.js';
import type { Executor } from '../../db/client.js';

/** Days the pace is averaged over. */
export const PACE_DAYS = 30;

export type AlertState =
  | { readonly state: 'off' }
  /** Set, and the balance above it: the alert goes out when it falls below. */
  | { readonly state: 'armed'; readonly below: number; readonly channelId: string }
  /** The balance is below the threshold: the alert has gone out (or goes at the next charge). */
  | { readonly state: 'below'; readonly below: number; readonly channelId: string };

export interface Overview {
  readonly balance: number;
  readonly frozen: boolean;
  /** The monthly allowance in force (the larger of the server's and its subscriptions'); 0: none. */
  readonly allowance: number;
  readonly nextTopUp: Date;
  /** This UTC month's use, as `/credits` counts it. */
  readonly month: { readonly start: Date; readonly spent: number; readonly jobs: number };
  /** Credits spent per day over the last {@link PACE_DAYS} whole days and today. */
  readonly pacePerDay: number;
  /** The UTC day the balance runs out at that pace (the allowance not counted); null: no spending. */
  readonly runsOutOn: Date | null;
  readonly alert: AlertState;
}

/** The overview of a server the bot knows; null for one with no credit account yet. */
export async function loadOverview(db: Executor, guildId: string, now: Date): Promise<Overview | null> {
  const today = utcDay(now);
  const paceSince = new Date(today.start.getTime() - PACE_DAYS * 86_400_000);
  const monthStart = utcMonthStart(now);
  const [credits, month, pace] = await Promise.all([
    getGuildCredits(db, guildId),
    guildUsage(db, { guildId, since: monthStart }),
    guildUsage(db, { guildId, since: paceSince }),
  ]);
  if (!credits) return null;
  // The days counted: the 30 whole ones and the part of today gone by.
  const days = PACE_DAYS + (now.getTime() - today.start.getTime()) / 86_400_000;
  const pacePerDay = Math.max(0, pace.spent) / days;
  const runsOutOn = pacePerDay > 0 ? utcDay(new Date(now.getTime() + (credits.balance / pacePerDay) * 86_400_000)).start : null;
  const alertSet = credits.lowBalanceAlert;
  const alert: AlertState = !alertSet
    ? { state: 'off' }
    : { state: credits.balance < alertSet.below ? 'below' : 'armed', below: alertSet.below, channelId: alertSet.channelId };
  return {
    balance: credits.balance,
    frozen: credits.frozen,
    allowance: allowanceInForce(credits),
    nextTopUp: nextAllowanceTopUp(now),
    month: { start: monthStart, spent: month.spent, jobs: month.jobs },
    pacePerDay,
    runsOutOn,
    alert,
  };
}
