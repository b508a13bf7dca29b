/**
 * Selling credits through Discord, end to end: `npm start` against the emulator, which sells
 * SKUs and delivers entitlement events over the gateway as Discord does (or twice, or not at
 * all). Members press the premium buttons the bot shows, and the credits must go in once,
 * whatever the events, the restarts and the second gateway do; refunds take them back.
 */
import { and, eq, inArray, like } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { APIButtonComponent, APIMessageComponent } from 'discord-api-types/v10';
import { ButtonStyle, ComponentType, InteractionType } from 'discord-api-types/v10';
import type { EmulatorMessage } from '@music-bot/discord-emulator';
import { largestSubscription, verifyLedger } from '../../src/credits/index.js';
import { creditLedger, entitlements, guilds, premiumOffers } from '../../src/db/schema.js';
import type { StackGuild } from '../support/stack.js';
import { found } from '../support/found.js';
import { awayFromUtcMidnight } from '../support/utc-day.js';
import { printBotLogsOnFailure, startE2E, type E2E } from './bot-process.js';
import { PACK, PLAN, PURCHASE_ENV, PURCHASE_SKUS, STRAY } from './purchases.support.js';

let bot: E2E;
printBotLogsOnFailure(() => bot);

beforeAll(async () => {
  bot = await startE2E({ webhooks: false, startingCredits: 20, emulator: { skus: PURCHASE_SKUS }, env: { ...PURCHASE_ENV, PACK_CLAIM_MINUTES: '10' } });
}, 120_000);
afterAll(async () => bot?.close(), 60_000);
// The ledger's own check: every guild's balance is the sum of its movements.
afterEach(async () => expect(await verifyLedger(bot.db.db)).toEqual([]));

function buttonsOf(message: EmulatorMessage | undefined): APIButtonComponent[] {
  const all: APIButtonComponent[] = [];
  const walk = (components: readonly APIMessageComponent[] | undefined) => {
    for (const component of components ?? []) {
      if (component.type === ComponentType.Button) all.push(component);
      if ('components' in component) walk(component.components as APIMessageComponent[]);
    }
  };
  walk(message?.components as APIMessageComponent[] | undefined);
  return all;
}

/** `/credits` as `userId` in `place`: its private answer, once the bot has written it. */
async function credits(place: StackGuild, userId: string): Promise<EmulatorMessage> {
  const handle = bot.emulator.runCommand({ guildId: place.guild.id, channelId: place.channelId, userId, name: 'credits' });
  // From whichever process answered (beside a twin gateway, either may).
  await handle.waitForResponse(15_000);
  return vi.waitFor(() => found(handle.original()?.content ? handle.original() : undefined, 'the answer to /credits'), 15_000);
}

/** The member opens `/credits` in `place` and presses its Buy button for the pack. */
async function buy(place: StackGuild, userId: string, delivery: Parameters<E2E['emulator']['clickPremiumButton']>[0]['delivery'] = 'normal') {
  const answer = await credits(place, userId);
  const premium = buttonsOf(answer).find((button) => button.style === ButtonStyle.Premium && button.sku_id === PACK);
  expect(premium, 'a Buy button for the pack in /credits').toBeDefined();
  // The bot notes where it showed the button (beside its answer): that is the pack's server.
  await vi.waitFor(async () => {
    const [offer] = await bot.db.db.select().from(premiumOffers).where(eq(premiumOffers.userId, userId));
    expect(offer?.guildId).toBe(place.guild.id);
  }, 10_000);
  return bot.emulator.clickPremiumButton({ messageId: answer.id, skuId: PACK, userId, delivery });
}

async function movementsOf(entitlementId: string) {
  return bot.db.db
    .select({ guildId: creditLedger.guildId, key: creditLedger.key, kind: creditLedger.kind, amount: creditLedger.amount })
    .from(creditLedger)
    .where(like(creditLedger.key, `entitlement:${entitlementId}%`))
    .orderBy(creditLedger.id);
}

