/**
 * What members see of the shop: Discord's premium buttons (style 6) for the SKUs sold, and the
 * lines that say what each kind of offer gives. A premium button shows its SKU's own name and
 * price, so it carries no label, emoji, custom id or url.
 */
import { ActionRowBuilder, ButtonBuilder, ButtonStyle } from 'discord.js';
import type { Translator } from '../i18n/index.js';
import type { Logger } from '../logger.js';
import type { Catalog, Product } from '../premium/catalog.js';

/** Discord's limits: five buttons to a row, five rows to a message. */
export const BUTTONS_PER_ROW = 5;
export const MAX_ROWS = 5;

export interface PremiumRowsOptions {
  /**
   * Subscription SKUs to leave out (the server's live ones: Discord would only say it is
   * subscribed already); all are offered when absent.
   */
  readonly subscribed?: readonly string[];
  /** Rows the buttons may take, at most {@link MAX_ROWS}. @defaultValue 5 */
  readonly maxRows?: number;
}

/** Whether the bot sells anything: buttons and lines are shown only then. */
export function sellsAnything(catalog: Catalog | undefined): catalog is Catalog {
  return catalog !== undefined && catalog.packs.length + catalog.subscriptions.length > 0;
}

/** The products a Buy button is shown for: packs in their configured order, then subscriptions. */
export function offeredProducts(catalog: Catalog, options: PremiumRowsOptions = {}): Product[] {
  const subscribed = new Set(options.subscribed ?? []);
  const products = [...catalog.packs, ...catalog.subscriptions.filter((product) => !subscribed.has(product.skuId))];
  return products.slice(0, BUTTONS_PER_ROW * Math.min(MAX_ROWS, options.maxRows ?? MAX_ROWS));
}

/** One premium button per product offered, five to a row; no rows when nothing is offered. */
export function premiumRows(catalog: Catalog, options: PremiumRowsOptions = {}): ActionRowBuilder<ButtonBuilder>[] {
  const buttons = offeredProducts(catalog, options).map((product) => new ButtonBuilder().setStyle(ButtonStyle.Premium).setSKUId(product.skuId));
  const rows: ActionRowBuilder<ButtonBuilder>[] = [];
  for (let start = 0; start < buttons.length; start += BUTTONS_PER_ROW) {
    rows.push(new ActionRowBuilder<ButtonBuilder>().addComponents(buttons.slice(start, start + BUTTONS_PER_ROW)));
  }
  return rows;
}

/**
 * A line per kind of offer: the packs' sizes ("packs of 100 and 500 credits") and the
 * subscriptions' monthly allowances. Empty when nothing is sold.
 */
export function offerLines(catalog: Catalog, t: Translator, options: Pick<PremiumRowsOptions, 'subscribed'> = {}): string[] {
  const list = (products: readonly Product[]) => new Intl.ListFormat(t.locale, { type: 'conjunction' }).format(products.map((product) => t('premium.credits', { amount: product.credits })));
  const subscribed = new Set(options.subscribed ?? []);
  const plans = catalog.subscriptions.filter((product) => !subscribed.has(product.skuId));
  const lines: string[] = [];
  if (catalog.packs.length > 0) lines.push(t('premium.packsLine', { packs: list(catalog.packs) }));
  if (plans.length > 0) lines.push(t('premium.subscriptionsLine', { allowances: list(plans) }));
  return lines;
}

/**
 * Remembers that `userId` was shown Buy buttons in `guildId` (in `locale`, the language a direct
 * message about their purchase is written in), in the background: the answer is not held up,
 * and a failure is logged, never thrown.
 */
export function noteOffer(
  purchases: { recordOffer(userId: string, guildId: string, locale?: string): Promise<void> } | undefined,
  userId: string,
  guildId: string,
  logger: Logger,
  locale?: string,
): void {
  if (!purchases) return;
  void purchases.recordOffer(userId, guildId, locale).catch((err: unknown) => logger.warn({ err, guildId }, 'could not record where Buy buttons were shown'));
}
