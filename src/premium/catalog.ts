/** What the bot sells through Discord: CREDIT_PACKS and SUBSCRIPTION_ALLOWANCES, by SKU. */
import type { Config } from '../config.js';
import type { EntitlementKind } from '../db/schema.js';

export interface Product {
  readonly skuId: string;
  readonly kind: EntitlementKind;
  /** A pack's credits, or a subscription's monthly allowance. */
  readonly credits: number;
}

export interface Catalog {
  /** Packs in the order configured (the order Buy buttons show). */
  readonly packs: readonly Product[];
  readonly subscriptions: readonly Product[];
  /** Every SKU sold, for listing entitlements. */
  readonly skuIds: readonly string[];
  of(skuId: string): Product | undefined;
}

export function createCatalog(config: Pick<Config, 'creditPacks' | 'subscriptionAllowances'>): Catalog {
  const packs = config.creditPacks.map((entry): Product => ({ skuId: entry.skuId, kind: 'pack', credits: entry.credits }));
  const subscriptions = config.subscriptionAllowances.map((entry): Product => ({ skuId: entry.skuId, kind: 'subscription', credits: entry.credits }));
  const bySku = new Map([...packs, ...subscriptions].map((product) => [product.skuId, product]));
  return {
    packs,
    subscriptions,
    skuIds: [...bySku.keys()],
    of: (skuId) => bySku.get(skuId),
  };
}
