/**
 * The real discord.js client against the Discord emulator: login, caches, commands with
 * options and attachments, deferred replies, buttons, modals, autocomplete, and Discord's
 * errors (40060, 10062, 50027, 50035, 50001) and a transparent 429 retry.
 */
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ActionRowBuilder,
  ButtonBuilder,
  ButtonStyle,
  Client,
  DiscordAPIError,
  EmbedBuilder,
  Events,
  GatewayIntentBits,
  LabelBuilder,
  MessageFlags,
  ModalBuilder,
  REST,
  RESTEvents,
  Routes,
  SlashCommandBuilder,
  TextInputBuilder,
  TextInputStyle,
} from 'discord.js';
import type { Interaction, RateLimitData, TextChannel } from 'discord.js';
import { InteractionResponseType } from 'discord-api-types/v10';
import type { APIRole } from 'discord-api-types/v10';
import { startDiscordEmulator } from '@music-bot/discord-emulator';
import type { DiscordEmulator, EmulatorChannel, EmulatorGuild, EmulatorMember } from '@music-bot/discord-emulator';

const songCommand = new SlashCommandBuilder()
  .setName('song')
  .setDescription('Make music')
  .addSubcommand((sub) =>
    sub
      .setName('create')
      .setDescription('Create a song')
      .addStringOption((option) => option.setName('prompt').setDescription('What the song is about').setRequired(true))
      .addStringOption((option) => option.setName('style').setDescription('Musical style').setAutocomplete(true))
      .addAttachmentOption((option) => option.setName('reference').setDescription('A reference track')),
  );
const feedbackCommand = new SlashCommandBuilder().setName('feedback').setDescription('Tell us what you think');
const shareCommand = new SlashCommandBuilder()
  .setName('share')
  .setDescription('Share a song')
  .addUserOption((option) => option.setName('to').setDescription('Who gets it').setRequired(true))
  .addRoleOption((option) => option.setName('group').setDescription('Which role'))
  .addChannelOption((option) => option.setName('where').setDescription('Where to post'));
const STYLES = ['rock', 'rap', 'reggae', 'jazz', 'pop'];

let emu: DiscordEmulator;
let client: Client;
let guild: EmulatorGuild;
let channel: EmulatorChannel;
let alice: EmulatorMember;
let dj: APIRole;
/** Requests the tests send malformed on purpose: their OpenAPI findings are expected. */
const deliberatelyMalformed = new Set<number>();

/** Runs `fn` on the next interaction the bot receives and hands back its result or error. */
function onNextInteraction<T>(fn: (interaction: Interaction) => Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    client.once(Events.InteractionCreate, (interaction) => {
      fn(interaction).then(resolve, reject);
    });
  });
}

function lastRequestSeq(): number {
  const last = emu.requests.at(-1);
  if (!last) throw new Error('no request recorded');
  return last.seq;
}

async function expectDiscordError(promise: Promise<unknown>, code: number, status: number): Promise<DiscordAPIError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(DiscordAPIError);
  const apiError = error as DiscordAPIError;
  expect({ code: apiError.code, status: apiError.status }).toEqual({ code, status });
  return apiError;
}

beforeAll(async () => {
  emu = await startDiscordEmulator({ botUsername: 'Melody' });
  guild = emu.createGuild({ name: 'Test guild' });
  channel = emu.createChannel(guild.id, { name: 'music' });
  dj = emu.createRole(guild.id, { name: 'DJ', permissions: 0n });
  alice = emu.addMember(guild.id, { username: 'alice', roles: [dj.id] });
  client = new Client({ intents: [GatewayIntentBits.Guilds], rest: { api: emu.apiUrl } });
  const ready = once(client, Events.ClientReady);
  await client.login(emu.botToken);
  await ready;
  await new REST({ api: emu.apiUrl })
    .setToken(emu.botToken)
    .put(Routes.applicationGuildCommands(emu.applicationId, guild.id), { body: [songCommand.toJSON(), feedbackCommand.toJSON(), shareCommand.toJSON()] });
});

afterAll(async () => {
  await client?.destroy();
  await emu?.close();
});

