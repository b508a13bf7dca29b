/**
 * The packs an interaction says its member holds: unseen ones are received, and those waiting
 * for this server go in. What went in is returned for the interaction to tell the buyer.
 */
import { findEntitlement, unclaimedPacksOf } from '../credits/index.js';
import { claimPackHere } from './claim-pack.js';
import type { EntitlementNotice, StepDeps } from './purchase-deps.js';
import { receiveEntitlement } from './receive-entitlement.js';
import type { PurchaseAdded } from './tell-buyer.js';

export async function noteInteractionEntitlements(
  deps: StepDeps,
  input: { readonly userId: string; readonly guildId: string; readonly entitlements: readonly EntitlementNotice[] },
): Promise<PurchaseAdded[]> {
  const packs = input.entitlements.filter((entitlement) => deps.catalog.of(entitlement.sku_id)?.kind === 'pack' && !entitlement.consumed);
  if (packs.length === 0) return [];
  for (const entitlement of packs) {
    if (!(await findEntitlement(deps.db, entitlement.id))) await receiveEntitlement(deps, entitlement, 'interaction');
  }
  // The buyer is back in the server they bought for: their packs waiting for it go in now.
  const added: PurchaseAdded[] = [];
  for (const pack of await unclaimedPacksOf(deps.db, input.userId, input.guildId)) {
    const claimed = await claimPackHere(deps, { entitlementId: pack.id, userId: input.userId, guildId: input.guildId });
    if (claimed.added) added.push(claimed.added);
  }
  return added;
}
