/**
 * Credits move only through this module, each movement under a unique ledger key so a retry
 * cannot move it twice. Functions take an `Executor` first: given the database they open their
 * own transaction, given a transaction they work inside it (steps of several statements in a
 * savepoint); a key already taken is a replay, not an error.
 */
export { ensureGuild, getBalance, getGuildCredits, type EnsureGuildOptions, type GuildCredits } from './accounts.js';
export {
  applyDueAllowances,
  applyMonthlyAllowance,
  allowanceDue,
  allowanceInForce,
  setMonthlyAllowance,
  startSubscription,
  type AllowanceResult,
  type DueAllowancesResult,
  type SetMonthlyAllowanceInput,
} from './allowance.js';
export { setLowBalanceAlert, takeLowBalanceAlert, type LowBalanceAlert, type SetLowBalanceAlertInput } from './alerts.js';
export { AUDIT_ACTIONS, type AuditAction, type ChangeSource } from './audit.js';
export { exportCsv, type CsvLedgerRow } from './csv.js';
export { writeLedgerCsv, type LedgerCsvExport, type LedgerCsvFile, type LedgerCsvQuery } from './csv-export.js';
export { dailyFlows, INCOMING_KINDS, SPEND_KINDS, utcDays, type DayFlows, type IncomingKind, type SpendKind } from './daily-flows.js';
export { CreditsError, isCreditsError, type CreditsErrorReason } from './errors.js';
export {
  isJobCharged,
  reserveForJob,
  returnJobCredits,
  type ReserveInput,
  type ReserveResult,
  type ReturnInput,
  type ReturnResult,
} from './job-credits.js';
export { ledgerKeys, purchaseOf, type PurchaseRef } from './keys.js';
export type { LedgerEntry, RefusalReason } from './ledger.js';
export {
  checkSpendingLimits,
  effectiveDailyCap,
  setFrozen,
  setUserDailyCap,
  type SetUserDailyCapInput,
  type SpendingCheck,
  type SpendingCheckInput,
} from './limits.js';
export {
  adjust,
  grant,
  MAX_MANUAL_AMOUNT,
  take,
  type ModeratorMovementInput,
  type ModeratorMovementResult,
} from './moderator-movements.js';
export { nextAllowanceTopUp, utcDay, utcMonth, utcMonthStart } from './periods.js';
export {
  history,
  latestTake,
  spentToday,
  guildUsage,
  usage,
  type HistoryEntry,
  type HistoryPage,
  type HistoryQuery,
  type MemberUsage,
  type UsageQuery,
  type UsageReport,
  type UsageTotals,
} from './reports.js';
export { upstreamSpentBetween, upstreamSpentTotal } from './upstream-spend.js';
export { verifyLedger, type LedgerMismatch } from './verify.js';
export {
  claimPack,
  isLive,
  largestSubscription,
  liveSubscriptions,
  refreshSubscriptionAllowance,
  reverseEntitlement,
  type ClaimOutcome,
  type EntitlementRow,
  type ReversalOutcome,
} from './purchase-credits.js';
export {
  findEntitlement,
  guildsWithEndedSubscriptions,
  markConsumed,
  offeredGuild,
  offerLocale,
  packsDueForDefault,
  recordEntitlement,
  recordOffer,
  takeBuyerNotice,
  unclaimedPacksOf,
  unconsumedPacks,
  type EntitlementFacts,
} from './purchase-rows.js';
