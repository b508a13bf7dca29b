/**
 * The minute sweep: packs whose claim window passed go to their default server, packs Discord
 * has not consumed are consumed, and subscriptions whose end has passed stop their allowance.
 */
import { guildsWithEndedSubscriptions, packsDueForDefault, refreshSubscriptionAllowance, unconsumedPacks } from '../credits/index.js';
import { claimPackFor, type ClaimDeps } from './claim-pack.js';
import { consumePack } from './consume-pack.js';
import type { StepDeps } from './purchase-deps.js';

export interface SweepResult {
  readonly claimed: number;
  readonly consumed: number;
}

export async function sweepEntitlements(deps: ClaimDeps & Pick<StepDeps, 'packClaimMinutes'>): Promise<SweepResult> {
  const { db, logger } = deps;
  const at = deps.now();
  let claimed = 0;
  let consumed = 0;
  const due = await packsDueForDefault(db, new Date(at.getTime() - deps.packClaimMinutes * 60_000));
  for (const pack of due) {
    const outcome = await claimPackFor(deps, { entitlementId: pack.id, guildId: pack.guildId }).catch((err: unknown) => logger.error({ err, entitlementId: pack.id }, 'claiming a pack failed'));
    if (outcome && outcome.status === 'claimed') claimed += 1;
  }
  for (const id of await unconsumedPacks(db)) if (await consumePack(deps, id, { retry: false })) consumed += 1;
  // Starts, ends told by Discord and refunds refresh the guild's allowance as they come; what
  // is left is a subscription whose end has since passed, on a guild whose allowance counts it still.
  for (const guildId of await guildsWithEndedSubscriptions(db, at)) await refreshSubscriptionAllowance(db, guildId, at);
  return { claimed, consumed };
}
