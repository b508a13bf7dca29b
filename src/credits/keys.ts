/**
 * Ledger keys. A movement's key is unique in the ledger, so whichever path retries a step
 * finds the key taken and moves nothing. Keep every key built here so their shapes cannot
 * collide.
 */

export const ledgerKeys = {
  /** The one charge for a job. */
  jobDebit: (jobId: string) => `job:${jobId}:debit`,
  /** The one return of a job's charge, whether release or refund: a job is credited back at most once. */
  jobCredit: (jobId: string) => `job:${jobId}:credit`,
  startingCredits: (guildId: string) => `guild:${guildId}:starting-credits`,
  allowance: (guildId: string, period: string) => `allowance:${guildId}:${period}`,
  /** A moderator's grant, take or adjust; `key` is the caller's idempotency key (the interaction id). */
  manual: (key: string) => `manual:${key}`,
} as const;
