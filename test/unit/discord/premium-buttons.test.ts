/**
 * The Buy buttons and the shop's lines: premium buttons (style 6) carrying only their SKU,
 * within Discord's five-by-five limits, and the refusal for too few credits pointing at them.
 */
import { ButtonStyle, ComponentType } from 'discord.js';
import { describe, expect, it } from 'vitest';
import { offersPurchase, Refusal, userComponentsFor, userMessageFor } from '../../../src/discord/errors.js';
import { localText, translator } from '../../../src/i18n/index.js';
import { RequestRefusedError } from '../../../src/pipeline/requests.js';
import { REFUSAL_TEXTS } from '../../../src/pipeline/refusal-texts.js';
import { createCatalog } from '../../../src/premium/catalog.js';
import { offerLines, premiumRows, sellsAnything } from '../../../src/discord/premium-buttons.js';

const sku = (n: number) => String(1_200_000_000_000_000_000n + BigInt(n));
const catalogOf = (packs: number[], subscriptions: number[] = []) =>
  createCatalog({
    creditPacks: packs.map((credits, index) => ({ skuId: sku(index), credits })),
    subscriptionAllowances: subscriptions.map((credits, index) => ({ skuId: sku(100 + index), credits })),
  });

const json = (rows: ReturnType<typeof premiumRows>) => rows.map((row) => row.toJSON());

describe('premiumRows', () => {
  it('makes one premium button per SKU, packs first, with nothing but its SKU', () => {
    const rows = json(premiumRows(catalogOf([100, 500], [1_000])));
    expect(rows).toEqual([
      {
        type: ComponentType.ActionRow,
        components: [
          { type: ComponentType.Button, style: ButtonStyle.Premium, sku_id: sku(0) },
          { type: ComponentType.Button, style: ButtonStyle.Premium, sku_id: sku(1) },
          { type: ComponentType.Button, style: ButtonStyle.Premium, sku_id: sku(100) },
        ],
      },
    ]);
  });

  it('puts five buttons to a row and stops at the rows it may take', () => {
    const many = catalogOf([1, 2, 3, 4, 5, 6, 7], [8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27]);
    expect(json(premiumRows(many)).map((row) => row.components.length)).toEqual([5, 5, 5, 5, 5]);
    expect(json(premiumRows(many, { maxRows: 2 })).map((row) => row.components.length)).toEqual([5, 5]);
    expect(json(premiumRows(catalogOf([1, 2, 3, 4, 5, 6]))).map((row) => row.components.length)).toEqual([5, 1]);
    expect(premiumRows(many, { maxRows: 0 })).toEqual([]);
  });

  it('leaves out the subscriptions the server has already', () => {
    const skus = json(premiumRows(catalogOf([100], [1_000, 2_000]), { subscribed: [sku(100)] })).flatMap((row) => row.components.map((button) => (button as { sku_id?: string }).sku_id));
    expect(skus).toEqual([sku(0), sku(101)]);
  });

  it('makes no rows, and the bot sells nothing, with an empty catalogue', () => {
    expect(premiumRows(catalogOf([]))).toEqual([]);
    expect(sellsAnything(catalogOf([]))).toBe(false);
    expect(sellsAnything(undefined)).toBe(false);
    expect(sellsAnything(catalogOf([], [500]))).toBe(true);
  });
});

describe('offerLines', () => {
  it('says what each kind of offer gives, in the member’s language', () => {
    expect(offerLines(catalogOf([100, 500], [1_000]), translator('en'))).toEqual([
      'Anyone can buy credits for this server: packs of 100 credits and 500 credits (the buttons show the price).',
      'Or subscribe this server: a monthly allowance of 1,000 credits, topped up at the start of each month (UTC).',
    ]);
    expect(offerLines(catalogOf([1_000]), translator('de'))).toEqual([
      'Alle können Credits für diesen Server kaufen: Pakete mit 1.000 Credits (die Buttons zeigen den Preis).',
    ]);
    expect(offerLines(catalogOf([]), translator('en'))).toEqual([]);
  });
});

describe('the refusal for too few credits', () => {
  const refusal = new RequestRefusedError('insufficient_credits', REFUSAL_TEXTS.insufficientCredits(3, 10, 0), { balance: 3, cost: 10 });
  const shop = { catalog: catalogOf([100]), subscribed: [] };

  it('points at the Buy buttons and carries them when something is for sale', () => {
    expect(offersPurchase(refusal, shop)).toBe(true);
    expect(userMessageFor(refusal, translator('en'), shop)).toBe('This server has 3 credits and this costs 10. Anyone can buy credits for it with the buttons below.');
    expect(json(userComponentsFor(refusal, translator('en'), shop) as ReturnType<typeof premiumRows>)).toEqual(json(premiumRows(shop.catalog)));
    const withAllowance = new RequestRefusedError('insufficient_credits', REFUSAL_TEXTS.insufficientCredits(3, 10, 50, new Date('2031-01-15T00:00:00Z')));
    expect(userMessageFor(withAllowance, translator('es-ES'), shop)).toContain('cualquiera puede comprarle créditos con los botones de abajo');
  });

  it('stays as it was when nothing is for sale, and other refusals get no buttons', () => {
    expect(userMessageFor(refusal, translator('en'))).toBe('This server has 3 credits and this costs 10. Only the bot’s owners can add credits.');
    expect(userComponentsFor(refusal, translator('en'), { catalog: catalogOf([]), subscribed: [] })).toEqual([]);
    const frozen = new RequestRefusedError('frozen', REFUSAL_TEXTS.frozen());
    expect(offersPurchase(frozen, shop)).toBe(false);
    expect(userComponentsFor(frozen, translator('en'), shop)).toEqual([]);
    expect(userComponentsFor(new Refusal('cooldown', localText('refusal.cooldown', { count: 5 })), translator('en'), shop)).toEqual([]);
  });
});
