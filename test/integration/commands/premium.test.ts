/**
 * What members and owners see of purchases through Discord, with CREDIT_PACKS and
 * SUBSCRIPTION_ALLOWANCES set: Buy buttons on the refusal for too few credits, in `/credits`
 * and `/help` (each showing recorded as the offer a bought pack follows), the member's own
 * waiting packs with "Add to this server", and the purchases in the history and the owners'
 * account. Purchases are recorded here as `Purchases.receive` records them.
 */
import { and, eq } from 'drizzle-orm';
import { ButtonStyle, ComponentType } from 'discord-api-types/v10';
import type { EmulatorMessage } from '@music-bot/discord-emulator';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { reverseEntitlement, startSubscription } from '../../../src/credits/index.js';
import { entitlements, premiumOffers } from '../../../src/db/schema.js';
import { buttonsOf, jobIdIn, privateAnswer, type BotHarness } from './harness.js';
import { PACK_LARGE, PACK_SMALL, SUBSCRIPTION, startSellingBot } from './selling-world.js';

let h: BotHarness;
let g: BotHarness;

beforeAll(async () => {
  h = await startSellingBot();
});
afterAll(async () => h?.close());
beforeEach(() => {
  g = h.inNewGuild();
});
afterEach(() => expect(h.emulator.findings).toEqual([]));

let next = 1_400_000_000_000_000_000n;
async function boughtPack(userId: string, credits: number, values: Partial<typeof entitlements.$inferInsert> = {}): Promise<string> {
  const id = String((next += 1n));
  await g.db.db.insert(entitlements).values({ id, skuId: credits === 100 ? PACK_SMALL : PACK_LARGE, kind: 'pack', type: 1, userId, credits, ...values });
  return id;
}

type SentButton = { readonly type: number; readonly style?: number; readonly sku_id?: string; readonly label?: string };

function buttonsIn(message: EmulatorMessage): SentButton[] {
  return ((message.components ?? []) as Array<{ components?: SentButton[] }>).flatMap((row) => row.components ?? []);
}

/** The SKUs of a message's premium buttons, and that they carry nothing else. */
function premiumSkus(message: EmulatorMessage): string[] {
  const premium = buttonsIn(message).filter((button) => button.type === ComponentType.Button && button.style === ButtonStyle.Premium);
  for (const button of premium) expect(Object.keys(button).sort()).toEqual(['sku_id', 'style', 'type']);
  return premium.map((button) => button.sku_id!);
}

async function offerOf(userId: string) {
  const [row] = await g.db.db.select().from(premiumOffers).where(eq(premiumOffers.userId, userId));
  return row;
}

describe('the refusal for too few credits', () => {
  it('stays private, points at the Buy buttons, carries one per SKU, and records the offer for this server', async () => {
    const answer = await privateAnswer(g.run(g.members.alice, { name: 'song', options: { prompt: 'too dear' } }));
    expect(answer.ephemeral).toBe(true);
    expect(answer.content).toBe('This server has 5 credits and this costs 10. Anyone can buy credits for it with the buttons below.');
    expect(premiumSkus(answer)).toEqual([PACK_SMALL, PACK_LARGE, SUBSCRIPTION]);
    await expect.poll(() => offerOf(g.members.alice)).toMatchObject({ guildId: g.guild.id });
    expect(await g.jobCount()).toBe(0);
  });
});

describe('a server with a plan', () => {
  /** The server plan, live, as a subscription's start records it. */
  async function subscribe(): Promise<void> {
    await g.balance();
    const id = String((next += 1n));
    await g.db.db.insert(entitlements).values({ id, skuId: SUBSCRIPTION, kind: 'subscription', type: 8, userId: g.members.owner, guildId: g.guild.id, credits: 1_000 });
  }

  it('is not offered the plan again in the refusal or /help, but still the packs', async () => {
    await subscribe();
    const refused = await privateAnswer(g.run(g.members.alice, { name: 'song', options: { prompt: 'too dear' } }));
    expect(premiumSkus(refused)).toEqual([PACK_SMALL, PACK_LARGE]);
    const help = await privateAnswer(g.run(g.members.roleModerator, { name: 'help' }));
    expect(premiumSkus(help)).toEqual([PACK_SMALL, PACK_LARGE]);
    expect(help.content).not.toContain('Or subscribe this server');
  });

  it('hears from the low-balance alert that members can buy credits, not that only the owners can add them', async () => {
    await g.setBalance(30);
    const alerts = g.emulator.createChannel(g.guild.id, { name: 'mod-alerts' });
    await privateAnswer(g.run(g.members.manager, { name: 'credits-admin', subcommand: 'alert', options: { channel: alerts.id, below: 25 } }));
    await g.delivered(jobIdIn(await privateAnswer(g.run(g.members.alice, { name: 'song', options: { prompt: 'spend it' } }))));
    expect((await g.emulator.waitForMessage(alerts.id)).content).toBe(
      'This server’s music credits are low: 20 left (alert below 25). Anyone can buy credits for it with the buttons in /credits.',
    );
  });
});