/** The guild's monthly floors: the owners' allowance and the subscriptions'. */
async function allowancesOf(guildId: string) {
  return bot.db.db
    .select({ key: creditLedger.key, kind: creditLedger.kind, amount: creditLedger.amount, reason: creditLedger.reason })
    .from(creditLedger)
    .where(and(eq(creditLedger.guildId, guildId), inArray(creditLedger.kind, ['allowance', 'subscription'])))
    .orderBy(creditLedger.id);
}

async function balanceOf(guildId: string): Promise<number | undefined> {
  const [row] = await bot.db.db.select({ balance: guilds.balance }).from(guilds).where(eq(guilds.id, guildId));
  return row?.balance;
}

function received(entitlementId: string, lines = bot.output()): number {
  return lines.split('\n').filter((line) => line.includes('"entitlement received"') && line.includes(`"entitlementId":"${entitlementId}"`)).length;
}

async function consumed(entitlementId: string): Promise<void> {
  await vi.waitFor(() => expect(bot.emulator.entitlement(entitlementId)?.consumed).toBe(true), 20_000);
  await vi.waitFor(async () => {
    const [row] = await bot.db.db.select({ consumedAt: entitlements.consumedAt }).from(entitlements).where(eq(entitlements.id, entitlementId));
    expect(row?.consumedAt).toBeInstanceOf(Date);
  }, 10_000);
}

