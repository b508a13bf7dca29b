/**
 * The rows of Discord purchases outside a credit movement: recording an entitlement as Discord
 * confirms it, marking a pack consumed, the reads the sweep and a member's commands make, and
 * where a member was shown a Buy button. The movements themselves (a claim, a refund, a
 * subscription's allowance) are purchase-credits.ts and allowance.ts, in the ledger's transactions.
 */
import { and, eq, gte, isNotNull, isNull, lte, sql } from 'drizzle-orm';
import { constants, type Executor } from '../db/client.js';
import { entitlements, guilds, premiumOffers, type EntitlementKind } from '../db/schema.js';
import type { EntitlementRow } from './purchase-credits.js';

/** An entitlement as Discord confirmed it, with what the bot decided of it. */
export interface EntitlementFacts {
  readonly id: string;
  readonly skuId: string;
  readonly kind: EntitlementKind;
  /** Discord's entitlement type (1 purchase, 8 app subscription, …). */
  readonly type: number;
  readonly userId: string | null;
  /** A pack's credits, or a subscription's monthly allowance, as configured now. */
  readonly credits: number;
  /** The subscribed server; a pack's is set only when it is claimed. */
  readonly guildId: string | null;
  /** A pack's server unless its buyer picks another in time. */
  readonly defaultGuildId: string | null;
  readonly startsAt: Date | null;
  readonly endsAt: Date | null;
  /** Set when the entitlement is first seen already refunded. */
  readonly deletedAt: Date | null;
}

export async function findEntitlement(executor: Executor, entitlementId: string): Promise<EntitlementRow | undefined> {
  const [found] = await executor.select().from(entitlements).where(eq(entitlements.id, entitlementId));
  return found;
}

/**
 * Records the entitlement once. Seen again, only a live subscription's start and end change
 * (the one thing Discord changes on a live entitlement); a refunded row stays as it is.
 */
export async function recordEntitlement(executor: Executor, facts: EntitlementFacts): Promise<void> {
  await executor
    .insert(entitlements)
    .values({ ...facts, guildId: facts.kind === 'subscription' ? facts.guildId : null })
    .onConflictDoUpdate({ target: entitlements.id, set: { startsAt: facts.startsAt, endsAt: facts.endsAt, updatedAt: sql`now()` }, where: sql`${entitlements.deletedAt} is null` });
}

/** Notes that Discord took the pack's consume; a pack marked before keeps its first time. */
export async function markConsumed(executor: Executor, entitlementId: string, at: Date): Promise<void> {
  await executor.update(entitlements).set({ consumedAt: at, updatedAt: sql`now()` }).where(and(eq(entitlements.id, entitlementId), isNull(entitlements.consumedAt)));
}

/** Packs not yet in a server whose wait ended (first seen at or before `seenBy`), with their default server, oldest first. */
export async function packsDueForDefault(executor: Executor, seenBy: Date): Promise<Array<{ readonly id: string; readonly guildId: string }>> {
  const rows = await executor
    .select({ id: entitlements.id, guildId: entitlements.defaultGuildId })
    .from(entitlements)
    .where(and(constants(entitlements.kind, ['pack']), isNull(entitlements.claimedAt), isNull(entitlements.deletedAt), isNotNull(entitlements.defaultGuildId), lte(entitlements.createdAt, seenBy)))
    .orderBy(entitlements.createdAt);
  return rows.map((row) => ({ id: row.id, guildId: row.guildId! }));
}

/** Packs in a server, not refunded, that Discord has not consumed yet, claimed first first. */
export async function unconsumedPacks(executor: Executor): Promise<string[]> {
  const rows = await executor
    .select({ id: entitlements.id })
    .from(entitlements)
    .where(and(constants(entitlements.kind, ['pack']), isNotNull(entitlements.claimedAt), isNull(entitlements.consumedAt), isNull(entitlements.deletedAt)))
    .orderBy(entitlements.claimedAt);
  return rows.map((row) => row.id);
}

/** Guilds whose subscription allowance still counts a subscription that ended at or before `at`. */
export async function guildsWithEndedSubscriptions(executor: Executor, at: Date): Promise<string[]> {
  const rows = await executor
    .selectDistinct({ id: guilds.id })
    .from(entitlements)
    .innerJoin(guilds, eq(guilds.id, entitlements.guildId))
    .where(and(eq(entitlements.kind, 'subscription'), lte(entitlements.endsAt, at), sql`${guilds.subscriptionAllowance} > 0`));
  return rows.map((row) => row.id);
}

/** The member's packs not yet in any server, oldest first; with `defaultGuildId`, only those waiting for that server. */
export async function unclaimedPacksOf(executor: Executor, userId: string, defaultGuildId?: string): Promise<EntitlementRow[]> {
  return executor
    .select()
    .from(entitlements)
    .where(
      and(
        eq(entitlements.userId, userId),
        constants(entitlements.kind, ['pack']),
        isNull(entitlements.claimedAt),
        isNull(entitlements.deletedAt),
        ...(defaultGuildId === undefined ? [] : [eq(entitlements.defaultGuildId, defaultGuildId)]),
      ),
    )
    .orderBy(entitlements.createdAt);
}

/** Remembers that the member was shown a Buy button in the server at `at`, in their language (one per member: the latest). */
export async function recordOffer(executor: Executor, input: { readonly userId: string; readonly guildId: string; readonly at: Date; readonly locale?: string }): Promise<void> {
  const locale = input.locale ?? null;
  await executor
    .insert(premiumOffers)
    .values({ userId: input.userId, guildId: input.guildId, shownAt: input.at, locale })
    .onConflictDoUpdate({ target: premiumOffers.userId, set: { guildId: input.guildId, shownAt: input.at, locale } });
}

/** The member's language when last shown a Buy button, if the bot knows it. */
export async function offerLocale(executor: Executor, userId: string): Promise<string | null> {
  const [offer] = await executor.select({ locale: premiumOffers.locale }).from(premiumOffers).where(eq(premiumOffers.userId, userId));
  return offer?.locale ?? null;
}

/**
 * Takes the telling of the buyer what the entitlement added: true for the one caller that
 * takes it, whichever process or path saw the entitlement; false ever after.
 */
export async function takeBuyerNotice(executor: Executor, entitlementId: string, at: Date): Promise<boolean> {
  const taken = await executor
    .update(entitlements)
    .set({ buyerToldAt: at })
    .where(and(eq(entitlements.id, entitlementId), isNull(entitlements.buyerToldAt)))
    .returning({ id: entitlements.id });
  return taken.length > 0;
}

/** The server the member was last shown a Buy button in, if that was at or after `since`. */
export async function offeredGuild(executor: Executor, userId: string, since: Date): Promise<string | null> {
  const [offer] = await executor
    .select({ guildId: premiumOffers.guildId })
    .from(premiumOffers)
    .where(and(eq(premiumOffers.userId, userId), gte(premiumOffers.shownAt, since)));
  return offer?.guildId ?? null;
}
