/** discord.js's Entitlement as the few fields `Premium.receive` reads before REST confirms it. */
import type { Entitlement } from 'discord.js';
import type { EntitlementNotice } from '../premium/entitlements.js';

export function entitlementNotice(entitlement: Entitlement): EntitlementNotice {
  return {
    id: entitlement.id,
    sku_id: entitlement.skuId,
    application_id: entitlement.applicationId,
    ...(entitlement.userId && { user_id: entitlement.userId }),
    ...(entitlement.guildId && { guild_id: entitlement.guildId }),
    consumed: entitlement.consumed,
  };
}
