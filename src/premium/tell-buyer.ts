/**
 * Telling the buyer what a purchase added, to which server, and what that server has now: once
 * per entitlement, whichever process or path put the credits in (the notice is taken in the
 * entitlement's row, as its credits are keyed by it). Where the buyer's own interaction put
 * them in, the router tells them in private; otherwise a direct message, in the language they
 * had when shown the Buy buttons. A DM Discord refuses is logged and dropped: nothing here is
 * retried, and nothing here holds up or undoes the credits.
 */
import { getBalance, offerLocale, takeBuyerNotice } from '../credits/index.js';
import type { EntitlementKind } from '../db/schema.js';
import { translator, type Translator } from '../i18n/index.js';
import { escapeMarkdown } from '../text.js';
import type { StepDeps } from './purchase-deps.js';

/** What one purchase added to one server. */
export interface PurchaseAdded {
  readonly entitlementId: string;
  readonly userId: string;
  readonly kind: EntitlementKind;
  readonly guildId: string;
  /** Credits that went in now. */
  readonly credits: number;
  /** A subscription's monthly allowance. */
  readonly allowance?: number;
  /** The server's balance once they went in. */
  readonly balance: number;
}

export type NoticeDeps = Pick<StepDeps, 'db' | 'logger' | 'now' | 'buyerMessages'>;

/** The notice in `t`'s language, naming the server by `server` (markdown, escaped), or as "this server" without it. */
export function purchaseNotice(t: Translator, added: PurchaseAdded, server?: string): string {
  if (added.kind === 'subscription') {
    return t('purchase.planStarted', { server: server ?? t('purchase.someServer'), allowance: added.allowance ?? 0, added: added.credits, balance: added.balance });
  }
  if (server === undefined) return t('purchase.packAddedHere', { credits: added.credits, balance: added.balance });
  return t('purchase.packAdded', { server, credits: added.credits, balance: added.balance });
}

/** Takes the entitlement's notice for the caller, who tells the buyer: false when someone took it before. */
export function takeNotice(deps: Pick<NoticeDeps, 'db' | 'now'>, entitlementId: string): Promise<boolean> {
  return takeBuyerNotice(deps.db, entitlementId, deps.now());
}

/** Takes the notice and, when this call took it, tells the buyer by direct message. Never throws. */
export async function tellBuyer(deps: NoticeDeps, added: PurchaseAdded): Promise<void> {
  try {
    if (!deps.buyerMessages || !(await takeNotice(deps, added.entitlementId))) return;
    await directMessage(deps, added);
  } catch (err) {
    deps.logger.warn({ err, entitlementId: added.entitlementId }, 'could not tell the buyer of their purchase');
  }
}

/** The direct message of a notice taken already (one the buyer's interaction could not carry). Never throws. */
export async function tellBuyerDirectly(deps: NoticeDeps, added: PurchaseAdded): Promise<void> {
  try {
    await directMessage(deps, added);
  } catch (err) {
    deps.logger.warn({ err, entitlementId: added.entitlementId }, 'could not tell the buyer of their purchase');
  }
}

async function directMessage(deps: NoticeDeps, added: PurchaseAdded): Promise<void> {
  const { buyerMessages, logger } = deps;
  if (!buyerMessages) return;
  const log = logger.child({ entitlementId: added.entitlementId, userId: added.userId, guildId: added.guildId });
  const t = translator(await offerLocale(deps.db, added.userId));
  const name = await buyerMessages.guildName(added.guildId);
  const content = purchaseNotice(t, added, name === undefined ? t('purchase.someServer') : `**${escapeMarkdown(name)}**`);
  // The entitlement's id as the nonce: a post the REST client retries stays one message.
  const sent = await buyerMessages.sendDirectMessage(added.userId, { content, allowed_mentions: { parse: [] } }, `p${added.entitlementId}`);
  if (sent === 'refused') log.info('the buyer takes no direct messages from the bot; purchase notice dropped');
  else log.info('buyer told of their purchase by direct message');
}

/** What a subscription's start added, with the server's balance now. */
export async function subscriptionAdded(deps: Pick<NoticeDeps, 'db'>, input: Omit<PurchaseAdded, 'kind' | 'balance'>): Promise<PurchaseAdded> {
  return { ...input, kind: 'subscription', balance: (await getBalance(deps.db, input.guildId)) ?? 0 };
}
