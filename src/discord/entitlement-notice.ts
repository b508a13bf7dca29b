/** An entitlement as the few fields `Purchases.receive` reads before REST confirms it. */
import type { InteractionEntitlement } from './interaction-port.js';
import type { EntitlementNotice } from '../premium/purchases.js';

/** From discord.js's Entitlement (the gateway's events) or an interaction's, whichever way it came. */
export function entitlementNotice(entitlement: InteractionEntitlement): EntitlementNotice {
  return {
    id: entitlement.id,
    sku_id: entitlement.skuId,
    application_id: entitlement.applicationId,
    ...(entitlement.userId && { user_id: entitlement.userId }),
    ...(entitlement.guildId && { guild_id: entitlement.guildId }),
    consumed: entitlement.consumed,
  };
}