describe('a credit pack', () => {
  it('bought once adds its credits once, though Discord sends the event twice', async () => {
    const place = bot.newGuild();
    const buyer = place.members.alice;
    const entitlement = await buy(place, buyer, 'twice');
    // Both events taken (the positive signal), then the buyer is back: the pack goes in before the command answers.
    await vi.waitFor(() => expect(received(entitlement.id)).toBe(2), 15_000);
    const answer = await credits(place, buyer);
    expect(answer.content).toContain('120');
    expect(await movementsOf(entitlement.id)).toEqual([{ guildId: place.guild.id, key: `entitlement:${entitlement.id}`, kind: 'purchase', amount: 100 }]);
    await consumed(entitlement.id);
    bot.emulator.redeliverEntitlementEvent(entitlement.id);
    await vi.waitFor(() => expect(received(entitlement.id)).toBe(3), 15_000);
    expect(await movementsOf(entitlement.id)).toHaveLength(1);
    expect(await balanceOf(place.guild.id)).toBe(120);
  }, 60_000);

  it('goes in once when the bot is killed between crediting it and consuming it', async () => {
    const place = bot.newGuild();
    const buyer = place.members.bob;
    // The consume waits a minute on a rate limit: the process dies with it in hand.
    bot.emulator.rateLimitNext((request) => request.method === 'POST' && /\/entitlements\/\d+\/consume$/.test(request.path), 1, { retryAfterSeconds: 60 });
    const entitlement = await buy(place, buyer);
    await credits(place, buyer);
    await vi.waitFor(async () => expect(await movementsOf(entitlement.id)).toHaveLength(1), 15_000);
    await vi.waitFor(() => expect(bot.emulator.rateLimited.some((hit) => /\/consume$/.test(hit.path))).toBe(true), 15_000);
    expect(bot.emulator.entitlement(entitlement.id)?.consumed).toBe(false);
    await bot.kill();
    await bot.start();
    // The listing at start-up and the sweep find it credited and unconsumed, and finish.
    await consumed(entitlement.id);
    expect(await movementsOf(entitlement.id)).toEqual([{ guildId: place.guild.id, key: `entitlement:${entitlement.id}`, kind: 'purchase', amount: 100 }]);
    expect(await balanceOf(place.guild.id)).toBe(120);
  }, 90_000);

  it('goes in once with two gateway processes hearing every event and command', async () => {
    const twin = bot.world.bot({ name: 'twin gateway', env: { ...bot.botEnv, ROLE: 'gateway' } });
    await twin.start();
    try {
      const place = bot.newGuild();
      const buyer = place.members.manager;
      const entitlement = await buy(place, buyer);
      await vi.waitFor(() => {
        expect(received(entitlement.id, twin.output())).toBeGreaterThanOrEqual(1);
        expect(received(entitlement.id)).toBeGreaterThanOrEqual(1);
      }, 15_000);
      // The buyer is back, and both processes hear it: the pack goes in, and the buyer is told once.
      const back = bot.emulator.runCommand({ guildId: place.guild.id, channelId: place.channelId, userId: buyer, name: 'credits' });
      await back.waitForResponse(15_000);
      await consumed(entitlement.id);
      expect(await movementsOf(entitlement.id)).toHaveLength(1);
      expect(await balanceOf(place.guild.id)).toBe(120);
      const told = () => [
        ...back.followUps.filter((message) => message.content.startsWith('Thank you')),
        ...bot.emulator.channelMessages(bot.emulator.dmChannel(buyer).id),
      ];
      await vi.waitFor(() => expect(told()).toHaveLength(1), 15_000);
      expect(told()[0]!.content).toMatch(/^Thank you for your purchase! 100 credits went into (this server|\*\*.+\*\*), which now has 120 credits\.$/);
      // Seen again in the next command's payload: not told again.
      const again = bot.emulator.runCommand({ guildId: place.guild.id, channelId: place.channelId, userId: buyer, name: 'credits' });
      await vi.waitFor(() => expect(again.original()?.content).toContain('120'), 15_000);
      expect(again.followUps.filter((message) => message.content.startsWith('Thank you'))).toEqual([]);
      expect(told()).toHaveLength(1);
    } finally {
      await twin.stop();
    }
  }, 90_000);

  it('waits for its buyer, who adds it to another server with one click', async () => {
    const [shown, chosen] = [bot.newGuild(), bot.newGuild()];
    const buyer = shown.members.roleModerator;
    const entitlement = await buy(shown, buyer);
    await vi.waitFor(() => expect(received(entitlement.id)).toBe(1), 15_000);
    const answer = await credits(chosen, buyer);
    const add = buttonsOf(answer).find((button) => button.style !== ButtonStyle.Premium && button.style !== ButtonStyle.Link);
    expect(add, 'an "add to this server" button for the waiting pack').toBeDefined();
    const click = bot.emulator.clickButton({ messageId: answer.id, customId: (add as { custom_id: string }).custom_id, userId: buyer, guildId: chosen.guild.id });
    await bot.settled(click, 15_000);
    await consumed(entitlement.id);
    expect(await movementsOf(entitlement.id)).toEqual([{ guildId: chosen.guild.id, key: `entitlement:${entitlement.id}`, kind: 'purchase', amount: 100 }]);
    expect(await balanceOf(chosen.guild.id)).toBe(120);
    // The server it was offered in keeps what it had: the pack was added once, elsewhere.
    expect(await balanceOf(shown.guild.id)).toBe(20);
    // And another member cannot take it: it is no longer waiting, nor ever was theirs.
    const someone = await credits(chosen, chosen.members.alice);
    expect(buttonsOf(someone).filter((button) => button.style !== ButtonStyle.Premium && button.style !== ButtonStyle.Link)).toEqual([]);
  }, 60_000);

  it('refunded by Discord takes its credits back', async () => {
    const place = bot.newGuild();
    const buyer = place.members.alice;
    const entitlement = await buy(place, buyer);
    await credits(place, buyer);
    await consumed(entitlement.id);
    expect(await balanceOf(place.guild.id)).toBe(120);
    bot.emulator.refund(entitlement.id);
    await vi.waitFor(async () => expect((await movementsOf(entitlement.id)).map((movement) => movement.kind)).toEqual(['purchase', 'reversal']), 15_000);
    expect((await movementsOf(entitlement.id))[1]).toMatchObject({ key: `entitlement:${entitlement.id}:reversal`, amount: -100 });
    expect(await balanceOf(place.guild.id)).toBe(20);
  }, 60_000);
});

