/**
 * A pack goes into a server: its credits through the ledger under the entitlement's id, then
 * its consume, not waited for (a member's command must not wait on Discord).
 */
import { claimPack, findEntitlement, type ClaimOutcome } from '../credits/index.js';
import { consumePack, type ConsumeDeps } from './consume-pack.js';
import type { StepDeps } from './purchase-deps.js';

export type ClaimDeps = ConsumeDeps & Pick<StepDeps, 'startingCredits' | 'background'>;

export type ClaimResult = ClaimOutcome | { readonly status: 'not_yours' };

/** Claims the pack for `guildId` (`actorId`: the member who chose it); a pack in a server and not consumed is consumed in the background. */
export async function claimPackFor(deps: ClaimDeps, input: { readonly entitlementId: string; readonly guildId: string; readonly actorId?: string }): Promise<ClaimOutcome> {
  const { entitlementId, guildId, actorId } = input;
  const { logger } = deps;
  const outcome = await claimPack(deps.db, { entitlementId, guildId, startingCredits: deps.startingCredits, now: deps.now(), ...(actorId && { actorId }) });
  if (outcome.status === 'claimed') logger.info({ entitlementId, guildId: outcome.guildId, credits: outcome.credits }, 'credit pack added');
  if (outcome.status === 'claimed' || outcome.status === 'already') {
    const current = await findEntitlement(deps.db, entitlementId);
    if (current && !current.consumedAt) deps.background(consumePack(deps, entitlementId).catch((err: unknown) => logger.error({ err, entitlementId }, 'consuming an entitlement failed')));
  }
  return outcome;
}

/** The buyer's own claim of their pack for `guildId` (one click in `/credits`); another member's pack is refused. */
export async function claimOwnPack(deps: ClaimDeps, input: { readonly entitlementId: string; readonly userId: string; readonly guildId: string }): Promise<ClaimResult> {
  const pack = await findEntitlement(deps.db, input.entitlementId);
  if (!pack || pack.kind !== 'pack') return { status: 'unknown' };
  if (pack.userId !== input.userId) return { status: 'not_yours' };
  return claimPackFor(deps, { entitlementId: input.entitlementId, guildId: input.guildId, actorId: input.userId });
}
