/**
 * The world of the files that sell credits through Discord (premium, purchase notices): two
 * credit packs and a server plan. Files that start it with these same options share one bot.
 */
import { startBot, type BotHarness } from './harness.js';

export const PACK_SMALL = '1200000000000000001';
export const PACK_LARGE = '1200000000000000002';
export const SUBSCRIPTION = '1200000000000000003';

export function startSellingBot(): Promise<BotHarness> {
  return startBot({
    startingCredits: 5,
    env: { CREDIT_PACKS: `${PACK_SMALL}:100,${PACK_LARGE}:500`, SUBSCRIPTION_ALLOWANCES: `${SUBSCRIPTION}:1000`, PACK_CLAIM_MINUTES: '10' },
    skus: [
      { id: PACK_SMALL, name: '100 credits', type: 'consumable' },
      { id: PACK_LARGE, name: '500 credits', type: 'consumable' },
      { id: SUBSCRIPTION, name: 'Server plan', type: 'subscription' },
    ],
  });
}
