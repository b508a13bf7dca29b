/** What the purchase tests sell: the emulator's SKUs, and the bot's settings for them. */
export const PACK = '1300000000000000001';
export const PLAN = '1300000000000000003';
/** Sold in Discord, but not by this bot's configuration. */
export const STRAY = '1300000000000000004';

export const PURCHASE_SKUS = [
  { id: PACK, name: '100 credits', type: 'consumable' as const },
  { id: PLAN, name: 'Server plan', type: 'subscription' as const },
  { id: STRAY, name: 'Something else', type: 'consumable' as const },
];
export const PURCHASE_ENV = { CREDIT_PACKS: `${PACK}:100`, SUBSCRIPTION_ALLOWANCES: `${PLAN}:500` };
