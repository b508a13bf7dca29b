/**
 * Purchases through Discord, exactly once. Every path that brings an entitlement (gateway
 * event, webhook event, an interaction's payload, the hourly listing) ends in `receive`, which
 * trusts only what Discord's REST answers, records the entitlement once, and moves its credits
 * through the ledger under the entitlement's id. A pack is consumed after its credits are in;
 * a consume that fails is retried from the queue (consume-retries.ts), then by every sweep
 * until Discord takes it.
 */
import {
  claimPack,
  findEntitlement,
  guildsWithEndedSubscriptions,
  markConsumed,
  offeredGuild,
  packsDueForDefault,
  recordEntitlement,
  recordOffer,
  refreshSubscriptionAllowance,
  reverseEntitlement,
  startSubscription,
  unclaimedPacksOf,
  unconsumedPacks,
  type ClaimOutcome,
  type EntitlementRow,
} from '../credits/index.js';
import type { Database } from '../db/client.js';
import type { Queues } from '../queue/queues.js';
import type { Logger } from '../logger.js';
import type { Catalog } from './catalog.js';
import type { EntitlementRecord, EntitlementsApi } from '../discord-rest/entitlements-api.js';

/** How an entitlement reached the bot; all but the listing are confirmed through REST first. */
export type EntitlementSource = 'gateway' | 'webhook' | 'interaction' | 'listing';

/** What an event or a payload says of an entitlement: only its id, application and SKU are read before REST confirms it. */
export type EntitlementNotice = Pick<EntitlementRecord, 'id' | 'sku_id' | 'application_id'> & Partial<EntitlementRecord>;

export type ReceiveOutcome =
  | 'recorded'
  | 'refunded'
  | 'foreign_application'
  | 'unknown_sku'
  | 'unconfirmed'
  | 'no_guild';

/** How long an offer names the server a bought pack goes to. */
export const OFFER_VALID_MS = 24 * 60 * 60_000;
const LIST_PAGE = 100;

export interface PremiumDeps {
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
}

export type ClaimResult = ClaimOutcome | { readonly status: 'not_yours' };

export interface SweepResult {
  readonly claimed: number;
  readonly consumed: number;
}

export interface Premium {
  readonly catalog: Catalog;
  receive(notice: EntitlementNotice, source: EntitlementSource): Promise<ReceiveOutcome>;
  /** The buyer's own claim of a pack for `guildId` (one click in `/credits`). */
  claim(input: { entitlementId: string; userId: string; guildId: string }): Promise<ClaimResult>;
  /** An interaction's `entitlements`: unseen ones are received, and the member's packs waiting for this server go in. */
  noteInteraction(input: { userId: string; guildId: string; entitlements: readonly EntitlementNotice[] }): Promise<void>;
  /** Remembers that the member was shown a Buy button in this server: a pack they buy goes there. */
  recordOffer(userId: string, guildId: string): Promise<void>;
  /** The member's packs not yet in any server, oldest first. */
  unclaimedPacks(userId: string): Promise<EntitlementRow[]>;
  /** Packs whose wait is over go to their default server; unconsumed packs are consumed; ended subscriptions stop. */
  sweep(): Promise<SweepResult>;
  /** Lists every entitlement of the SKUs sold and receives each, then sweeps: purchases whose events never came are caught. */
  reconcile(): Promise<{ readonly listed: number; readonly sweep: SweepResult }>;
  /** One attempt of a consume the queue retries (consume-retries.ts): throws while Discord has not taken it. */
  consumeAgain(entitlementId: string): Promise<void>;
  /** Waits for the consumes in hand (a stopping process). */
  stop(): Promise<void>;
}

