/**
 * A pack goes into a server: its credits through the ledger under the entitlement's id, then
 * its consume and the buyer's notice, neither waited for (a member's command must not wait on Discord).
 */
import { claimPack, findEntitlement, type ClaimOutcome } from '../credits/index.js';
import { consumePack, type ConsumeDeps } from './consume-pack.js';
import type { StepDeps } from './purchase-deps.js';
import { takeNotice, tellBuyer, type PurchaseAdded } from './tell-buyer.js';

export type ClaimDeps = ConsumeDeps & Pick<StepDeps, 'startingCredits' | 'background' | 'buyerMessages'>;

export type ClaimResult = ClaimOutcome | { readonly status: 'not_yours' };

/**
 * Claims the pack for `guildId` (`actorId`: the member who chose it); a pack in a server and not
 * consumed is consumed in the background. The buyer is told by direct message, unless `told`:
 * the caller's interaction tells them (it takes the notice first, see {@link claimPackHere}).
 */
export async function claimPackFor(deps: ClaimDeps, input: { readonly entitlementId: string; readonly guildId: string; readonly actorId?: string; readonly told?: boolean }): Promise<ClaimOutcome> {
  const { entitlementId, guildId, actorId } = input;
  const { logger } = deps;
  const outcome = await claimPack(deps.db, { entitlementId, guildId, startingCredits: deps.startingCredits, now: deps.now(), ...(actorId && { actorId }) });
  if (outcome.status === 'claimed') logger.info({ entitlementId, guildId: outcome.guildId, credits: outcome.credits }, 'credit pack added');
  if (outcome.status === 'claimed' || outcome.status === 'already') {
    const current = await findEntitlement(deps.db, entitlementId);
    if (current && !current.consumedAt) deps.background(consumePack(deps, entitlementId).catch((err: unknown) => logger.error({ err, entitlementId }, 'consuming an entitlement failed')));
    if (outcome.status === 'claimed' && current?.userId && !input.told) deps.background(tellBuyer(deps, packAdded(entitlementId, current.userId, outcome)));
  }
  return outcome;
}

/**
 * Claims the pack for the server of the buyer's own interaction, which tells them: what it
 * added, when this call put it in and took its notice.
 */
export async function claimPackHere(deps: ClaimDeps, input: { readonly entitlementId: string; readonly userId: string; readonly guildId: string; readonly actorId?: string }): Promise<{ readonly outcome: ClaimOutcome; readonly added?: PurchaseAdded }> {
  const outcome = await claimPackFor(deps, { ...input, told: true });
  if (outcome.status !== 'claimed' || !(await takeNotice(deps, input.entitlementId))) return { outcome };
  return { outcome, added: packAdded(input.entitlementId, input.userId, outcome) };
}

function packAdded(entitlementId: string, userId: string, outcome: Extract<ClaimOutcome, { status: 'claimed' }>): PurchaseAdded {
  return { entitlementId, userId, kind: 'pack', guildId: outcome.guildId, credits: outcome.credits, balance: outcome.balance };
}

/** The buyer's own claim of their pack for `guildId` (one click in `/credits`); another member's pack is refused. */
export async function claimOwnPack(deps: ClaimDeps, input: { readonly entitlementId: string; readonly userId: string; readonly guildId: string }): Promise<ClaimResult> {
  const pack = await findEntitlement(deps.db, input.entitlementId);
  if (!pack || pack.kind !== 'pack') return { status: 'unknown' };
  if (pack.userId !== input.userId) return { status: 'not_yours' };
  // The answer to the buyer's click says what went in: it is their notice.
  return (await claimPackHere(deps, { ...input, actorId: input.userId })).outcome;
}
