/**
 * What the purchase steps are given, and the words they share. Each step takes the few of
 * `StepDeps` it uses (a `Pick`); `createPurchases` (purchases.ts) builds them once.
 */
import type { Database } from '../db/client.js';
import type { BuyerMessages } from '../discord-rest/buyer-messages.js';
import type { EntitlementRecord, EntitlementsApi } from '../discord-rest/entitlements-api.js';
import type { Logger } from '../logger.js';
import type { Queues } from '../queue/queues.js';
import type { Catalog } from './catalog.js';

export interface PurchasesDeps {
  readonly db: Database;
  readonly api: EntitlementsApi;
  readonly catalog: Catalog;
  readonly logger: Logger;
  readonly applicationId: string;
  /** A server claimed for before it used the bot starts with these, as on its first use. */
  readonly startingCredits: number;
  /** How long a pack waits for its buyer to pick a server before it goes to the default one; 0: at once. */
  readonly packClaimMinutes: number;
  readonly now?: () => Date;
  /** Where a consume Discord did not take is tried again (a delayed queue entry); without it, the minute sweep takes it. */
  readonly consumeRetries?: Pick<Queues, 'retryConsume'>;
  /** Where a buyer is told by direct message what their purchase added; without it, only their interactions tell them. */
  readonly buyerMessages?: BuyerMessages;
}

export interface StepDeps extends Omit<PurchasesDeps, 'now'> {
  readonly now: () => Date;
  /** Takes work a step starts and does not wait for (a pack's consume), so a stopping process can wait for it. */
  readonly background: (work: Promise<unknown>) => void;
}

/** How an entitlement reached the bot; all but the listing are confirmed through REST first. */
export type EntitlementSource = 'gateway' | 'webhook' | 'interaction' | 'listing';

/** What an event or a payload says of an entitlement: only its id, application and SKU are read before REST confirms it. */
export type EntitlementNotice = Pick<EntitlementRecord, 'id' | 'sku_id' | 'application_id'> & Partial<EntitlementRecord>;