export function createPremium(deps: PremiumDeps): Premium {
  const { db, api, catalog, logger } = deps;
  const now = deps.now ?? (() => new Date());
  const inFlight = new Set<Promise<unknown>>();

  const track = <T>(work: Promise<T>): Promise<T> => {
    inFlight.add(work);
    void work.finally(() => inFlight.delete(work)).catch(() => undefined);
    return work;
  };

  const row = (id: string): Promise<EntitlementRow | undefined> => findEntitlement(db, id);

  async function defaultGuildFor(userId: string | undefined, at: Date): Promise<string | null> {
    if (!userId) return null;
    return offeredGuild(db, userId, new Date(at.getTime() - OFFER_VALID_MS));
  }

  /**
   * Marks the pack consumed once Discord says so. A first attempt that fails is retried from the
   * queue (`retry`), then by every sweep.
   */
  async function consume(entitlementId: string, retry = true): Promise<boolean> {
    try {
      await api.consume(entitlementId);
    } catch (error) {
      // Consumed already (by another process, or before a crash): Discord's record says so.
      const confirmed = await api.get(entitlementId).catch(() => undefined);
      if (!confirmed?.consumed) {
        logger.warn({ entitlementId, err: error }, 'consuming an entitlement failed; it will be retried');
        if (retry && deps.consumeRetries) {
          await deps.consumeRetries.retryConsume(entitlementId).catch((err: unknown) => logger.warn({ err, entitlementId }, 'could not queue the retry of a consume; the sweep takes it'));
        }
        return false;
      }
    }
    await markConsumed(db, entitlementId, now());
    logger.info({ entitlementId }, 'entitlement consumed');
    return true;
  }

  async function claimFor(entitlementId: string, guildId: string, actorId?: string): Promise<ClaimOutcome> {
    const outcome = await claimPack(db, { entitlementId, guildId, startingCredits: deps.startingCredits, now: now(), ...(actorId && { actorId }) });
    if (outcome.status === 'claimed') logger.info({ entitlementId, guildId: outcome.guildId, credits: outcome.credits }, 'credit pack added');
    if (outcome.status === 'claimed' || outcome.status === 'already') {
      const current = await row(entitlementId);
      // Not waited for: a member's command must not wait on Discord's consume (the queue and the sweep retry it).
      if (current && !current.consumedAt) void track(consume(entitlementId)).catch((err: unknown) => logger.error({ err, entitlementId }, 'consuming an entitlement failed'));
    }
    return outcome;
  }

  async function receive(notice: EntitlementNotice, source: EntitlementSource): Promise<ReceiveOutcome> {
    const log = logger.child({ entitlementId: notice.id, skuId: notice.sku_id, source });
    log.debug('entitlement received');
    if (notice.application_id !== deps.applicationId) {
      log.warn({ applicationId: notice.application_id }, 'entitlement of another application refused');
      return 'foreign_application';
    }
    if (!catalog.of(notice.sku_id)) {
      log.warn('entitlement for a SKU the bot does not sell ignored (not in CREDIT_PACKS or SUBSCRIPTION_ALLOWANCES)');
      return 'unknown_sku';
    }
    // Only Discord's own record is trusted: an event or a payload could be forged or stale.
    const confirmed = source === 'listing' ? (notice as EntitlementRecord) : await api.get(notice.id);
    const known = await row(notice.id);
    if (!confirmed) {
      if (known && !known.deletedAt) return refund(known.id, log);
      log.warn('entitlement Discord does not confirm ignored');
      return 'unconfirmed';
    }
    const product = catalog.of(confirmed.sku_id);
    if (confirmed.application_id !== deps.applicationId || !product) {
      log.warn({ applicationId: confirmed.application_id }, 'entitlement Discord confirms for another application or SKU refused');
      return confirmed.application_id !== deps.applicationId ? 'foreign_application' : 'unknown_sku';
    }
    if (confirmed.deleted) {
      if (known && !known.deletedAt) return refund(known.id, log);
      if (!known) await insert(confirmed, product.kind, product.credits, null, now());
      return 'refunded';
    }
    if (product.kind === 'subscription' && !confirmed.guild_id) {
      log.warn('subscription without a server ignored: SUBSCRIPTION_ALLOWANCES takes guild subscription SKUs');
      return 'no_guild';
    }

    const at = now();
    const defaultGuildId = product.kind === 'pack' ? (confirmed.guild_id ?? (await defaultGuildFor(confirmed.user_id, at))) : null;
    await insert(confirmed, product.kind, product.credits, defaultGuildId, null);
    const current = (await row(confirmed.id))!;
    if (!known) log.info({ userId: current.userId, guildId: current.guildId ?? current.defaultGuildId, credits: current.credits, kind: current.kind }, 'purchase recorded');

    if (current.kind === 'pack') {
      if (current.claimedAt) {
        if (!current.consumedAt) void track(consume(current.id)).catch((err: unknown) => log.error({ err }, 'consuming an entitlement failed'));
      } else if (current.defaultGuildId && deps.packClaimMinutes === 0) {
        await claimFor(current.id, current.defaultGuildId);
      }
    } else {
      const started = await startSubscription(db, { entitlementId: current.id, startingCredits: deps.startingCredits, now: at });
      if (started.amount > 0) log.info({ guildId: started.guildId, credits: started.amount }, 'subscription allowance given');
    }
    return 'recorded';
  }

  async function insert(entitlement: EntitlementRecord, kind: EntitlementRow['kind'], credits: number, defaultGuildId: string | null, deletedAt: Date | null): Promise<void> {
    await recordEntitlement(db, {
      id: entitlement.id,
      skuId: entitlement.sku_id,
      kind,
      type: entitlement.type,
      userId: entitlement.user_id ?? null,
      credits,
      guildId: entitlement.guild_id ?? null,
      defaultGuildId,
      startsAt: entitlement.starts_at ? new Date(entitlement.starts_at) : null,
      endsAt: entitlement.ends_at ? new Date(entitlement.ends_at) : null,
      deletedAt,
    });
  }

  async function refund(entitlementId: string, log: Logger): Promise<ReceiveOutcome> {
    const outcome = await reverseEntitlement(db, { entitlementId, now: now() });
    if (outcome.status === 'reversed') {
      log[outcome.unrecovered > 0 ? 'warn' : 'info'](
        { guildId: outcome.guildId, taken: outcome.taken, unrecovered: outcome.unrecovered },
        outcome.unrecovered > 0 ? 'refund: the balance could not give everything back; recorded for the owners' : 'refund: credits taken back',
      );
    }
    return 'refunded';
  }

  async function sweep(): Promise<SweepResult> {
    const at = now();
    let claimed = 0;
    let consumed = 0;
    const due = await packsDueForDefault(db, new Date(at.getTime() - deps.packClaimMinutes * 60_000));
    for (const pack of due) {
      const outcome = await claimFor(pack.id, pack.guildId).catch((err: unknown) => logger.error({ err, entitlementId: pack.id }, 'claiming a pack failed'));
      if (outcome && outcome.status === 'claimed') claimed += 1;
    }
    for (const id of await unconsumedPacks(db)) if (await consume(id, false)) consumed += 1;
    // Starts, ends told by Discord and refunds refresh the guild's allowance as they come; what
    // is left is a subscription whose end has since passed, on a guild whose allowance counts it still.
    for (const guildId of await guildsWithEndedSubscriptions(db, at)) await refreshSubscriptionAllowance(db, guildId, at);
    return { claimed, consumed };
  }

  return {
    catalog,
    receive: (notice, source) => track(receive(notice, source)),

    async claim({ entitlementId, userId, guildId }) {
      const pack = await row(entitlementId);
      if (!pack || pack.kind !== 'pack') return { status: 'unknown' };
      if (pack.userId !== userId) return { status: 'not_yours' };
      return track(claimFor(entitlementId, guildId, userId));
    },

    async noteInteraction({ userId, guildId, entitlements: held }) {
      const packs = held.filter((entitlement) => catalog.of(entitlement.sku_id)?.kind === 'pack' && !entitlement.consumed);
      if (packs.length === 0) return;
      for (const entitlement of packs) {
        const known = await row(entitlement.id);
        if (!known) await receive(entitlement, 'interaction');
      }
      // The buyer is back in the server they bought for: their packs waiting for it go in now.
      const waiting = await unclaimedPacksOf(db, userId, guildId);
      for (const pack of waiting) await track(claimFor(pack.id, guildId));
    },

    recordOffer: (userId, guildId) => recordOffer(db, { userId, guildId, at: now() }),

    unclaimedPacks: (userId) => unclaimedPacksOf(db, userId),

    sweep: () => track(sweep()),

    reconcile: () =>
      track(
        (async () => {
          const seen = new Set<string>();
          for await (const page of listEntitlements(api, { sku_ids: catalog.skuIds.join(','), exclude_deleted: false }, logger)) {
            for (const entitlement of page) {
              if (seen.has(entitlement.id)) continue;
              seen.add(entitlement.id);
              await receive(entitlement, 'listing').catch((err: unknown) => logger.error({ err, entitlementId: entitlement.id }, 'an entitlement from the listing failed'));
            }
          }
          const listed = seen.size;
          const swept = await sweep();
          logger.info({ listed, ...swept }, 'entitlements reconciled');
          return { listed, sweep: swept };
        })(),
      ),

    async consumeAgain(entitlementId) {
      const pack = await row(entitlementId);
      // Taken already (by the first attempt's twin or the sweep): never consumed twice.
      if (!pack || pack.consumedAt) return;
      if (!(await track(consume(entitlementId, false)))) throw new Error('Discord did not take the consume');
    },

    async stop() {
      await Promise.allSettled([...inFlight]);
    },
  };
}

