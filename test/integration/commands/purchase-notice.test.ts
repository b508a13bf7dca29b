/**
 * A purchase confirmed to its buyer: what was added, to which server, and what that server has
 * now. A pack that goes in through the buyer's own interaction is told in a private follow-up;
 * one that goes in without them (the sweep) and a subscription, by direct message. Once per
 * entitlement, whatever else sees it again; a DM Discord refuses costs nothing but a log line.
 */
import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { EmulatorMessage } from '@music-bot/discord-emulator';
import { entitlements, premiumOffers } from '../../../src/db/schema.js';
import { privateAnswer, type BotHarness } from './harness.js';
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

const dmsTo = (userId: string): EmulatorMessage[] => g.emulator.channelMessages(g.emulator.dmChannel(userId).id);

/** The bot's posts in `userId`'s DM channel, answered or refused. */
const dmPosts = (userId: string) => {
  const path = `/channels/${g.emulator.dmChannel(userId).id}/messages`;
  return g.emulator.requests.filter((request) => request.method === 'POST' && request.path.endsWith(path));
};

/** The member opens `/credits` here (in `locale`): the Buy buttons are shown, so a pack they buy comes here. */
async function shownBuyButtons(userId: string, locale?: string): Promise<void> {
  await privateAnswer(g.run(userId, { name: 'credits', ...(locale && { locale }) }));
  await vi.waitFor(async () => {
    const [offer] = await g.db.db.select().from(premiumOffers).where(eq(premiumOffers.userId, userId));
    expect(offer?.guildId).toBe(g.guild.id);
  }, 10_000);
}

/** How many times the bot has taken the entitlement in (each event, listing or payload). */
const received = (entitlementId: string) => g.logs.filter((line) => line.msg === 'entitlement received' && line.entitlementId === entitlementId).length;

/** Discord sends the entitlement's event again: resolves once the bot has taken it. */
async function redelivered(entitlementId: string): Promise<void> {
  const before = received(entitlementId);
  g.emulator.redeliverEntitlementEvent(entitlementId);
  await vi.waitFor(() => expect(received(entitlementId)).toBeGreaterThan(before), 10_000);
}

async function rowOf(entitlementId: string) {
  return vi.waitFor(async () => {
    const [row] = await g.db.db.select().from(entitlements).where(eq(entitlements.id, entitlementId));
    if (!row) throw new Error(`entitlement ${entitlementId} recorded`);
    return row;
  }, 10_000);
}

describe('a credit pack', () => {
  it('that goes in with its buyer’s next command is told in a private follow-up, not by DM', async () => {
    const buyer = g.members.alice;
    await shownBuyButtons(buyer);
    const pack = g.emulator.purchase({ userId: buyer, skuId: PACK_SMALL });
    await rowOf(pack.id);

    const handle = g.run(buyer, { name: 'credits' });
    const note = await handle.waitForFollowUp((message) => message.content.startsWith('Thank you'), 10_000);
    expect(note.ephemeral).toBe(true);
    expect(note.content).toBe('Thank you for your purchase! 100 credits went into this server, which now has 105 credits.');
    expect((await privateAnswer(handle)).content).toContain('105');
    expect((await rowOf(pack.id)).buyerToldAt).toBeInstanceOf(Date);

    // Seen again (the event redelivered, the listing), it is told no more.
    await redelivered(pack.id);
    await h.app.deps.purchases!.reconcile();
    const again = g.run(buyer, { name: 'credits' });
    await privateAnswer(again);
    expect(again.followUps.filter((message) => message.content.startsWith('Thank you'))).toEqual([]);
    expect(dmsTo(buyer)).toEqual([]);
  });

  it('that goes to its server when the wait is over is told by DM, in the buyer’s language, once', async () => {
    const buyer = g.members.bob;
    await shownBuyButtons(buyer, 'es-ES');
    const pack = g.emulator.purchase({ userId: buyer, skuId: PACK_LARGE });
    await rowOf(pack.id);
    // The buyer let the ten minutes pass.
    await g.db.db.update(entitlements).set({ createdAt: new Date(Date.now() - 11 * 60_000) }).where(eq(entitlements.id, pack.id));

    await Promise.all([h.app.deps.purchases!.sweep(), h.app.deps.purchases!.sweep()]);
    const [dm] = await vi.waitFor(() => {
      const sent = dmsTo(buyer);
      expect(sent).toHaveLength(1);
      return sent;
    }, 10_000);
    expect(dm!.content).toBe(`¡Gracias por tu compra! Se han añadido 500 créditos a **${g.guild.name}**, que ahora tiene 505 créditos.`);
    expect(dm!.allowed_mentions).toEqual({ parse: [] });

    await h.app.deps.purchases!.sweep();
    await h.app.deps.purchases!.reconcile();
    await redelivered(pack.id);
    await privateAnswer(g.run(buyer, { name: 'credits' }));
    expect(dmsTo(buyer)).toHaveLength(1);
  });
});

describe('a server subscription', () => {
  it('is told to its buyer by DM once, though Discord sends its event twice', async () => {
    const buyer = g.members.manager;
    await g.balance();
    const plan = g.emulator.subscribe({ userId: buyer, guildId: g.guild.id, skuId: SUBSCRIPTION, delivery: 'twice' });
    const [dm] = await vi.waitFor(() => {
      const sent = dmsTo(buyer);
      expect(sent).toHaveLength(1);
      return sent;
    }, 10_000);
    expect(dm!.content).toBe(
      `Thank you for subscribing! From now on **${g.guild.name}** gets 1,000 credits at the start of each month (UTC); 995 credits went in now, and it has 1,000 credits.`,
    );
    await h.app.deps.purchases!.reconcile();
    expect((await rowOf(plan.id)).buyerToldAt).toBeInstanceOf(Date);
    expect(dmsTo(buyer)).toHaveLength(1);
  });

  it('gives its credits when the buyer takes no DMs; the refused DM is logged and not sent again', async () => {
    const buyer = g.members.roleModerator;
    await g.balance();
    g.emulator.closeDirectMessages(buyer);
    try {
      const plan = g.emulator.subscribe({ userId: buyer, guildId: g.guild.id, skuId: SUBSCRIPTION });
      await vi.waitFor(() => expect(g.logs.some((line) => line.entitlementId === plan.id && String(line.msg).includes('takes no direct messages'))).toBe(true), 10_000);
      expect(await g.balance()).toBe(1_000);
      expect(dmPosts(buyer)).toHaveLength(1);
      await redelivered(plan.id);
      await h.app.deps.purchases!.reconcile();
      expect(dmPosts(buyer)).toHaveLength(1);
      expect(dmsTo(buyer)).toEqual([]);
    } finally {
      g.emulator.closeDirectMessages(buyer, false);
    }
  });
});
