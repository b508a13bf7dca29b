/** The purchase steps' dependencies for one test file: the emulator as Discord, the file's database, work in the background collected. */
import { like } from 'drizzle-orm';
import type { DiscordEmulator } from '@music-bot/discord-emulator';
import type { Executor } from '../../../src/db/client.js';
import { creditLedger } from '../../../src/db/schema.js';
import { createEntitlementsApi } from '../../../src/discord-rest/entitlements-api.js';
import { silentLogger } from '../../../src/logger.js';
import { createCatalog } from '../../../src/premium/catalog.js';
import type { PurchasesDeps, StepDeps } from '../../../src/premium/purchase-deps.js';

export const PACK = '2100000000000000001';
export const PLAN = '2100000000000000002';
/** A second plan of the same allowance, for a server that subscribes twice. */
export const OTHER_PLAN = '2100000000000000004';
/** A SKU of the application the bot does not sell. */
export const STRAY = '2100000000000000003';
export const SKUS = [
  { id: PACK, name: '100 credits', type: 'consumable' as const },
  { id: PLAN, name: 'Server plan', type: 'subscription' as const },
  { id: STRAY, name: 'Not sold by the bot', type: 'consumable' as const },
  { id: OTHER_PLAN, name: 'Server plan, second', type: 'subscription' as const },
];

export interface TestSteps extends StepDeps {
  /** Waits for the work the steps started and did not wait for (a pack's consume). */
  settled(): Promise<void>;
}

export function stepsFor(db: PurchasesDeps['db'], emulator: DiscordEmulator, overrides: Partial<StepDeps> = {}): TestSteps {
  const background: Array<Promise<unknown>> = [];
  return {
    db,
    api: createEntitlementsApi({ apiUrl: emulator.apiUrl, token: emulator.botToken, applicationId: emulator.applicationId }),
    catalog: createCatalog({ creditPacks: [{ skuId: PACK, credits: 100 }], subscriptionAllowances: [{ skuId: PLAN, credits: 300 }, { skuId: OTHER_PLAN, credits: 300 }] }),
    logger: silentLogger,
    applicationId: emulator.applicationId,
    startingCredits: 0,
    packClaimMinutes: 0,
    now: () => new Date(),
    background: (work) => void background.push(work),
    ...overrides,
    async settled() {
      await Promise.allSettled(background);
    },
  };
}

/** The ledger's movements under the entitlement's keys (a pack's, a subscription month's, a refund's). */
export async function movementsOf(db: Executor, entitlementId: string) {
  return db
    .select({ guildId: creditLedger.guildId, key: creditLedger.key, kind: creditLedger.kind, amount: creditLedger.amount })
    .from(creditLedger)
    .where(like(creditLedger.key, `entitlement:${entitlementId}%`))
    .orderBy(creditLedger.id);
}