describe('discord.js against the emulator', () => {
  it('logs in and fills its caches from READY and GUILD_CREATE', () => {
    expect(client.user?.id).toBe(emu.botUser.id);
    expect(client.user?.username).toBe('Melody');
    expect(client.application?.id).toBe(emu.applicationId);
    const cached = client.guilds.cache.get(guild.id);
    expect(cached?.name).toBe('Test guild');
    expect(cached?.channels.cache.get(channel.id)?.name).toBe('music');
    expect(cached?.roles.cache.map((role) => role.name).sort()).toEqual(['@everyone', 'DJ', 'Melody']);
    // Without the GUILD_MEMBERS intent Discord lists only the bot's own member.
    expect([...(cached?.members.cache.keys() ?? [])]).toEqual([emu.botUser.id]);
    expect(cached?.members.me?.roles.cache.has(guild.botRoleId)).toBe(true);
  });

  it('stores the commands the bot deployed with a bulk overwrite', () => {
    const names = emu.registeredCommands(guild.id).map((command) => command.name);
    expect(names).toEqual(['song', 'feedback', 'share']);
    expect(emu.registeredCommands()).toEqual([]);
  });

  it('delivers a chat-input command with a subcommand, a string option and an attachment; deferReply then editReply', async () => {
    const reference = randomBytes(64 * 1024);
    const seen = onNextInteraction(async (interaction) => {
      if (!interaction.isChatInputCommand()) throw new Error(`unexpected ${interaction.type}`);
      await interaction.deferReply();
      const attachment = interaction.options.getAttachment('reference', true);
      const downloaded = Buffer.from(await (await fetch(attachment.url)).arrayBuffer());
      await interaction.editReply({
        embeds: [new EmbedBuilder().setTitle(`Song: ${interaction.options.getString('prompt', true)}`).setDescription('Queued')],
        components: [
          new ActionRowBuilder<ButtonBuilder>().addComponents(
            new ButtonBuilder().setCustomId('regenerate').setLabel('Regenerate').setStyle(ButtonStyle.Primary),
          ),
        ],
      });
      return {
        subcommand: interaction.options.getSubcommand(),
        downloaded,
        contentType: attachment.contentType,
        memberPermissions: interaction.memberPermissions?.has('SendMessages'),
        appPermissions: interaction.appPermissions.has('AttachFiles'),
        channelName: (interaction.channel as TextChannel | null)?.name,
        memberRoles: interaction.inCachedGuild() ? [...interaction.member.roles.cache.keys()].length : -1,
      };
    });
    const handle = emu.runCommand({
      guildId: guild.id,
      channelId: channel.id,
      userId: alice.id,
      name: 'song',
      subcommand: 'create',
      options: { prompt: 'rainy city' },
      attachments: { reference: { filename: 'reference.mp3', data: reference } },
    });

    const response = await handle.waitForResponse();
    expect(response.type).toBe(InteractionResponseType.DeferredChannelMessageWithSource);
    expect(response.ephemeral).toBe(false);
    const edited = await handle.waitForEdit((message) => message.embeds.length > 0);
    expect(edited.embeds[0]?.title).toBe('Song: rainy city');
    expect(edited.components?.[0]).toMatchObject({ type: 1, components: [{ type: 2, custom_id: 'regenerate', label: 'Regenerate' }] });
    expect(edited.author.id).toBe(emu.botUser.id);
    expect(edited.flags ?? 0).toBe(0); // the "thinking" flag is gone
    const result = await seen;
    expect(result.subcommand).toBe('create');
    expect(result.downloaded.equals(reference)).toBe(true);
    expect(result.contentType).toBe('audio/mpeg');
    expect(result.memberPermissions).toBe(true);
    expect(result.appPermissions).toBe(true);
    expect(result.channelName).toBe('music');
    expect(result.memberRoles).toBeGreaterThanOrEqual(1);
    expect(emu.channelMessages(channel.id).map((message) => message.id)).toContain(edited.id);
    expect(emu.cdnRequests.filter((request) => request.path.endsWith('/reference.mp3'))).toMatchObject([{ method: 'GET' }]);
  });

  it('gives an attachment another address, or has the CDN redirect it, when a test asks', async () => {
    const urlOf = async (reference: { filename: string; data: string; url?: string; redirectTo?: string }) => {
      const seen = onNextInteraction(async (interaction) => {
        if (!interaction.isChatInputCommand()) throw new Error(`unexpected ${interaction.type}`);
        await interaction.reply('ok');
        return interaction.options.getAttachment('reference', true).url;
      });
      emu.runCommand({ guildId: guild.id, channelId: channel.id, userId: alice.id, name: 'song', subcommand: 'create', options: { prompt: 'p' }, attachments: { reference } });
      return seen;
    };
    expect(await urlOf({ filename: 'forged.mp3', data: 'x', url: 'https://elsewhere.example/forged.mp3' })).toBe('https://elsewhere.example/forged.mp3');
    const moved = await urlOf({ filename: 'moved.mp3', data: 'x', redirectTo: 'https://elsewhere.example/moved.mp3' });
    const answer = await fetch(moved, { redirect: 'manual' });
    expect(answer.status).toBe(302);
    expect(answer.headers.get('location')).toBe('https://elsewhere.example/moved.mp3');
  });

  it('resolves user, member, role and channel options through data.resolved', async () => {
    const bob = emu.addMember(guild.id, { username: 'bob', nick: 'Bobby' });
    const seen = onNextInteraction(async (interaction) => {
      if (!interaction.isChatInputCommand()) throw new Error('expected a command');
      await interaction.reply({ content: 'shared', flags: MessageFlags.Ephemeral });
      return {
        user: interaction.options.getUser('to', true).username,
        nick: interaction.inCachedGuild() ? interaction.options.getMember('to')?.nickname : undefined,
        role: interaction.options.getRole('group')?.name,
        channel: interaction.options.getChannel('where')?.name,
        invoker: interaction.user.username,
      };
    });
    // No guild, channel or user given: the first guild, its first channel, its first added member.
    const handle = emu.runCommand({ name: 'share', options: { to: bob.id, group: dj.id, where: channel.id } });
    expect(handle.payload).toMatchObject({ guild_id: guild.id, channel_id: channel.id, member: { user: { id: alice.id } } });
    expect(await seen).toEqual({ user: 'bob', nick: 'Bobby', role: 'DJ', channel: 'music', invoker: 'alice' });
    expect((await handle.waitForResponse()).ephemeral).toBe(true);
  });

  it('answers a button click with deferUpdate then editReply, and another with update', async () => {
    const post = await (client.channels.cache.get(channel.id) as TextChannel).send({
      content: 'Your song is ready',
      components: [
        new ActionRowBuilder<ButtonBuilder>().addComponents(
          new ButtonBuilder().setCustomId('like').setLabel('Like').setStyle(ButtonStyle.Success),
          new ButtonBuilder().setCustomId('remix').setLabel('Remix').setStyle(ButtonStyle.Secondary),
        ),
      ],
    });

    const deferred = onNextInteraction(async (interaction) => {
      if (!interaction.isButton()) throw new Error('expected a button');
      await interaction.deferUpdate();
      await interaction.editReply({ content: `Liked by ${interaction.user.username}` });
      return interaction.customId;
    });
    const like = emu.clickButton({ messageId: post.id, customId: 'like', userId: alice.id });
    expect((await like.waitForResponse()).type).toBe(InteractionResponseType.DeferredMessageUpdate);
    const afterLike = await like.waitForEdit((message) => message.content.startsWith('Liked'));
    expect(afterLike.id).toBe(post.id);
    expect(afterLike.content).toBe('Liked by alice');
    expect(await deferred).toBe('like');

    const updated = onNextInteraction(async (interaction) => {
      if (!interaction.isButton()) throw new Error('expected a button');
      await interaction.update({ content: 'Remixing…', components: [] });
    });
    const remix = emu.clickButton({ messageId: post.id, customId: 'remix', userId: alice.id });
    expect((await remix.waitForResponse()).type).toBe(InteractionResponseType.UpdateMessage);
    const afterRemix = await remix.waitForEdit();
    expect(afterRemix.content).toBe('Remixing…');
    expect(afterRemix.components).toEqual([]);
    await updated;
    expect(() => emu.clickButton({ messageId: post.id, customId: 'like', userId: alice.id })).toThrow(/no button/);
  });

  it('dispatches unchecked what Discord would never send, only when asked to, and holds the answer to its rules', async () => {
    const post = await (client.channels.cache.get(channel.id) as TextChannel).send({
      content: 'Pick one',
      components: [new ActionRowBuilder<ButtonBuilder>().addComponents(new ButtonBuilder().setCustomId('like').setLabel('Like').setStyle(ButtonStyle.Success))],
    });
    // The checked ways refuse: a wrong option name, a custom id on no component.
    expect(() => emu.runCommand({ name: 'song', subcommand: 'create', options: { prompt: 'x', tempo: 120 } })).toThrow(/no option "tempo"/);
    expect(() => emu.clickButton({ messageId: post.id, customId: 'forged', userId: alice.id })).toThrow(/no button/);

    const seen = onNextInteraction(async (interaction) => {
      if (!interaction.isChatInputCommand()) throw new Error('expected a command');
      const prompt = interaction.options.data[0]?.options?.[0];
      await interaction.reply({ content: `prompt is a ${typeof prompt?.value}`, flags: MessageFlags.Ephemeral });
    });
    const wrongType = emu.dispatchUnchecked({
      type: 2,
      data: { id: '1', name: 'song', type: 1, options: [{ type: 1, name: 'create', options: [{ type: 3, name: 'prompt', value: 42 }] }] },
    });
    expect(wrongType.payload).toMatchObject({ guild_id: guild.id, channel_id: channel.id, member: { user: { id: alice.id } } });
    await seen;
    expect(wrongType.followUps).toEqual([]);
    expect((await wrongType.waitForResponse()).type).toBe(InteractionResponseType.ChannelMessageWithSource);

    const clicked = onNextInteraction(async (interaction) => {
      if (!interaction.isButton()) throw new Error('expected a button');
      return interaction.customId;
    });
    const forged = emu.dispatchUnchecked({ type: 3, messageId: post.id, data: { custom_id: 'forged', component_type: 2 } });
    expect(await clicked).toBe('forged');
    expect(forged.payload).toMatchObject({ message: { id: post.id } });
    expect(() => emu.dispatchUnchecked({ type: 3, data: { custom_id: 'forged', component_type: 2 } })).toThrow(/messageId/);
  });

  it('shows a modal with showModal and receives its submission', async () => {
    const shown = onNextInteraction(async (interaction) => {
      if (!interaction.isChatInputCommand()) throw new Error('expected a command');
      await interaction.showModal(
        new ModalBuilder()
          .setCustomId('feedback-modal')
          .setTitle('Feedback')
          .addLabelComponents(
            new LabelBuilder()
              .setLabel('Your comment')
              .setTextInputComponent(new TextInputBuilder().setCustomId('comment').setStyle(TextInputStyle.Paragraph)),
          ),
      );
    });
    const command = emu.runCommand({ guildId: guild.id, channelId: channel.id, userId: alice.id, name: 'feedback' });
    expect((await command.waitForResponse()).type).toBe(InteractionResponseType.Modal);
    await shown;
    expect(command.modal()?.title).toBe('Feedback');

    const submitted = onNextInteraction(async (interaction) => {
      if (!interaction.isModalSubmit()) throw new Error('expected a modal submit');
      const comment = interaction.fields.getTextInputValue('comment');
      await interaction.reply({ content: `Thanks for: ${comment}`, flags: MessageFlags.Ephemeral });
      return interaction.customId;
    });
    const submit = emu.submitModal({ interaction: command, fields: { comment: 'more cowbell' } });
    const reply = await submit.waitForResponse();
    expect(reply.type).toBe(InteractionResponseType.ChannelMessageWithSource);
    expect(reply.ephemeral).toBe(true);
    expect(submit.original()?.content).toBe('Thanks for: more cowbell');
    expect(await submitted).toBe('feedback-modal');
    expect(emu.channelMessages(channel.id).some((message) => message.content.startsWith('Thanks for'))).toBe(false);
    expect(() => emu.submitModal({ interaction: command, fields: { nope: 'x' } })).toThrow(/no input "nope"/);
  });

  it('returns the choices the bot answers to autocomplete', async () => {
    const answered = onNextInteraction(async (interaction) => {
      if (!interaction.isAutocomplete()) throw new Error('expected autocomplete');
      const focused = interaction.options.getFocused(true);
      await interaction.respond(STYLES.filter((style) => style.startsWith(focused.value)).map((style) => ({ name: style, value: style })));
      return { name: focused.name, prompt: interaction.options.getString('prompt') };
    });
    const choices = await emu.autocomplete({
      guildId: guild.id,
      channelId: channel.id,
      userId: alice.id,
      name: 'song',
      subcommand: 'create',
      options: { prompt: 'sunny' },
      focused: { name: 'style', value: 'r' },
    });
    expect(choices).toEqual(['rock', 'rap', 'reggae'].map((style) => ({ name: style, value: style })));
    expect(await answered).toEqual({ name: 'style', prompt: 'sunny' });
  });

  it('answers a callback with_response with the interaction callback and the created message', async () => {
    const outcome = onNextInteraction(async (interaction) => {
      if (!interaction.isChatInputCommand()) throw new Error('expected a command');
      const response = await interaction.reply({ content: 'with response', withResponse: true });
      return {
        interactionId: response.interaction.id,
        messageId: response.interaction.responseMessageId,
        loading: response.interaction.responseMessageLoading,
        content: response.resource?.message?.content,
      };
    });
    const handle = emu.runCommand({ guildId: guild.id, channelId: channel.id, userId: alice.id, name: 'feedback' });
    const result = await outcome;
    expect(result).toEqual({ interactionId: handle.id, messageId: handle.original()?.id, loading: false, content: 'with response' });
  });

  it('refuses a second acknowledgement with 40060', async () => {
    const outcome = onNextInteraction(async (interaction) => {
      if (!interaction.isChatInputCommand()) throw new Error('expected a command');
      await interaction.deferReply();
      // discord.js guards its own state; a second process or a raw call still reaches Discord.
      return expectDiscordError(
        interaction.client.rest.post(Routes.interactionCallback(interaction.id, interaction.token), {
          body: { type: InteractionResponseType.ChannelMessageWithSource, data: { content: 'again' } },
          auth: false,
        }),
        40060,
        400,
      );
    });
    const handle = emu.runCommand({ guildId: guild.id, channelId: channel.id, userId: alice.id, name: 'feedback' });
    const error = await outcome;
    expect(error.message).toBe('Interaction has already been acknowledged.');
    expect(handle.response?.type).toBe(InteractionResponseType.DeferredChannelMessageWithSource);
  });

  it('answers a first response after 3 seconds with 10062 Unknown interaction', async () => {
    const outcome = onNextInteraction(async (interaction) => {
      if (!interaction.isChatInputCommand()) throw new Error('expected a command');
      emu.clock.advance(3_001);
      return expectDiscordError(interaction.reply('too slow'), 10062, 404);
    });
    const handle = emu.runCommand({ guildId: guild.id, channelId: channel.id, userId: alice.id, name: 'feedback' });
    await outcome;
    expect(handle.response).toBeUndefined();
  });

  it('answers 50027 Invalid Webhook Token once the interaction token is older than 15 minutes', async () => {
    const outcome = onNextInteraction(async (interaction) => {
      if (!interaction.isChatInputCommand()) throw new Error('expected a command');
      await interaction.deferReply();
      await interaction.editReply('still fresh');
      emu.clock.advance(15 * 60_000 + 1);
      return expectDiscordError(interaction.editReply('too late'), 50027, 401);
    });
    const handle = emu.runCommand({ guildId: guild.id, channelId: channel.id, userId: alice.id, name: 'feedback' });
    await outcome;
    expect(handle.original()?.content).toBe('still fresh');
  });

  it('holds messages to Discord limits with 50035 Invalid Form Body', async () => {
    const outcome = onNextInteraction(async (interaction) => {
      if (!interaction.isChatInputCommand()) throw new Error('expected a command');
      const tooLong = await expectDiscordError(interaction.reply({ content: 'x'.repeat(2001) }), 50035, 400);
      deliberatelyMalformed.add(lastRequestSeq());
      const tooBig = await expectDiscordError(
        interaction.reply({ embeds: [{ description: 'a'.repeat(4000) }, { description: 'b'.repeat(2001) }] }),
        50035,
        400,
      );
      await interaction.reply('within limits');
      return { tooLong: tooLong.rawError, tooBig: tooBig.rawError };
    });
    const handle = emu.runCommand({ guildId: guild.id, channelId: channel.id, userId: alice.id, name: 'feedback' });
    const { tooLong, tooBig } = await outcome;
    expect(tooLong).toMatchObject({
      code: 50035,
      message: 'Invalid Form Body',
      errors: { data: { content: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: 'Must be 2000 or fewer in length.' }] } } },
    });
    expect(tooBig).toMatchObject({ errors: { data: { embeds: { _errors: [{ code: 'MAX_EMBED_SIZE_EXCEEDED' }] } } } });
    expect((await handle.waitForResponse()).data).toMatchObject({ content: 'within limits' });
  });

  it('answers 403 Missing Access in a channel the bot cannot see', async () => {
    const created = once(client, Events.ChannelCreate);
    const secret = emu.createChannel(guild.id, { name: 'staff' });
    await created;
    const updated = once(client, Events.ChannelUpdate);
    emu.denyChannel(secret.id);
    await updated;
    const fetched = await client.channels.fetch(channel.id, { force: true });
    expect(fetched?.id).toBe(channel.id);
    const staff = client.channels.cache.get(secret.id) as TextChannel | undefined;
    expect(staff).toBeDefined();
    await expectDiscordError(staff!.send('hello staff'), 50001, 403);
    await expectDiscordError(client.rest.get(Routes.channel(secret.id)), 50001, 403);
    expect(staff!.permissionsFor(emu.botUser.id)?.has('ViewChannel')).toBe(false);
    expect(emu.channelMessages(secret.id)).toEqual([]);
  });

  it('lets discord.js retry a 429 transparently', async () => {
    const limited: RateLimitData[] = [];
    client.rest.on(RESTEvents.RateLimited, (data) => limited.push(data));
    emu.rateLimitNext('POST /channels/{channel_id}/messages', 1, { retryAfterSeconds: 0.2 });
    const started = Date.now();
    const sent = await (client.channels.cache.get(channel.id) as TextChannel).send('after the rate limit');
    expect(Date.now() - started).toBeGreaterThanOrEqual(200);
    expect(sent.content).toBe('after the rate limit');
    const statuses = emu.requests.filter((request) => request.method === 'POST' && request.path === `/channels/${channel.id}/messages`).map((r) => r.status);
    expect(statuses.slice(-2)).toEqual([429, 200]);
    expect(limited).toHaveLength(1);
    expect(limited[0]?.retryAfter).toBeGreaterThanOrEqual(200);
    expect(emu.channelMessages(channel.id).filter((message) => message.content === 'after the rate limit')).toHaveLength(1);
  });

  it('refuses a login with the wrong token', async () => {
    const stranger = new Client({ intents: [GatewayIntentBits.Guilds], rest: { api: emu.apiUrl } });
    await expect(stranger.login('not-the-token')).rejects.toMatchObject({ code: 'TokenInvalid' });
    await stranger.destroy();
    expect(emu.requests.at(-1)).toMatchObject({ path: '/gateway/bot', status: 401, authorized: false });
  });

  it('found nothing to object to in the well-formed requests above', () => {
    expect(emu.requests.length).toBeGreaterThan(20);
    const unexpected = emu.findings.filter((finding) => !deliberatelyMalformed.has(finding.requestSeq ?? -1));
    expect(unexpected).toEqual([]);
    // The over-long content is also outside Discord's published description.
    expect(emu.findings.some((finding) => finding.kind === 'invalid-body' && finding.details.some((d) => d.includes('/data/content')))).toBe(true);
  });
});