describe('a server subscription', () => {
  // The month the bot gives the allowance for, and the next one, as this test reckons them: one UTC day.
  beforeEach(() => awayFromUtcMidnight(60_000));

  it('gives its allowance at once, and stops at its end; what it gave stays', async () => {
    const place = bot.newGuild();
    await credits(place, place.members.alice);
    const entitlement = bot.emulator.subscribe({ userId: place.members.alice, guildId: place.guild.id, skuId: PLAN });
    await vi.waitFor(async () => expect(await allowancesOf(place.guild.id)).toHaveLength(1), 15_000);
    const month = new Date().toISOString().slice(0, 7);
    // The month's floor, under the server's one key for the month, given by the subscription.
    expect(await allowancesOf(place.guild.id)).toEqual([
      { key: `allowance:${place.guild.id}:${month}`, kind: 'subscription', amount: 480, reason: `subscription ${PLAN} ${month} entitlement ${entitlement.id}` },
    ]);
    expect(await balanceOf(place.guild.id)).toBe(500);
    const nextMonth = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth() + 1, 1));
    expect((await largestSubscription(bot.db.db, place.guild.id, nextMonth))?.id).toBe(entitlement.id);

    bot.emulator.endSubscription(entitlement.id, { endsAt: new Date() });
    await vi.waitFor(async () => {
      const [row] = await bot.db.db.select({ allowance: guilds.subscriptionAllowance }).from(guilds).where(eq(guilds.id, place.guild.id));
      expect(row?.allowance).toBe(0);
    }, 15_000);
    // Next month's first use finds no allowance to apply; this month's credits stay.
    expect(await largestSubscription(bot.db.db, place.guild.id, nextMonth)).toBeUndefined();
    expect(await balanceOf(place.guild.id)).toBe(500);
    expect(await allowancesOf(place.guild.id)).toHaveLength(1);
  }, 60_000);
});

describe('what the bot does not sell, or Discord did not make', () => {
  it('is ignored: an unknown SKU, another application, an entitlement REST does not know', async () => {
    const place = bot.newGuild();
    const buyer = place.members.bob;
    const stray = bot.emulator.purchase({ userId: buyer, skuId: STRAY });
    await bot.waitForLog((line) => line.entitlementId === stray.id && String(line.msg).includes('does not sell'), 'the unknown SKU ignored');

    const foreign = { id: '1300000000000009001', sku_id: PACK, application_id: '1300000000000009999', user_id: buyer, type: 1, deleted: false, consumed: false };
    bot.emulator.forgeEntitlementEvent('ENTITLEMENT_CREATE', foreign);
    await bot.waitForLog((line) => line.entitlementId === foreign.id && String(line.msg).includes('another application'), 'the foreign entitlement refused');

    const forged = { ...foreign, id: '1300000000000009002', application_id: bot.emulator.applicationId };
    bot.emulator.forgeEntitlementEvent('ENTITLEMENT_CREATE', forged);
    await bot.waitForLog((line) => line.entitlementId === forged.id && String(line.msg).includes('does not confirm'), 'the forged entitlement ignored');

    // A command whose payload lists a pack Discord never sold (a forged payload): the command is answered, the pack taken as nothing.
    const invented = { ...forged, id: '1300000000000009003', guild_id: undefined };
    const command = bot.emulator.registeredCommands(bot.guild.id).find((candidate) => candidate.name === 'credits')!;
    const handle = bot.emulator.dispatchUnchecked({
      type: InteractionType.ApplicationCommand,
      guildId: place.guild.id,
      channelId: place.channelId,
      userId: buyer,
      data: { id: command.id, name: 'credits', type: 1 },
      entitlements: [invented],
    });
    await bot.settled(handle, 15_000);
    await bot.waitForLog((line) => line.entitlementId === invented.id && String(line.msg).includes('does not confirm'), 'the invented entitlement ignored');

    expect(await bot.db.db.select().from(entitlements).where(and(eq(entitlements.userId, buyer), eq(entitlements.skuId, STRAY)))).toEqual([]);
    expect(await bot.db.db.select().from(entitlements).where(like(entitlements.id, '13000000000000090%'))).toEqual([]);
    for (const id of [stray.id, foreign.id, forged.id, invented.id]) expect(await movementsOf(id)).toEqual([]);
  }, 60_000);
});
