/**
 * Where every path that brings an entitlement ends (gateway event, webhook event, an
 * interaction's payload, the listing): only Discord's REST answer is trusted, the purchase is
 * recorded once, and its credits move through the ledger under the entitlement's id.
 */
import { findEntitlement, startSubscription } from '../credits/index.js';
import type { EntitlementRecord } from '../discord-rest/entitlements-api.js';
import { claimPackFor } from './claim-pack.js';
import { consumePack } from './consume-pack.js';
import { defaultGuildFor } from './default-guild.js';
import type { EntitlementNotice, EntitlementSource, StepDeps } from './purchase-deps.js';
import { recordPurchase } from './record-purchase.js';
import { refundEntitlement } from './refund-entitlement.js';
import { subscriptionAdded, tellBuyerDirectly } from './tell-buyer.js';

export type ReceiveOutcome = 'recorded' | 'refunded' | 'foreign_application' | 'unknown_sku' | 'unconfirmed' | 'no_guild';

/**
 * Records the entitlement and moves its credits: a pack into the server its buyer was offered it
 * in (at once when `packClaimMinutes` is 0), a subscription's allowance into its server. A
 * refunded one is reversed; one Discord does not confirm, sells not, or made for another
 * application records nothing.
 */
export async function receiveEntitlement(deps: StepDeps, notice: EntitlementNotice, source: EntitlementSource): Promise<ReceiveOutcome> {
  const { db, catalog, applicationId } = deps;
  const log = deps.logger.child({ entitlementId: notice.id, skuId: notice.sku_id, source });
  log.debug('entitlement received');
  if (notice.application_id !== applicationId) {
    log.warn({ applicationId: notice.application_id }, 'entitlement of another application refused');
    return 'foreign_application';
  }
  if (!catalog.of(notice.sku_id)) {
    log.warn('entitlement for a SKU the bot does not sell ignored (not in CREDIT_PACKS or SUBSCRIPTION_ALLOWANCES)');
    return 'unknown_sku';
  }
  // Only Discord's own record is trusted: an event or a payload could be forged or stale.
  const confirmed = source === 'listing' ? (notice as EntitlementRecord) : await deps.api.get(notice.id);
  const known = await findEntitlement(db, notice.id);
  // Gone at Discord (unconfirmed, or deleted: refunded) after it was recorded here: reversed once.
  const reverseKnown = async () => {
    if (!known || known.deletedAt) return false;
    await refundEntitlement(deps, known.id, log);
    return true;
  };
  if (!confirmed) {
    if (await reverseKnown()) return 'refunded';
    log.warn('entitlement Discord does not confirm ignored');
    return 'unconfirmed';
  }
  const product = catalog.of(confirmed.sku_id);
  if (confirmed.application_id !== applicationId || !product) {
    log.warn({ applicationId: confirmed.application_id }, 'entitlement Discord confirms for another application or SKU refused');
    return confirmed.application_id !== applicationId ? 'foreign_application' : 'unknown_sku';
  }
  if (confirmed.deleted) {
    if (await reverseKnown()) return 'refunded';
    if (!known) await recordPurchase(deps, confirmed, { kind: product.kind, credits: product.credits, defaultGuildId: null, deletedAt: deps.now() });
    return 'refunded';
  }
  if (product.kind === 'subscription' && !confirmed.guild_id) {
    log.warn('subscription without a server ignored: SUBSCRIPTION_ALLOWANCES takes guild subscription SKUs');
    return 'no_guild';
  }

  const at = deps.now();
  const defaultGuildId = product.kind === 'pack' ? (confirmed.guild_id ?? (await defaultGuildFor(deps, confirmed.user_id, at))) : null;
  await recordPurchase(deps, confirmed, { kind: product.kind, credits: product.credits, defaultGuildId, deletedAt: null });
  const current = (await findEntitlement(db, confirmed.id))!;
  if (!known) log.info({ userId: current.userId, guildId: current.guildId ?? current.defaultGuildId, credits: current.credits, kind: current.kind }, 'purchase recorded');

  if (current.kind === 'pack') {
    if (current.claimedAt) {
      if (!current.consumedAt) deps.background(consumePack(deps, current.id).catch((err: unknown) => log.error({ err }, 'consuming an entitlement failed')));
    } else if (current.defaultGuildId && deps.packClaimMinutes === 0) {
      await claimPackFor(deps, { entitlementId: current.id, guildId: current.defaultGuildId });
    }
  } else {
    // A subscription first seen is a purchase: its buyer hears of it once, from the start that
    // took the notice with its credits (of two deliveries at once, the one that added them).
    const takeNotice = !known && current.userId !== null && deps.buyerMessages !== undefined;
    const started = await startSubscription(db, { entitlementId: current.id, startingCredits: deps.startingCredits, now: at, takeNotice });
    if (started.amount > 0) log.info({ guildId: started.guildId, credits: started.amount }, 'subscription allowance given');
    if (started.noticeTaken && started.guildId && current.userId) {
      const added = await subscriptionAdded(deps, { entitlementId: current.id, userId: current.userId, guildId: started.guildId, credits: started.amount, allowance: current.credits });
      deps.background(tellBuyerDirectly(deps, added));
    }
  }
  return 'recorded';
}
