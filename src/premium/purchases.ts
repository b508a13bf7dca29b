/**
 * Purchases through Discord, exactly once, as one object for the layers that hold it (the
 * command context, the pipeline's maintenance, the gateway and webhook events). Each method is
 * one step in its own file; this keeps the work in hand so a stopping process can wait for it.
 */
import { recordOffer, unclaimedPacksOf, type EntitlementRow } from '../credits/index.js';
import type { Catalog } from './catalog.js';
import { claimOwnPack, type ClaimResult } from './claim-pack.js';
import { consumePackAgain } from './consume-pack.js';
import { noteInteractionEntitlements } from './note-interaction.js';
import type { EntitlementNotice, EntitlementSource, PurchasesDeps, StepDeps } from './purchase-deps.js';
import { receiveEntitlement, type ReceiveOutcome } from './receive-entitlement.js';
import { reconcileEntitlements } from './reconcile-entitlements.js';
import { sweepEntitlements, type SweepResult } from './sweep-entitlements.js';
import { tellBuyerDirectly, type PurchaseAdded } from './tell-buyer.js';

export type { ClaimResult } from './claim-pack.js';
export type { EntitlementNotice, EntitlementSource, PurchasesDeps } from './purchase-deps.js';
export type { ReceiveOutcome } from './receive-entitlement.js';
export type { SweepResult } from './sweep-entitlements.js';
export { purchaseNotice, type PurchaseAdded } from './tell-buyer.js';

export interface Purchases {
  readonly catalog: Catalog;
  /** Records an entitlement Discord confirms and moves its credits, once (receive-entitlement.ts). */
  receive(notice: EntitlementNotice, source: EntitlementSource): Promise<ReceiveOutcome>;
  /** The buyer's own claim of a pack for `guildId` (one click in `/credits`). */
  claim(input: { entitlementId: string; userId: string; guildId: string }): Promise<ClaimResult>;
  /**
   * An interaction's `entitlements`: unseen ones are received, and the member's packs waiting for
   * this server go in. Returns what went in, whose notice is the caller's to give the buyer.
   */
  noteInteraction(input: { userId: string; guildId: string; entitlements: readonly EntitlementNotice[] }): Promise<PurchaseAdded[]>;
  /** Tells the buyer by direct message what went in, when their interaction could not (the notice is taken already). */
  tellDirectly(added: PurchaseAdded): Promise<void>;
  /** Remembers that the member was shown a Buy button in this server (in `locale`, their language): a pack they buy goes there. */
  recordOffer(userId: string, guildId: string, locale?: string): Promise<void>;
  /** The member's packs not yet in any server, oldest first. */
  unclaimedPacks(userId: string): Promise<EntitlementRow[]>;
  /** Packs whose wait is over go to their default server; unconsumed packs are consumed; ended subscriptions stop. */
  sweep(): Promise<SweepResult>;
  /** Lists every entitlement of the SKUs sold and receives each, then sweeps: purchases whose events never came are caught. */
  reconcile(): Promise<{ readonly listed: number; readonly sweep: SweepResult }>;
  /** One attempt of a consume the queue retries (consume-retries.ts): throws while Discord has not taken it. */
  consumeAgain(entitlementId: string): Promise<void>;
  /** Waits for the work in hand (a stopping process). */
  stop(): Promise<void>;
}

export function createPurchases(deps: PurchasesDeps): Purchases {
  const inFlight = new Set<Promise<unknown>>();
  const track = <T>(work: Promise<T>): Promise<T> => {
    inFlight.add(work);
    void work.finally(() => inFlight.delete(work)).catch(() => undefined);
    return work;
  };
  const steps: StepDeps = { ...deps, now: deps.now ?? (() => new Date()), background: (work) => void track(work) };

  return {
    catalog: deps.catalog,
    receive: (notice, source) => track(receiveEntitlement(steps, notice, source)),
    claim: (input) => track(claimOwnPack(steps, input)),
    noteInteraction: (input) => track(noteInteractionEntitlements(steps, input)),
    tellDirectly: (added) => track(tellBuyerDirectly(steps, added)),
    recordOffer: (userId, guildId, locale) => recordOffer(deps.db, { userId, guildId, at: steps.now(), ...(locale && { locale }) }),
    unclaimedPacks: (userId) => unclaimedPacksOf(deps.db, userId),
    sweep: () => track(sweepEntitlements(steps)),
    reconcile: () => track(reconcileEntitlements(steps)),
    consumeAgain: (entitlementId) => track(consumePackAgain(steps, entitlementId)),
    async stop() {
      await Promise.allSettled([...inFlight]);
    },
  };
}
