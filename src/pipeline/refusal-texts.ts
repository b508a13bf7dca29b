/**
 * What a member reads when the server cannot pay for a request: the same sentences whether
 * the Discord layer sees it before answering or the pipeline finds it in the reservation.
 */
import { nextAllowanceTopUp, utcDay } from '../credits/index.js';
import { localText, type LocalText } from '../i18n/index.js';

/** Unix seconds, for Discord's `<t:…>` markup. */
const unixSeconds = (date: Date) => Math.floor(date.getTime() / 1000);

export const REFUSAL_TEXTS = {
  frozen: (): LocalText => localText('refusal.frozen'),
  dailyCap: (cost: number, left: number, limit: number, now: Date = new Date()): LocalText =>
    localText('refusal.dailyCap', { cost, left, limit, reset: unixSeconds(utcDay(now).end) }),
  /**
   * Names who can help: the monthly allowance when it will add credits (with when), and the
   * bot's owners, who alone can grant them.
   */
  insufficientCredits: (balance: number, cost: number, monthlyAllowance: number, now: Date = new Date()): LocalText =>
    monthlyAllowance > balance
      ? localText('refusal.insufficientCreditsAllowance', { balance, cost, allowance: monthlyAllowance, at: unixSeconds(nextAllowanceTopUp(now)) })
      : localText('refusal.insufficientCredits', { balance, cost }),
  remixSourceGone: (): LocalText => localText('refusal.remixSourceGone'),
  rerollSourceGone: (): LocalText => localText('reroll.gone'),
  /** Names no rule: a member who reads which word was refused learns how to spell around it. */
  blockedWords: (): LocalText => localText('refusal.blockedWords'),
  explicitWords: (): LocalText => localText('refusal.explicitWords'),
  /** Names no category, for the same reason. */
  moderationFlagged: (): LocalText => localText('refusal.moderationFlagged'),
  moderationUnavailable: (): LocalText => localText('refusal.moderationUnavailable'),
  /** Names no rule either: the server's AutoMod rules are its moderators' to show. */
  automod: (): LocalText => localText('refusal.automod'),
  blockedMember: (until: Date | null): LocalText => (until === null ? localText('refusal.blockedMember') : localText('refusal.blockedMemberUntil', { at: unixSeconds(until) })),
};