describe('/credits', () => {
  it('shows the offers and their buttons, and records the offer', async () => {
    const answer = await privateAnswer(g.run(g.members.bob, { name: 'credits' }));
    expect(answer.content).toContain('Anyone can buy credits for this server: packs of 100 credits and 500 credits (the buttons show the price).');
    expect(answer.content).toContain('Or subscribe this server: a monthly allowance of 1,000 credits');
    expect(premiumSkus(answer)).toEqual([PACK_SMALL, PACK_LARGE, SUBSCRIPTION]);
    await expect.poll(() => offerOf(g.members.bob)).toMatchObject({ guildId: g.guild.id });
  });

  it('offers no Subscribe button for the subscription the server has', async () => {
    await g.balance();
    await g.db.db
      .insert(entitlements)
      .values({ id: String((next += 1n)), skuId: SUBSCRIPTION, kind: 'subscription', type: 8, userId: g.members.owner, guildId: g.guild.id, credits: 1_000 });
    expect(premiumSkus(await privateAnswer(g.run(g.members.bob, { name: 'credits' })))).toEqual([PACK_SMALL, PACK_LARGE]);
  });

  it('lists the member’s own waiting packs, each with Add to this server, for the buyer alone', async () => {
    const mine = await boughtPack(g.members.alice, 100, { defaultGuildId: g.guild.id });
    const elsewhere = await boughtPack(g.members.alice, 500, { defaultGuildId: '999999999999999999', createdAt: new Date(Date.now() - 60 * 60_000) });
    const nowhere = await boughtPack(g.members.alice, 100);
    await boughtPack(g.members.bob, 500);

    const handle = g.run(g.members.alice, { name: 'credits' });
    const answer = await privateAnswer(handle);
    expect(answer.content).toMatch(/A pack of 100 credits you bought <t:\d+:R> is waiting: it goes to this server <t:\d+:R> unless you add it here\./);
    expect(answer.content).toMatch(/A pack of 500 credits you bought <t:\d+:R> is waiting: it goes to another server in a moment unless you add it here\./);
    expect(answer.content).toMatch(/A pack of 100 credits you bought <t:\d+:R> is waiting for you to add it to a server\./);
    // Oldest first.
    expect(buttonsOf(answer)).toEqual([`pack-claim:${elsewhere}`, `pack-claim:${mine}`, `pack-claim:${nowhere}`]);
    const labels = buttonsIn(answer).map((button) => button.label);
    expect(labels.slice(0, 3)).toEqual(['Add 500 credits to this server', 'Add 100 credits to this server', 'Add 100 credits to this server']);
    expect(premiumSkus(answer)).toEqual([PACK_SMALL, PACK_LARGE, SUBSCRIPTION]);

    const click = async (customId: string, userId: string) => (await privateAnswer(g.emulator.clickButton({ messageId: answer.id, customId, userId }))).content;
    // Someone else's click adds nothing.
    expect(await click(`pack-claim:${mine}`, g.members.bob)).toBe('That pack is someone else’s: only its buyer can add it.');
    expect(await g.balance()).toBe(5);

    expect(await click(`pack-claim:${mine}`, g.members.alice)).toBe('100 credits added to this server. Its balance is now 105.');
    expect(await g.balance()).toBe(105);
    expect(await click(`pack-claim:${mine}`, g.members.alice)).toBe('That pack is already in this server.');
    expect(await g.balance()).toBe(105);

    // Claimed elsewhere meanwhile, then refunded: each click says so and moves nothing.
    await g.db.db.update(entitlements).set({ claimedAt: new Date(), guildId: '999999999999999999' }).where(eq(entitlements.id, elsewhere));
    expect(await click(`pack-claim:${elsewhere}`, g.members.alice)).toBe('That pack was already added to another server.');
    await g.db.db.update(entitlements).set({ deletedAt: new Date() }).where(eq(entitlements.id, nowhere));
    expect(await click(`pack-claim:${nowhere}`, g.members.alice)).toBe('That pack was refunded: it adds no credits.');
    expect(await g.balance()).toBe(105);

    // The pack added is gone from the list; Bob's never showed to Alice.
    const after = await privateAnswer(g.run(g.members.alice, { name: 'credits' }));
    expect(buttonsOf(after)).toEqual([]);
    expect(after.content).toContain('**Credits of this server**: 105');
  });
});

