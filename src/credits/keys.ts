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
  /** The month's floor (`YYYY-MM`): the owners' allowance or a subscription's, one per guild and month. */
  allowance: (guildId: string, period: string) => `allowance:${guildId}:${period}`,
  /** A moderator's grant, take or adjust; `key` is the caller's idempotency key (the interaction id). */
  manual: (key: string) => `manual:${key}`,
  /** A credit pack bought through Discord: its entitlement id, whichever server it was claimed for. */
  entitlement: (entitlementId: string) => `entitlement:${entitlementId}`,
  /** A subscription's raise of a month (`YYYY-MM`) already applied: the difference above its floor. */
  subscription: (entitlementId: string, period: string) => `entitlement:${entitlementId}:${period}`,
  /** What a refund of the entitlement took back. */
  entitlementReversal: (entitlementId: string) => `entitlement:${entitlementId}:reversal`,
} as const;

/** What a ledger movement of a Discord purchase names: its entitlement, its SKU, a subscription's month. */
export interface PurchaseRef {
  readonly entitlementId: string;
  /** From the movement's reason (`credit pack <sku>`, `subscription <sku> <YYYY-MM>`, `refund of … <sku>`); null if it has none. */
  readonly skuId: string | null;
  /** A subscription's month, `YYYY-MM`. */
  readonly period?: string;
}

/**
 * The purchase a ledger movement belongs to (a key made by `ledgerKeys.entitlement*` or
 * `.subscription`, or a month's floor given by a subscription, whose reason names it), or undefined.
 */
export function purchaseOf(entry: { readonly key: string; readonly reason: string | null }): PurchaseRef | undefined {
  if (entry.key.startsWith('allowance:')) {
    const floor = /^subscription (\d+) (\d{4}-\d{2}) entitlement (\d+)$/.exec(entry.reason ?? '');
    return floor && entry.key.endsWith(`:${floor[2]}`) ? { entitlementId: floor[3]!, skuId: floor[1]!, period: floor[2]! } : undefined;
  }
  const match = /^entitlement:(\d+)(?::(\d{4}-\d{2}|reversal))?$/.exec(entry.key);
  if (!match) return undefined;
  const skuId = /(\d+)(?: \d{4}-\d{2})?$/.exec(entry.reason ?? '')?.[1] ?? null;
  return { entitlementId: match[1]!, skuId, ...(match[2] && match[2] !== 'reversal' && { period: match[2] }) };
}
