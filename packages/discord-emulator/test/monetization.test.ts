/**
 * Premium Apps in the emulator, over real HTTP and raw gateway sessions: SKUs, the entitlement
 * routes and their errors, paging and filters, consume, test entitlements, purchases,
 * subscriptions and refunds delivered once, twice, never or late over the gateway and as
 * signed webhook events, the interaction payload's `entitlements`, premium buttons.
 */
import { createPublicKey, verify } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DiscordAPIError, REST, makeURLSearchParams } from '@discordjs/rest';
import { Client, Events, GatewayIntentBits, type Entitlement } from 'discord.js';
import { ButtonStyle, ComponentType, GatewayDispatchEvents, GatewayOpcodes, InteractionResponseType, MessageFlags, Routes } from 'discord-api-types/v10';
import type { APIEntitlement, APIMessage, APISKU } from 'discord-api-types/v10';
import WebSocket from 'ws';
import { startDiscordEmulator } from '@music-bot/discord-emulator';
import type { DiscordEmulator, EmulatorChannel, EmulatorGuild, EmulatorMember } from '@music-bot/discord-emulator';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Frame {
  op: number;
  t: string | null;
  d: unknown;
}

/** A raw gateway session: identifies (as `shard`) and collects every dispatch it gets. */
async function session(emulator: DiscordEmulator, shard: [number, number] = [0, 1]): Promise<{ frames: Frame[]; socket: WebSocket; next: (t: string) => Promise<Frame> }> {
  const socket = new WebSocket(`${emulator.gatewayUrl}?v=10&encoding=json`);
  const frames: Frame[] = [];
  const waiters: Array<{ t: string; from: number; resolve: (frame: Frame) => void }> = [];
  let ready!: () => void;
  const isReady = new Promise<void>((resolve) => (ready = resolve));
  socket.on('message', (raw) => {
    const frame = JSON.parse(raw.toString()) as Frame;
    if (frame.op === GatewayOpcodes.Hello) {
      socket.send(JSON.stringify({ op: GatewayOpcodes.Identify, d: { token: emulator.botToken, intents: 1, properties: {}, shard } }));
      return;
    }
    if (frame.t === GatewayDispatchEvents.Ready) ready();
    frames.push(frame);
    for (const waiter of [...waiters]) {
      if (frame.t === waiter.t) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(frame);
      }
    }
  });
  cleanups.push(() => socket.close());
  await isReady;
  let read = 0;
  return {
    frames,
    socket,
    /** The next dispatch of type `t` not yet returned. */
    next: (t) => {
      const index = frames.findIndex((frame, i) => i >= read && frame.t === t);
      if (index >= 0) {
        read = index + 1;
        return Promise.resolve(frames[index]!);
      }
      return new Promise((resolve) =>
        waiters.push({
          t,
          from: frames.length,
          resolve: (frame) => {
            read = frames.indexOf(frame) + 1;
            resolve(frame);
          },
        }),
      );
    },
  };
}

function entitlementsIn(frames: Frame[], t: string): APIEntitlement[] {
  return frames.filter((frame) => frame.t === t).map((frame) => frame.d as APIEntitlement);
}