/**
 * Every entitlement the query matches, a page at a time, whatever order Discord answers in (it
 * documents none for `before` and `after`). The first page, without a cursor, is the newest or
 * the oldest; from there `before` the smallest id seen walks down and `after` the largest walks
 * up, each until a page comes back empty. Why this covers every order: docs/decisions/entitlement-listing.md
 */
export async function* listEntitlements(
  api: Pick<EntitlementsApi, 'list'>,
  query: Omit<Parameters<EntitlementsApi['list']>[0], 'before' | 'after' | 'limit'>,
  logger: Logger,
): AsyncGenerator<EntitlementRecord[]> {
  const first = await api.list({ ...query, limit: LIST_PAGE });
  if (first.length === 0) return;
  yield first;
  const ids = (page: readonly EntitlementRecord[]) => page.map((entitlement) => BigInt(entitlement.id));
  let lowest = ids(first).reduce((a, b) => (b < a ? b : a));
  let highest = ids(first).reduce((a, b) => (b > a ? b : a));
  for (const direction of ['before', 'after'] as const) {
    for (;;) {
      const cursor = direction === 'before' ? lowest : highest;
      const page = await api.list({ ...query, limit: LIST_PAGE, [direction]: String(cursor) });
      // Only ids beyond the cursor move it: a page without one (a cursor ignored) ends this side.
      const beyond = ids(page).filter((id) => (direction === 'before' ? id < cursor : id > cursor));
      if (page.length > 0) yield page;
      if (beyond.length === 0) {
        if (page.length > 0) logger.warn({ direction, cursor: String(cursor) }, 'the entitlement listing answered a page outside its cursor; that side ends here');
        break;
      }
      if (direction === 'before') lowest = beyond.reduce((a, b) => (b < a ? b : a));
      else highest = beyond.reduce((a, b) => (b > a ? b : a));
    }
  }
}
