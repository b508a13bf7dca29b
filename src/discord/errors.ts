/**
 * Sorting errors for the Discord layer: what a member may read, and what a log line may hold.
 * Every text shown here is written in this codebase; no upstream body, stack, key or token
 * ever reaches a Discord message.
 */
import { ActionRowBuilder, StringSelectMenuBuilder, type ButtonBuilder } from 'discord.js';
import { encodeCustomId, type CustomId } from '../discord-rest/custom-ids.js';
import { truncate } from '../text.js';
import { isGoneInteraction } from '../discord-rest/discord-delivery.js';
import { ZodError } from 'zod';
import { CreditsError } from '../credits/errors.js';
import { SettingsError } from '../guilds/settings.js';
import { MusicApiError } from '../music-api/errors.js';
import { RequestRefusedError, RequestTakenError } from '../pipeline/requests.js';
import { english, type LocalText, type MessageKey, type Translator } from '../i18n/index.js';
import type { Catalog } from '../premium/catalog.js';
import { offeredProducts, premiumRows } from './premium-buttons.js';
import { isMessageKey, zodText } from '../i18n/zod-text.js';

export type RefusalKind =
  | 'not_in_guild'
  | 'invalid_input'
  | 'channel_not_allowed'
  | 'missing_role'
  | 'missing_permission'
  | 'cooldown'
  | 'daily_cap'
  | 'frozen'
  | 'insufficient_credits'
  | 'not_found'
  | 'not_allowed'
  | 'ambiguous'
  | 'blocked_member';

/**
 * A select menu sent with a refusal, for the member to pick what they meant (two songs of the
 * same title): its custom id continues the command with the picked value.
 */
export interface PickMenu {
  readonly customId: CustomId;
  readonly placeholder: LocalText;
  /** At most 25; labels and descriptions at most 100 characters (cut here if longer). */
  readonly options: ReadonlyArray<{ readonly label: string; readonly description?: string; readonly value: string }>;
}

/**
 * A request the bot turns down before anything is reserved. `text` is written for the member
 * who asked, in their language, when the router answers.
 */
export class Refusal extends Error {
  override readonly name = 'Refusal';
  constructor(
    readonly kind: RefusalKind,
    /** A catalogue message, written in the member's language when shown. */
    readonly text: LocalText,
    /** Sent with the text: what the member may pick instead. */
    readonly menu?: PickMenu,
  ) {
    super(english.text(text));
  }
}

/** The refusal for too few credits, worded for a server whose members can buy some (same parameters). */
const WITH_BUY_BUTTONS: Partial<Record<MessageKey, MessageKey>> = {
  'refusal.insufficientCredits': 'refusal.insufficientCreditsBuy',
  'refusal.insufficientCreditsAllowance': 'refusal.insufficientCreditsAllowanceBuy',
};

/** What a server's members can buy: the catalog, less the server plans it holds. */
export interface Shop {
  readonly catalog: Catalog;
  /** The server's live subscription SKUs: never offered again. */
  readonly subscribed: readonly string[];
}

/** Whether the answer to `error` offers Buy buttons: too few credits, and something the server can buy. */
export function offersPurchase(error: unknown, shop: Shop | undefined): shop is Shop {
  return error instanceof RequestRefusedError && error.reason === 'insufficient_credits' && shop !== undefined && offeredProducts(shop.catalog, shop).length > 0;
}

/**
 * The text a member sees for `error`, in their language, or undefined when nothing is to be
 * said: the interaction is gone, or another process accepted it and answers it. With `catalog`
 * (what the bot sells), the refusal for too few credits points at the Buy buttons.
 */
export function userMessageFor(error: unknown, t: Translator = english, shop?: Shop): string | undefined {
  if (isGoneInteraction(error) || error instanceof RequestTakenError) return undefined;
  if (error instanceof Refusal) return t.text(error.text);
  if (error instanceof RequestRefusedError) {
    const buyKey = offersPurchase(error, shop) ? WITH_BUY_BUTTONS[error.text.key] : undefined;
    return t.text(buyKey ? { ...error.text, key: buyKey } : error.text);
  }
  if (error instanceof CreditsError || error instanceof SettingsError || error instanceof MusicApiError) return t.text(error.userText);
  if (error instanceof ZodError) return zodMessage(error, t);
  return t('error.generic');
}

/**
 * The components sent with the text for `error`: a refusal's pick menu, if it has one; the
 * Buy buttons of `catalog` with the refusal for too few credits.
 */
export function userComponentsFor(error: unknown, t: Translator = english, shop?: Shop): Array<ActionRowBuilder<StringSelectMenuBuilder> | ActionRowBuilder<ButtonBuilder>> {
  if (offersPurchase(error, shop)) return premiumRows(shop.catalog, shop);
  if (!(error instanceof Refusal) || error.menu === undefined || error.menu.options.length === 0) return [];
  const { menu } = error;
  const select = new StringSelectMenuBuilder()
    .setCustomId(encodeCustomId(menu.customId))
    .setPlaceholder(truncate(t.text(menu.placeholder), 150))
    .addOptions(
      menu.options.slice(0, 25).map((option) => ({
        label: truncate(option.label, 100),
        value: option.value,
        ...(option.description === undefined ? {} : { description: truncate(option.description, 100) }),
      })),
    );
  return [new ActionRowBuilder<StringSelectMenuBuilder>().addComponents(select)];
}

/**
 * Our zod schemas carry catalogue keys as their messages (see src/i18n/zod-text.ts), written
 * here in the member's language; zod's own defaults get a plain prefix. A message written as
 * a sentence (capital first, full stop last) is shown as it is.
 */
export function zodMessage(error: ZodError, t: Translator = english): string {
  const message = error.issues[0]?.message;
  if (message !== undefined && !isMessageKey(message) && /^[A-Z]/.test(message) && message.endsWith('.')) return message;
  return t.text(zodText(error));
}

/** Whether the error is expected (a refusal, bad input), not a fault worth an error log. */
export function isExpected(error: unknown): boolean {
  return (
    error instanceof Refusal ||
    error instanceof RequestRefusedError ||
    error instanceof CreditsError ||
    error instanceof SettingsError ||
    error instanceof ZodError ||
    (error instanceof MusicApiError && error.kind !== 'internal' && error.kind !== 'bad_response')
  );
}

/** The interaction can take no more answers: the one list of Discord's codes for it. */
export { isGoneInteraction };