describe('SKUs and the entitlement routes', () => {
  let emu: DiscordEmulator;
  let rest: REST;
  let guild: EmulatorGuild;
  let channel: EmulatorChannel;
  let alice: EmulatorMember;
  let bob: EmulatorMember;
  let credits: APISKU;
  let lifetime: APISKU;
  let plan: APISKU;

  beforeAll(async () => {
    // No rate limits: the premium button checks send more messages per channel than Discord's 5 per 5 s.
    emu = await startDiscordEmulator({ skus: [{ name: '100 credits', type: 'consumable' }], rateLimits: false });
    credits = emu.skus()[0]!;
    lifetime = emu.createSku({ name: 'Lifetime', type: 'durable' });
    plan = emu.createSku({ name: 'Server plan', type: 'subscription' });
    guild = emu.createGuild({ name: 'Shop' });
    channel = emu.createChannel(guild.id, { name: 'general' });
    alice = emu.addMember(guild.id, { username: 'alice' });
    bob = emu.addMember(guild.id, { username: 'bob' });
    rest = new REST({ api: emu.apiUrl, retries: 0 }).setToken(emu.botToken);
  });

  afterAll(async () => {
    await emu?.close();
  });

  afterEach(() => {
    // Every request the bot made to the documented routes fits Discord's description.
    expect(emu.findings).toEqual([]);
  });

  async function refused(promise: Promise<unknown>): Promise<DiscordAPIError> {
    const error = await promise.then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(DiscordAPIError);
    return error as DiscordAPIError;
  }

  it('lists the SKUs, a subscription with its SUBSCRIPTION_GROUP twin', async () => {
    const skus = (await rest.get(Routes.skus(emu.applicationId))) as APISKU[];
    expect(skus.map((sku) => [sku.name, sku.type, sku.flags])).toEqual([
      ['100 credits', 3, 4],
      ['Lifetime', 2, 4],
      ['Server plan', 6, 4 | 128],
      ['Server plan', 5, 4 | 128],
    ]);
    expect(skus.every((sku) => sku.application_id === emu.applicationId)).toBe(true);
    expect(skus.find((sku) => sku.id === plan.id)).toMatchObject({ type: 5, slug: 'server-plan' });
    // Another application's id is refused.
    expect((await refused(rest.get(Routes.skus('1234567890123')))).status).toBe(403);
  });

  it('creates purchases and subscriptions with the documented fields', () => {
    const bought = emu.purchase({ userId: alice.id, skuId: credits.id });
    expect(bought).toEqual({
      id: expect.any(String),
      sku_id: credits.id,
      application_id: emu.applicationId,
      user_id: alice.id,
      promotion_id: null,
      type: 1,
      deleted: false,
      gift_code_flags: 0,
      consumed: false,
      starts_at: null,
      ends_at: null,
    });
    // Discord's checkout refuses a consumable the user holds unconsumed.
    expect(() => emu.purchase({ userId: alice.id, skuId: credits.id })).toThrow(/unconsumed/);
    const subscribed = emu.subscribe({ userId: bob.id, guildId: guild.id, skuId: plan.id });
    expect(subscribed).toMatchObject({ type: 8, user_id: bob.id, guild_id: guild.id, ends_at: null, consumed: false, deleted: false });
    expect(Date.parse(subscribed.starts_at ?? '')).toBeGreaterThan(Date.now() - 60_000);
    const subscriptionId = (subscribed as APIEntitlement & { subscription_id: string }).subscription_id;
    expect(emu.subscription(plan.id, subscriptionId)).toMatchObject({ user_id: bob.id, sku_ids: [plan.id], entitlement_ids: [subscribed.id], status: 0 });
    expect(() => emu.subscribe({ userId: alice.id, guildId: guild.id, skuId: plan.id })).toThrow(/already active/);
    expect(() => emu.purchase({ userId: alice.id, skuId: plan.id })).toThrow(/subscription/);
  });

  it('gets, filters and pages entitlements by id as Discord does', async () => {
    const app = emu.applicationId;
    const all = emu.entitlements();
    const list = async (query: Record<string, unknown>) =>
      ((await rest.get(Routes.entitlements(app), { query: makeURLSearchParams(query) })) as APIEntitlement[]).map((entitlement) => entitlement.id);
    const ids = all.map((entitlement) => entitlement.id);
    // Newest first, unless paging forward with `after`.
    expect(await list({})).toEqual([...ids].reverse());
    expect(await list({ after: '0', limit: 1 })).toEqual([ids[0]]);
    expect(await list({ before: ids[ids.length - 1], limit: 100 })).toEqual(ids.slice(0, -1).reverse());
    expect(await list({ user_id: alice.id })).toEqual(all.filter((e) => e.user_id === alice.id).map((e) => e.id).reverse());
    expect(await list({ guild_id: guild.id })).toEqual(all.filter((e) => e.guild_id === guild.id).map((e) => e.id));
    expect(await list({ sku_ids: `${credits.id},${lifetime.id}` })).toEqual(all.filter((e) => e.sku_id === credits.id).map((e) => e.id));
    expect((await rest.get(Routes.entitlement(app, ids[0]!))) as APIEntitlement).toEqual(all[0]);

    expect((await refused(rest.get(Routes.entitlement(app, '123456789')))).code).toBe(10029);
    const badLimit = await refused(rest.get(Routes.entitlements(app), { query: makeURLSearchParams({ limit: 101 }) }));
    expect(badLimit).toMatchObject({ status: 400, code: 50035 });
    emu.findings.splice(0); // limit 101 is also outside the description: that finding is the point here
    expect((await refused(rest.get(Routes.entitlements('1234567890123')))).status).toBe(403);
  });

  it('answers List Entitlements in the order set, which Discord does not document', async () => {
    const own = await startDiscordEmulator({ skus: [{ name: '100 credits', type: 'consumable' }], rateLimits: false, entitlementOrder: 'newest-first' });
    cleanups.push(() => own.close());
    const shop = own.createGuild({ name: 'Orders' });
    const ids = ['a', 'b', 'c', 'd'].map((username) => own.purchase({ userId: own.addMember(shop.id, { username }).id, skuId: own.skus()[0]!.id }).id);
    const ownRest = new REST({ api: own.apiUrl, retries: 0 }).setToken(own.botToken);
    const list = async (query: Record<string, unknown>) =>
      ((await ownRest.get(Routes.entitlements(own.applicationId), { query: makeURLSearchParams(query) })) as APIEntitlement[]).map((entitlement) => entitlement.id);
    // The newest page after the cursor, not the nearest one.
    expect(await list({ after: '0', limit: 2 })).toEqual(ids.slice(-2).reverse());
    expect(await list({ before: ids.at(-1), limit: 2 })).toEqual(ids.slice(-3, -1).reverse());
    // The oldest page before the cursor, not the nearest one.
    own.setEntitlementOrder('oldest-first');
    expect(await list({ limit: 2 })).toEqual(ids.slice(0, 2));
    expect(await list({ before: ids.at(-1), limit: 2 })).toEqual(ids.slice(0, 2));
    expect(await list({ after: ids[0], limit: 2 })).toEqual(ids.slice(1, 3));
    // The page nearest the cursor, newest first without one.
    own.setEntitlementOrder('from-cursor');
    expect(await list({ limit: 2 })).toEqual(ids.slice(-2).reverse());
    expect(await list({ after: ids[0], limit: 2 })).toEqual(ids.slice(1, 3));
    expect(await list({ before: ids.at(-1), limit: 2 })).toEqual(ids.slice(-3, -1).reverse());
    expect(own.findings).toEqual([]);
  });

  it('consumes a consumable once; consuming again changes nothing and is recorded; other SKUs are refused', async () => {
    const app = emu.applicationId;
    const bought = emu.entitlements().find((entitlement) => entitlement.sku_id === credits.id)!;
    await rest.post(Routes.consumeEntitlement(app, bought.id));
    expect(emu.entitlement(bought.id)?.consumed).toBe(true);
    await rest.post(Routes.consumeEntitlement(app, bought.id));
    expect(emu.entitlementRecords.filter((record) => record.action === 'consume')).toEqual([
      expect.objectContaining({ entitlementId: bought.id, repeated: false }),
      expect.objectContaining({ entitlementId: bought.id, repeated: true }),
    ]);
    // Consumed, the SKU can be bought again.
    const again = emu.purchase({ userId: alice.id, skuId: credits.id });
    expect(again.id).not.toBe(bought.id);

    const durable = emu.purchase({ userId: alice.id, skuId: lifetime.id });
    expect(() => emu.purchase({ userId: alice.id, skuId: lifetime.id })).toThrow(/already owns/);
    expect(await refused(rest.post(Routes.consumeEntitlement(app, durable.id)))).toMatchObject({ status: 400, code: 40018 });
    expect(await refused(rest.post(Routes.consumeEntitlement(app, '123456789')))).toMatchObject({ status: 404, code: 10029 });
    expect((await refused(rest.post(Routes.consumeEntitlement('1234567890123', again.id)))).status).toBe(403);
  });

  it('creates partial test entitlements and deletes only those', async () => {
    const app = emu.applicationId;
    const test = (await rest.post(Routes.entitlements(app), { body: { sku_id: plan.id, owner_id: alice.id, owner_type: 2 } })) as APIEntitlement;
    expect(test).toMatchObject({ sku_id: plan.id, user_id: alice.id, type: 4, deleted: false });
    expect(test).not.toHaveProperty('starts_at');
    expect(test).not.toHaveProperty('ends_at');
    expect(test).not.toHaveProperty('subscription_id');
    const forGuild = (await rest.post(Routes.entitlements(app), { body: { sku_id: lifetime.id, owner_id: guild.id, owner_type: 1 } })) as APIEntitlement;
    expect(forGuild).toMatchObject({ guild_id: guild.id });

    expect(await refused(rest.post(Routes.entitlements(app), { body: { sku_id: plan.id, owner_id: alice.id, owner_type: 2 } }))).toMatchObject({ code: 40074 });
    expect(await refused(rest.post(Routes.entitlements(app), { body: { sku_id: '123456789', owner_id: alice.id, owner_type: 2 } }))).toMatchObject({ status: 404, code: 10027 });
    expect(await refused(rest.post(Routes.entitlements(app), { body: { sku_id: plan.id, owner_id: '123456789', owner_type: 1 } }))).toMatchObject({ status: 404, code: 10004 });

    await rest.delete(Routes.entitlement(app, test.id));
    expect(emu.entitlement(test.id)?.deleted).toBe(true);
    const hidden = (await rest.get(Routes.entitlements(app), { query: makeURLSearchParams({ user_id: alice.id }) })) as APIEntitlement[];
    expect(hidden.map((entitlement) => entitlement.id)).not.toContain(test.id);
    const shown = (await rest.get(Routes.entitlements(app), { query: makeURLSearchParams({ user_id: alice.id, exclude_deleted: false }) })) as APIEntitlement[];
    expect(shown.map((entitlement) => entitlement.id)).toContain(test.id);

    const purchased = emu.entitlements().find((entitlement) => entitlement.type === 1)!;
    expect(await refused(rest.delete(Routes.entitlement(app, purchased.id)))).toMatchObject({ status: 400, code: 40019 });
  });

  it('ends a subscription (ends_at, hidden by exclude_ended) and refunds (deleted)', async () => {
    const app = emu.applicationId;
    const subscribed = emu.entitlements().find((entitlement) => entitlement.type === 8)!;
    const ended = emu.endSubscription(subscribed.id);
    expect(ended.ends_at).toEqual(expect.any(String));
    const active = (await rest.get(Routes.entitlements(app), { query: makeURLSearchParams({ guild_id: guild.id, exclude_ended: true }) })) as APIEntitlement[];
    expect(active.map((entitlement) => entitlement.id)).not.toContain(subscribed.id);
    const withEnded = (await rest.get(Routes.entitlements(app), { query: makeURLSearchParams({ guild_id: guild.id }) })) as APIEntitlement[];
    expect(withEnded.map((entitlement) => entitlement.id)).toContain(subscribed.id);
    const subscriptions = (await rest.get(Routes.skuSubscriptions(plan.id), { query: makeURLSearchParams({ user_id: bob.id }) })) as Array<{ id: string; status: number }>;
    expect(subscriptions).toEqual([expect.objectContaining({ status: 1 })]);
    expect(await rest.get(Routes.skuSubscription(plan.id, subscriptions[0]!.id))).toMatchObject({ user_id: bob.id });

    const durable = emu.entitlements().find((entitlement) => entitlement.sku_id === lifetime.id && entitlement.type === 1)!;
    emu.refund(durable.id);
    expect(emu.entitlement(durable.id)).toMatchObject({ deleted: true });
    expect(emu.entitlementRecords.map((record) => record.action)).toEqual(expect.arrayContaining(['purchase', 'subscribe', 'end', 'refund', 'consume', 'create-test', 'delete-test']));
  });

  it('puts the member\'s and the guild\'s active entitlements on interaction payloads', () => {
    const carolMember = emu.addMember(guild.id, { username: 'carol' });
    const plan2 = emu.createSku({ name: 'Gold plan', type: 'subscription' });
    const guildWide = emu.subscribe({ userId: bob.id, guildId: guild.id, skuId: plan2.id });
    const own = emu.purchase({ userId: carolMember.id, skuId: credits.id });
    const refunded = emu.purchase({ userId: carolMember.id, skuId: lifetime.id });
    emu.refund(refunded.id);
    const handle = emu.runCommand({ guildId: guild.id, channelId: channel.id, userId: carolMember.id, name: 'ping' });
    const ids = handle.payload.entitlements.map((entitlement) => entitlement.id);
    expect(ids).toContain(guildWide.id);
    expect(ids).toContain(own.id);
    expect(ids).not.toContain(refunded.id);
    // The ended subscription of the earlier test is not there.
    expect(handle.payload.entitlements.every((entitlement) => entitlement.ends_at === null || entitlement.ends_at === undefined)).toBe(true);
    // Another member sees the guild's, not carol's.
    const forAlice = emu.runCommand({ guildId: guild.id, channelId: channel.id, userId: alice.id, name: 'ping' }).payload.entitlements.map((entitlement) => entitlement.id);
    expect(forAlice).toContain(guildWide.id);
    expect(forAlice).not.toContain(own.id);
  });

  it('holds premium buttons to Discord\'s rules in messages, interaction responses and follow-ups', async () => {
    const premium = { type: ComponentType.Button, style: ButtonStyle.Premium, sku_id: credits.id };
    const row = (button: Record<string, unknown>) => [{ type: ComponentType.ActionRow, components: [button] }];
    const message = (await rest.post(Routes.channelMessages(channel.id), { body: { content: 'Buy credits', components: row(premium) } })) as APIMessage;
    expect(message.components).toHaveLength(1);
    expect(emu.findings).toEqual([]);

    for (const [button, field] of [
      [{ type: 2, style: 6 }, 'sku_id'],
      [{ ...premium, sku_id: '123456789' }, 'sku_id'],
      [{ ...premium, custom_id: 'buy' }, 'custom_id'],
      [{ ...premium, label: 'Buy' }, 'label'],
      [{ ...premium, url: 'https://example.com' }, 'url'],
      [{ ...premium, emoji: { name: '🛒' } }, 'emoji'],
    ] as const) {
      const error = await refused(rest.post(Routes.channelMessages(channel.id), { body: { components: row(button) } }));
      expect(error).toMatchObject({ status: 400, code: 50035 });
      expect(error.rawError).toMatchObject({ errors: { components: { 0: { components: { 0: { [field]: { _errors: [expect.objectContaining({ code: expect.any(String) })] } } } } } } });
    }
    const edit = await refused(rest.patch(Routes.channelMessage(channel.id, message.id), { body: { components: row({ ...premium, label: 'Buy' }) } }));
    expect(edit.code).toBe(50035);

    const handle = emu.runCommand({ guildId: guild.id, channelId: channel.id, userId: alice.id, name: 'shop' });
    const callback = await fetch(`${emu.apiUrl}/v10${Routes.interactionCallback(handle.id, handle.token)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: InteractionResponseType.ChannelMessageWithSource, data: { components: row({ ...premium, custom_id: 'x' }) } }),
    });
    expect(callback.status).toBe(400);
    expect(await callback.json()).toMatchObject({ code: 50035, errors: { data: { components: { 0: { components: { 0: { custom_id: {} } } } } } } });
    const good = await fetch(`${emu.apiUrl}/v10${Routes.interactionCallback(handle.id, handle.token)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: InteractionResponseType.ChannelMessageWithSource, data: { flags: MessageFlags.Ephemeral, components: row(premium) } }),
    });
    expect(good.status).toBe(204);
    const followUp = await refused(rest.post(Routes.webhook(emu.applicationId, handle.token), { body: { components: row({ ...premium, label: 'x' }) }, auth: false }));
    expect(followUp.code).toBe(50035);
    emu.findings.splice(0); // findings of the refused bodies (the description's own checks) are not the point here
  });

  it('buys through a premium button only for someone who sees it, and the bot gets no interaction', async () => {
    const premium = { type: ComponentType.Button, style: ButtonStyle.Premium, sku_id: lifetime.id };
    const dave = emu.addMember(guild.id, { username: 'dave' });
    const erin = emu.addMember(guild.id, { username: 'erin' });
    const message = (await rest.post(Routes.channelMessages(channel.id), { body: { components: [{ type: 1, components: [premium] }] } })) as APIMessage;
    const before = emu.requests.length;
    const bought = emu.clickPremiumButton({ messageId: message.id, skuId: lifetime.id, userId: dave.id });
    expect(bought).toMatchObject({ type: 1, user_id: dave.id, sku_id: lifetime.id });
    expect(bought).not.toHaveProperty('guild_id');
    expect(() => emu.clickPremiumButton({ messageId: message.id, skuId: credits.id, userId: dave.id })).toThrow(/no premium button/);

    // An ephemeral reply's button is only its recipient's.
    const handle = emu.runCommand({ guildId: guild.id, channelId: channel.id, userId: erin.id, name: 'shop' });
    await fetch(`${emu.apiUrl}/v10${Routes.interactionCallback(handle.id, handle.token)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        type: InteractionResponseType.ChannelMessageWithSource,
        data: { flags: MessageFlags.Ephemeral, components: [{ type: 1, components: [{ ...premium, sku_id: plan.id }] }] },
      }),
    });
    await handle.waitForResponse();
    const ephemeralId = handle.original()!.id;
    expect(handle.original()?.ephemeral).toBe(true);
    expect(() => emu.clickPremiumButton({ messageId: ephemeralId, skuId: plan.id, userId: dave.id })).toThrow(/ephemeral/);
    const other = emu.createGuild({ name: 'Elsewhere' });
    const subscribed = emu.clickPremiumButton({ messageId: ephemeralId, skuId: plan.id, userId: erin.id });
    expect(subscribed).toMatchObject({ type: 8, guild_id: guild.id, user_id: erin.id });
    expect(subscribed.guild_id).not.toBe(other.id);
    expect(emu.requests.length).toBe(before + 1); // only the bot's own callback
  });
});

describe('entitlement events over the gateway', () => {
  it('reach every session of the shard: once, twice, never (only REST shows it) or late', async () => {
    const emu = await startDiscordEmulator({ shards: { recommended: 2, maxConcurrency: 2, identifyWindowMs: 0 }, skus: [{ name: '100 credits', type: 'consumable' }] });
    cleanups.push(() => emu.close());
    const [credits] = emu.skus();
    // A guild on shard 1: (id >> 22) % 2 === 1.
    const guild = emu.createGuild({ id: String(1_300_000_000_001n << 22n), name: 'Shard one' });
    const users = Array.from({ length: 5 }, (_, i) => emu.addMember(guild.id, { username: `buyer-${i}` }));
    const plan = emu.createSku({ name: 'Server plan', type: 'subscription' });
    const zeroA = await session(emu, [0, 2]);
    const zeroB = await session(emu, [0, 2]);
    const one = await session(emu, [1, 2]);

    const bought = emu.purchase({ userId: users[0]!.id, skuId: credits!.id });
    for (const shardZero of [zeroA, zeroB]) expect((await shardZero.next(GatewayDispatchEvents.EntitlementCreate)).d).toEqual(bought);
    // A guild's entitlement goes to the guild's shard.
    const subscribed = emu.subscribe({ userId: users[1]!.id, guildId: guild.id, skuId: plan.id });
    expect((await one.next(GatewayDispatchEvents.EntitlementCreate)).d).toEqual(subscribed);

    const twice = emu.purchase({ userId: users[2]!.id, skuId: credits!.id, delivery: 'twice' });
    expect((await zeroA.next(GatewayDispatchEvents.EntitlementCreate)).d).toEqual(twice);
    expect((await zeroA.next(GatewayDispatchEvents.EntitlementCreate)).d).toEqual(twice);

    const never = emu.purchase({ userId: users[3]!.id, skuId: credits!.id, delivery: 'never' });
    const late = emu.purchase({ userId: users[4]!.id, skuId: credits!.id, delivery: { delayMs: 300 } });
    expect(emu.entitlementDeliveries.filter((record) => record.entitlementId === late.id)).toEqual([]);
    expect((await zeroA.next(GatewayDispatchEvents.EntitlementCreate)).d).toEqual(late);
    // The late one has arrived after the withheld one was made: the withheld one never came.
    expect(entitlementsIn(zeroA.frames, GatewayDispatchEvents.EntitlementCreate).map((entitlement) => entitlement.id)).not.toContain(never.id);
    expect(emu.entitlementDeliveries.find((record) => record.entitlementId === never.id)).toMatchObject({ via: 'withheld' });
    const listed = (await (
      await fetch(`${emu.apiUrl}/v10/applications/${emu.applicationId}/entitlements?user_id=${users[3]!.id}`, { headers: { authorization: `Bot ${emu.botToken}` } })
    ).json()) as APIEntitlement[];
    expect(listed.map((entitlement) => entitlement.id)).toEqual([never.id]);

    const ended = emu.endSubscription(subscribed.id);
    expect((await one.next(GatewayDispatchEvents.EntitlementUpdate)).d).toEqual(ended);
    emu.refund(bought.id);
    expect((await zeroB.next(GatewayDispatchEvents.EntitlementDelete)).d).toMatchObject({ id: bought.id, deleted: true });
    emu.redeliverEntitlementEvent(bought.id);
    expect((await zeroB.next(GatewayDispatchEvents.EntitlementDelete)).d).toMatchObject({ id: bought.id });
    emu.redeliverEntitlementEvent(subscribed.id, 'create');
    expect((await one.next(GatewayDispatchEvents.EntitlementCreate)).d).toMatchObject({ id: subscribed.id });
    expect(entitlementsIn(one.frames, GatewayDispatchEvents.EntitlementCreate).some((entitlement) => entitlement.id === bought.id)).toBe(false);
    expect(emu.findings).toEqual([]);
  });
});

describe('discord.js against the emulated Premium Apps', () => {
  it('hears ENTITLEMENT_CREATE, lists and consumes through its own managers, with no finding', async () => {
    const emu = await startDiscordEmulator({ skus: [{ name: '100 credits', type: 'consumable' }] });
    cleanups.push(() => emu.close());
    const [credits] = emu.skus();
    const guild = emu.createGuild({ name: 'discord.js shop' });
    const buyer = emu.addMember(guild.id, { username: 'buyer' });
    const client = new Client({ intents: [GatewayIntentBits.Guilds], rest: { api: emu.apiUrl } });
    cleanups.push(() => client.destroy());
    await client.login(emu.botToken);
    await emu.waitForBotReady();

    const heard = new Promise<Entitlement>((resolve) => client.once(Events.EntitlementCreate, resolve));
    const bought = emu.purchase({ userId: buyer.id, skuId: credits!.id });
    const entitlement = await heard;
    expect({ id: entitlement.id, skuId: entitlement.skuId, userId: entitlement.userId, guildId: entitlement.guildId, consumed: entitlement.consumed }).toEqual({
      id: bought.id,
      skuId: credits!.id,
      userId: buyer.id,
      guildId: null,
      consumed: false,
    });
    const listed = await client.application!.entitlements.fetch({ user: buyer.id, skus: [credits!.id], excludeEnded: true, excludeDeleted: true });
    expect([...listed.keys()]).toEqual([bought.id]);
    await entitlement.consume();
    expect(emu.entitlement(bought.id)?.consumed).toBe(true);
    const skus = await client.application!.fetchSKUs();
    expect([...skus.keys()]).toEqual([credits!.id]);
    expect(emu.findings).toEqual([]);
  });

  it('reports a query the description does not take on the documented routes', async () => {
    const emu = await startDiscordEmulator();
    cleanups.push(() => emu.close());
    const answer = await fetch(`${emu.apiUrl}/v10/applications/${emu.applicationId}/skus?with_prices=true`, { headers: { authorization: `Bot ${emu.botToken}` } });
    expect(answer.status).toBe(200);
    expect(emu.findings).toEqual([expect.objectContaining({ kind: 'invalid-query', route: '/applications/{application_id}/skus', operationId: 'list_skus' })]);
  });
});

describe('entitlement events as webhook events', () => {
  type Handler = (request: IncomingMessage, body: string, response: ServerResponse) => void;

  async function receiver(handler: Handler): Promise<string> {
    const server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => handler(request, body, response));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`;
  }

  function signed(emulator: DiscordEmulator, request: IncomingMessage, body: string): boolean {
    const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(emulator.publicKey, 'hex').toString('base64url') }, format: 'jwk' });
    const signature = String(request.headers['x-signature-ed25519'] ?? '');
    const timestamp = String(request.headers['x-signature-timestamp'] ?? '');
    return /^[0-9a-f]{128}$/.test(signature) && verify(null, Buffer.from(timestamp + body), key, Buffer.from(signature, 'hex'));
  }

  it('are saved after a PING answered 204, signed, and retried with backoff until acknowledged', async () => {
    const emu = await startDiscordEmulator({ skus: [{ name: '100 credits', type: 'consumable' }], webhookEvents: { initialDelayMs: 50 } });
    cleanups.push(() => emu.close());
    const [credits] = emu.skus();
    const guild = emu.createGuild({ name: 'Webhooks' });
    const buyer = emu.addMember(guild.id, { username: 'buyer' });

    const rude = await receiver((_request, _body, response) => response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'));
    await expect(emu.setWebhookEventsEndpoint(rude)).rejects.toThrow(/204/);

    const received: Array<{ verified: boolean; payload: { version: number; application_id: string; type: number; event?: { type: string; timestamp: string; data: APIEntitlement } } }> = [];
    let failFirst = true;
    const url = await receiver((request, body, response) => {
      const verified = signed(emu, request, body);
      const payload = JSON.parse(body) as (typeof received)[number]['payload'];
      received.push({ verified, payload });
      if (!verified) return void response.writeHead(401).end();
      if (payload.type === 1 && failFirst) {
        failFirst = false;
        return void response.writeHead(500).end();
      }
      response.writeHead(204).end();
    });
    await emu.setWebhookEventsEndpoint(url);
    expect(received[0]?.payload).toEqual({ version: 1, application_id: emu.applicationId, type: 0 });

    const gateway = await session(emu);
    const bought = emu.purchase({ userId: buyer.id, skuId: credits!.id });
    await expect.poll(() => emu.entitlementDeliveries.filter((record) => record.via === 'webhook' && record.final)).toHaveLength(1);
    const attempts = emu.entitlementDeliveries.filter((record) => record.via === 'webhook');
    expect(attempts.map((attempt) => [attempt.attempt, attempt.status, attempt.ok])).toEqual([
      [1, 500, false],
      [2, 204, true],
    ]);
    expect(attempts[1]!.at - attempts[0]!.at).toBeGreaterThanOrEqual(45);
    const events = received.filter((entry) => entry.payload.type === 1);
    expect(events).toHaveLength(2);
    expect(events.every((entry) => entry.verified)).toBe(true);
    expect(events[0]!.payload).toEqual({
      version: 1,
      application_id: emu.applicationId,
      type: 1,
      event: { type: 'ENTITLEMENT_CREATE', timestamp: expect.any(String), data: bought },
    });
    expect(events[1]!.payload).toEqual(events[0]!.payload);
    // Gateway sessions still get the dispatch.
    expect((await gateway.next(GatewayDispatchEvents.EntitlementCreate)).d).toEqual(bought);

    // Twice: two events; never: none.
    const never = emu.purchase({ userId: emu.addMember(guild.id, { username: 'n' }).id, skuId: credits!.id, delivery: 'never' });
    const twice = emu.purchase({ userId: emu.addMember(guild.id, { username: 't' }).id, skuId: credits!.id, delivery: 'twice' });
    await expect.poll(() => received.filter((entry) => entry.payload.event?.data.id === twice.id)).toHaveLength(2);
    expect(received.some((entry) => entry.payload.event?.data.id === never.id)).toBe(false);
  });

  it('gives up after the retry window, and sends only subscribed events', async () => {
    const emu = await startDiscordEmulator({ skus: [{ name: '100 credits', type: 'consumable' }], webhookEvents: { initialDelayMs: 20, giveUpAfterMs: 2_000 } });
    cleanups.push(() => emu.close());
    const [credits] = emu.skus();
    const guild = emu.createGuild({ name: 'Webhooks' });
    const buyer = emu.addMember(guild.id, { username: 'buyer' });
    const seen: string[] = [];
    const url = await receiver((request, body, response) => {
      const payload = JSON.parse(body) as { type: number; event?: { type: string } };
      if (payload.type === 0) return void response.writeHead(204).end();
      seen.push(payload.event?.type ?? '');
      response.writeHead(503).end();
    });
    await emu.setWebhookEventsEndpoint(url, ['ENTITLEMENT_DELETE']);
    const bought = emu.purchase({ userId: buyer.id, skuId: credits!.id });
    emu.refund(bought.id);
    await expect.poll(() => emu.entitlementDeliveries.some((record) => record.via === 'webhook' && record.final), { timeout: 15_000 }).toBe(true);
    const attempts = emu.entitlementDeliveries.filter((record) => record.via === 'webhook');
    expect(attempts.length).toBeGreaterThanOrEqual(3);
    expect(attempts.every((attempt) => attempt.type === 'ENTITLEMENT_DELETE' && attempt.status === 503 && !attempt.ok)).toBe(true);
    expect(new Set(seen)).toEqual(new Set(['ENTITLEMENT_DELETE']));
  });
});