describe('/help', () => {
  it('says how to buy credits, with the buttons, and records the offer', async () => {
    const answer = await privateAnswer(g.run(g.members.roleModerator, { name: 'help' }));
    expect(answer.content).toContain('**Buying credits**: the buttons below (also in `/credits`) buy credits for this server');
    expect(answer.content).toContain('packs of 100 credits and 500 credits');
    expect(premiumSkus(answer)).toEqual([PACK_SMALL, PACK_LARGE, SUBSCRIPTION]);
    await expect.poll(() => offerOf(g.members.roleModerator)).toMatchObject({ guildId: g.guild.id });
  });
});

describe('owners and moderators', () => {
  it('see each purchase in the history with its entitlement and SKU, and the month’s sales in the account', async () => {
    const pack = await boughtPack(g.members.alice, 500);
    const answer = await privateAnswer(g.run(g.members.alice, { name: 'credits' }));
    expect(await privateAnswer(g.emulator.clickButton({ messageId: answer.id, customId: `pack-claim:${pack}`, userId: g.members.alice }))).toMatchObject({
      content: '500 credits added to this server. Its balance is now 505.',
    });

    const subscription = String((next += 1n));
    await g.db.db.insert(entitlements).values({ id: subscription, skuId: SUBSCRIPTION, kind: 'subscription', type: 8, userId: g.members.bob, guildId: g.guild.id, credits: 1_000 });
    // The subscription's month is the one of the instant it started at.
    const startedAt = new Date();
    expect(await startSubscription(g.db.db, { entitlementId: subscription, now: startedAt })).toMatchObject({ amount: 495 });
    expect(await reverseEntitlement(g.db.db, { entitlementId: pack })).toMatchObject({ taken: 500, unrecovered: 0 });

    const page = await privateAnswer(g.run(g.members.manager, { name: 'credits-admin', subcommand: 'history' }));
    const month = new Intl.DateTimeFormat('en', { month: 'long', year: 'numeric', timeZone: 'UTC' }).format(startedAt);
    expect(page.content).toContain(`**purchase** (entitlement \`${pack}\`, SKU \`${PACK_LARGE}\`) +500 → 505 · for <@${g.members.alice}> by <@${g.members.alice}>`);
    expect(page.content).toContain(`**subscription** (${month} · entitlement \`${subscription}\`, SKU \`${SUBSCRIPTION}\`) +495 → 1000 · for <@${g.members.bob}>`);
    expect(page.content).toContain(`**taken back (Discord refund)** (entitlement \`${pack}\`, SKU \`${PACK_LARGE}\`) -500 → 500 · for <@${g.members.alice}>`);

    const [row] = await g.db.db.select().from(entitlements).where(and(eq(entitlements.id, pack), eq(entitlements.guildId, g.guild.id)));
    expect(row?.claimedAt).not.toBeNull();
    const account = (await privateAnswer(g.run(g.members.owner, { name: 'credits-admin', subcommand: 'account' }))).content ?? '';
    expect(account).toMatch(/\*\*Sales through Discord in [A-Z][a-z]+ \d{4}\*\* \(all servers\)/);
    expect(account).toMatch(/Packs: \d+ bought, [\d,]+ credits; \d+ not yet in a server\./);
    expect(account).toMatch(/Subscriptions: \d+ live; [\d,]+ credits? given as allowance this month\./);
    expect(account).toMatch(/Credits sold this month: \*\*[\d,]+\*\*; credits the music service charged this month: \*\*\d+\*\*\./);
    expect(account).toMatch(/Refunds: \d+; [\d,]+ credits? taken back, \*\*[\d,]+ credits? could not be taken back\*\* \(already spent\)\./);
  });
});
