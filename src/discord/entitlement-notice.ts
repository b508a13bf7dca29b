/** An entitlement as the few fields `Premium.receive` reads before REST confirms it. */
import type { Entitlement } from 'discord.js';
import type { APIEntitlement } from 'discord-api-types/v10';
import type { EntitlementNotice } from '../premium/entitlements.js';

/** From an interaction payload's `entitlements` (an interaction received over HTTP). */
export function entitlementNoticeOf(entitlement: APIEntitlement): EntitlementNotice {
  return {
    id: entitlement.id,
    sku_id: entitlement.sku_id,
    application_id: entitlement.application_id,
    ...(entitlement.user_id && { user_id: entitlement.user_id }),
    ...(entitlement.guild_id && { guild_id: entitlement.guild_id }),
    consumed: entitlement.consumed,
  };
}

/** From discord.js's Entitlement (the gateway's events and interactions). */
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
