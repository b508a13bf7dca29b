/**
 * An interaction POSTed to `/interactions` (INTERACTIONS=http) carries the member's
 * entitlements to the same path as the gateway's: a pack whose event never came goes in at the
 * buyer's next command, menu pick or form, in the server they were offered it in, and is
 * consumed. Discord is the emulator, delivering by HTTP; the ledger is the real one.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { eq } from 'drizzle-orm';
import { ApplicationCommandType } from 'discord-api-types/v10';
import { ActionRowBuilder, StringSelectMenuBuilder } from 'discord.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDiscordEmulator, type DiscordEmulator } from '@music-bot/discord-emulator';
import { loadConfig } from '../../../src/config.js';
import { getBalance } from '../../../src/credits/index.js';
import { entitlements } from '../../../src/db/schema.js';
import { defineCommand, type Command } from '../../../src/discord/command.js';
import { commandSettings, type BaseCommandContext } from '../../../src/discord/context.js';
import { createHttpInteractionReceiver, type HttpInteractionReceiver } from '../../../src/discord/http-interactions.js';
import { answerInPlace } from '../../../src/discord/respond.js';
import { encodeCustomId } from '../../../src/discord-rest/custom-ids.js';
import { createEntitlementsApi } from '../../../src/discord-rest/entitlements-api.js';
import { registerInteractionsRoute } from '../../../src/http/interactions.js';
import { silentLogger } from '../../../src/logger.js';
import { createCatalog } from '../../../src/premium/catalog.js';
import { createPurchases, type Purchases } from '../../../src/premium/purchases.js';
import { createTestDatabase } from '../../support/database.js';

const db = await createTestDatabase();
const PACK = '1800000000000000001';

const MENU = encodeCustomId({ action: 'play-pick', subject: 'fixture' });
const FORM = encodeCustomId({ action: 'make-song-modal', subject: 'fixture' });

/** Answers with a menu; the menu and a form (as if opened) answer in words. */
const hello = defineCommand({
  definition: { name: 'hello', description: 'hello (a fixture)', type: ApplicationCommandType.ChatInput },
  acknowledge: () => 'ephemeral',
  execute: async (interaction) => {
    const menu = new StringSelectMenuBuilder().setCustomId(MENU).addOptions({ label: 'one', value: 'one' });
    await answerInPlace(interaction, { content: 'hello', components: [new ActionRowBuilder<StringSelectMenuBuilder>().addComponents(menu)] });
  },
  selects: {
    'play-pick': { acknowledge: 'ephemeral', execute: async (interaction) => answerInPlace(interaction, { content: `picked ${interaction.values[0]}` }) },
  },
  modals: {
    'make-song-modal': { acknowledge: 'ephemeral', execute: async (interaction) => answerInPlace(interaction, { content: 'sent' }) },
  },
}) as Command;

let emulator: DiscordEmulator;
let server: FastifyInstance;
let receiver: HttpInteractionReceiver;
let purchases: Purchases;

beforeAll(async () => {
  emulator = await startDiscordEmulator({
    botToken: 'MTA5ODc2NTQzMjEwOTg3NjU0.emulator.http-entitlements-token',
    skus: [{ id: PACK, name: '100 credits', type: 'consumable' }],
    rateLimits: false,
  });
  const config = loadConfig({
    require: [],
    env: {
      DISCORD_TOKEN: emulator.botToken,
      DISCORD_APPLICATION_ID: emulator.applicationId,
      DISCORD_API_URL: emulator.apiUrl,
      INTERACTIONS: 'http',
      DISCORD_PUBLIC_KEY: emulator.publicKey,
    },
  });
  purchases = createPurchases({
    db: db.db,
    api: createEntitlementsApi({ apiUrl: emulator.apiUrl, token: emulator.botToken, applicationId: emulator.applicationId }),
    catalog: createCatalog({ creditPacks: [{ skuId: PACK, credits: 100 }], subscriptionAllowances: [] }),
    logger: silentLogger,
    applicationId: emulator.applicationId,
    startingCredits: 0,
    packClaimMinutes: 0,
  });
  // The router reads only these for a command that spends nothing.
  const context = { settings: commandSettings(config), logger: silentLogger, purchases } as BaseCommandContext;
  receiver = createHttpInteractionReceiver({ context, commands: [hello], discord: { apiUrl: config.discordApiUrl, token: config.discordToken } });
  server = Fastify();
  server.removeContentTypeParser('application/json');
  server.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
  registerInteractionsRoute(server, { publicKey: config.discordPublicKey!, receiver, logger: silentLogger, logRefusal: () => {} });
  await emulator.setInteractionsEndpoint(`${await server.listen({ port: 0, host: '127.0.0.1' })}/interactions`);
});

