/** Writes an entitlement Discord confirmed as a purchase row, once (credits/purchase-rows.ts). */
import { recordEntitlement, type EntitlementRow } from '../credits/index.js';
import type { EntitlementRecord } from '../discord-rest/entitlements-api.js';
import type { StepDeps } from './purchase-deps.js';

export interface PurchaseTerms {
  readonly kind: EntitlementRow['kind'];
  /** A pack's credits or a subscription's monthly allowance, as the catalog says now. */
  readonly credits: number;
  /** A pack's server unless its buyer picks another in time. */
  readonly defaultGuildId: string | null;
  /** Set for an entitlement first seen refunded already. */
  readonly deletedAt: Date | null;
}

export async function recordPurchase(deps: Pick<StepDeps, 'db'>, entitlement: EntitlementRecord, terms: PurchaseTerms): Promise<void> {
  await recordEntitlement(deps.db, {
    id: entitlement.id,
    skuId: entitlement.sku_id,
    kind: terms.kind,
    type: entitlement.type,
    userId: entitlement.user_id ?? null,
    credits: terms.credits,
    guildId: entitlement.guild_id ?? null,
    defaultGuildId: terms.defaultGuildId,
    startsAt: entitlement.starts_at ? new Date(entitlement.starts_at) : null,
    endsAt: entitlement.ends_at ? new Date(entitlement.ends_at) : null,
    deletedAt: terms.deletedAt,
  });
}