afterAll(async () => {
  await server?.close();
  await receiver?.stop();
  await purchases?.stop();
  await emulator?.close();
});

/** A guild named `name` with a music channel, a buyer, and the test's command registered there. */
async function shopWithHello(name: string) {
  const guild = emulator.createGuild({ name });
  const channel = emulator.createChannel(guild.id, { name: 'music' });
  const buyer = emulator.addMember(guild.id, { username: 'buyer' }).id;
  await fetch(`${emulator.apiUrl}/v10/applications/${emulator.applicationId}/guilds/${guild.id}/commands`, {
    method: 'POST',
    headers: { authorization: `Bot ${emulator.botToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(hello.definition),
  });
  return { guild, channel, buyer };
}

describe('entitlements on interactions over HTTP', () => {
  it("take a pack whose event never came into the buyer's server at their next command, as the gateway's do", async () => {
    const { guild, channel, buyer } = await shopWithHello('Shop');
    // Shown the Buy button here, the buyer buys; Discord's event never reaches the bot.
    await purchases.recordOffer(buyer, guild.id);
    const pack = emulator.purchase({ userId: buyer, skuId: PACK, delivery: 'never' });

    const handle = emulator.runCommand({ guildId: guild.id, channelId: channel.id, userId: buyer, name: 'hello' });
    await handle.waitForResponse();
    await expect.poll(async () => getBalance(db.db, guild.id), { timeout: 10_000 }).toBe(100);
    const [row] = await db.db.select().from(entitlements).where(eq(entitlements.id, pack.id));
    expect(row).toMatchObject({ guildId: guild.id, kind: 'pack' });
    await expect.poll(() => emulator.entitlement(pack.id)?.consumed, { timeout: 10_000 }).toBe(true);
    expect(emulator.findings).toEqual([]);
  });

  it('take a pack bought while a menu was open at its pick, and one bought while a form was open at its sending', async () => {
    const { guild, channel, buyer } = await shopWithHello('Forms');
    const command = emulator.runCommand({ guildId: guild.id, channelId: channel.id, userId: buyer, name: 'hello' });
    await command.waitForResponse();
    const messageId = command.original()!.id;
    await purchases.recordOffer(buyer, guild.id);

    const first = emulator.purchase({ userId: buyer, skuId: PACK, delivery: 'never' });
    const pick = emulator.selectOption({ messageId, customId: MENU, userId: buyer, values: ['one'] });
    await pick.waitForResponse();
    await expect.poll(async () => getBalance(db.db, guild.id), { timeout: 10_000 }).toBe(100);
    await expect.poll(() => emulator.entitlement(first.id)?.consumed, { timeout: 10_000 }).toBe(true);

    const second = emulator.purchase({ userId: buyer, skuId: PACK, delivery: 'never' });
    const form = emulator.submitModal({ guildId: guild.id, channelId: channel.id, userId: buyer, customId: FORM, fields: {} });
    await form.waitForResponse();
    await expect.poll(async () => getBalance(db.db, guild.id), { timeout: 10_000 }).toBe(200);
    await expect.poll(() => emulator.entitlement(second.id)?.consumed, { timeout: 10_000 }).toBe(true);
    expect(emulator.findings).toEqual([]);
  });
});
