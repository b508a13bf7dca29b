/**
 * An interaction read from its raw payload (interactions over HTTP): what the router and the
 * handlers read of it, and its first answer, as discord.js would give them over the gateway.
 */
import { API } from '@discordjs/core/http-only';
import { REST } from '@discordjs/rest';
import {
  ApplicationCommandOptionType,
  ApplicationCommandType,
  ChannelType,
  ComponentType,
  InteractionResponseType,
  InteractionType,
  MessageFlags,
  PermissionFlagsBits,
  type APIInteraction,
  type APIInteractionResponse,
} from 'discord-api-types/v10';
import { ButtonBuilder, ButtonStyle, ActionRowBuilder } from 'discord.js';
import { describe, expect, it } from 'vitest';
import { PayloadInteraction } from '../../../src/discord/payload-interaction.js';
import { readArgs } from '../../../src/discord/options.js';

const base = {
  id: '1300000000000000000',
  application_id: '1100000000000000000',
  token: 'interaction-token',
  version: 1,
  guild_id: '1200000000000000000',
  locale: 'de',
  guild_locale: 'en-US',
  app_permissions: '0',
  authorizing_integration_owners: {},
  attachment_size_limit: 10_485_760,
  entitlements: [],
  member: {
    user: { id: '1400000000000000000', username: 'alice', discriminator: '0', global_name: null, avatar: null },
    roles: ['1500000000000000000'],
    permissions: String(PermissionFlagsBits.ManageGuild),
    joined_at: '2026-01-01T00:00:00.000Z',
    deaf: false,
    mute: false,
    flags: 0,
  },
  channel: { id: '1600000000000000000', type: ChannelType.PublicThread, parent_id: '1700000000000000000' },
  channel_id: '1600000000000000000',
};

function read(payload: Record<string, unknown>) {
  const answers: APIInteractionResponse[] = [];
  const rest = new REST();
  const interaction = new PayloadInteraction({ ...base, ...payload } as unknown as APIInteraction, {
    answerFirst: async (body) => void answers.push(body),
    api: new API(rest),
    rest,
  });
  return { interaction, answers };
}

describe('an interaction read from its payload', () => {
  it('gives a command its member, place, time and resolved options', () => {
    const { interaction } = read({
      type: InteractionType.ApplicationCommand,
      data: {
        id: '1',
        name: 'voice',
        type: ApplicationCommandType.ChatInput,
        options: [
          {
            name: 'create',
            type: ApplicationCommandOptionType.Subcommand,
            options: [
              { name: 'audio', type: ApplicationCommandOptionType.Attachment, value: '9' },
              { name: 'name', type: ApplicationCommandOptionType.String, value: 'mine' },
            ],
          },
        ],
        resolved: { attachments: { 9: { id: '9', filename: 'take.mp3', size: 1234, url: 'https://cdn.example/take.mp3', proxy_url: '', content_type: 'audio/mpeg' } } },
      },
    });
    expect(interaction.isChatInputCommand()).toBe(true);
    expect([interaction.isButton(), interaction.isAutocomplete(), interaction.isModalSubmit()]).toEqual([false, false, false]);
    expect(interaction.inGuild()).toBe(true);
    expect(interaction.user).toEqual({ id: '1400000000000000000', username: 'alice' });
    expect(interaction.member?.roles).toEqual(['1500000000000000000']);
    expect(interaction.memberPermissions?.has(PermissionFlagsBits.ManageGuild)).toBe(true);
    expect(interaction.memberPermissions?.has(PermissionFlagsBits.BanMembers)).toBe(false);
    expect(interaction.channel).toEqual({ type: ChannelType.PublicThread, parentId: '1700000000000000000' });
    expect(interaction.createdAt.getTime()).toBe(Number((BigInt(base.id) >> 22n) + 1_420_070_400_000n));
    expect(interaction.locale).toBe('de');
    expect(interaction.attachmentSizeLimit).toBe(10_485_760);
    expect(readArgs(interaction.options.data)).toEqual({
      subcommand: 'create',
      options: { audio: { id: '9', name: 'take.mp3', url: 'https://cdn.example/take.mp3', size: 1234, contentType: 'audio/mpeg' }, name: 'mine' },
    });
  });

  it('counts an administrator as holding every permission', () => {
    const { interaction } = read({ type: InteractionType.ApplicationCommand, member: { ...base.member, permissions: String(PermissionFlagsBits.Administrator) } });
    expect(interaction.memberPermissions?.has(PermissionFlagsBits.ManageGuild)).toBe(true);
  });

  it('finds the focused option of an autocomplete, inside a subcommand too', () => {
    const { interaction } = read({
      type: InteractionType.ApplicationCommandAutocomplete,
      data: {
        name: 'jobs',
        type: ApplicationCommandType.ChatInput,
        options: [{ name: 'show', type: ApplicationCommandOptionType.Subcommand, options: [{ name: 'job', type: ApplicationCommandOptionType.String, value: 'sun', focused: true }] }],
      },
    });
    expect(interaction.isAutocomplete()).toBe(true);
    expect(interaction.options.getFocused()).toBe('sun');
    expect(interaction.options.getFocused(true)).toEqual({ name: 'job', value: 'sun' });
  });

  it("reads a menu's values and message, and a form's fields whether in rows or labels", () => {
    const menu = read({
      type: InteractionType.MessageComponent,
      message: { id: '1800000000000000000' },
      data: { custom_id: 'play-pick:x', component_type: ComponentType.StringSelect, values: ['a'] },
    }).interaction;
    expect(menu.isStringSelectMenu()).toBe(true);
    expect([menu.customId, menu.message.id, menu.values]).toEqual(['play-pick:x', '1800000000000000000', ['a']]);

    const form = read({
      type: InteractionType.ModalSubmit,
      data: {
        custom_id: 'make-song-modal:x',
        components: [
          { type: ComponentType.ActionRow, components: [{ type: ComponentType.TextInput, custom_id: 'title', value: 'Sun' }] },
          { type: ComponentType.Label, id: 2, component: { type: ComponentType.TextInput, custom_id: 'lyrics', value: 'la la' } },
        ],
      },
    }).interaction;
    expect(form.isModalSubmit()).toBe(true);
    expect(Object.fromEntries(form.fields.fields)).toEqual({ title: { value: 'Sun' }, lyrics: { value: 'la la' } });
  });

  it("reads a message command's target message, as Discord resolves it, and is no chat input command", () => {
    const { interaction } = read({
      type: InteractionType.ApplicationCommand,
      data: {
        id: '1800000000000000000',
        name: 'Report',
        type: ApplicationCommandType.Message,
        target_id: '1900000000000000000',
        resolved: { messages: { '1900000000000000000': { id: '1900000000000000000', author: { id: '1100000000000000000' }, embeds: [{ footer: { text: 'Job x' } }, {}] } } },
      },
    });
    expect([interaction.isMessageContextMenuCommand(), interaction.isChatInputCommand()]).toEqual([true, false]);
    expect(interaction.commandName).toBe('Report');
    expect(interaction.targetMessage).toEqual({ id: '1900000000000000000', author: { id: '1100000000000000000' }, embeds: [{ footer: { text: 'Job x' } }, { footer: null }] });
  });

  it('lists the entitlements the payload carries', () => {
    const { interaction } = read({
      type: InteractionType.ApplicationCommand,
      entitlements: [{ id: '5', sku_id: '6', application_id: base.application_id, user_id: '1400000000000000000', type: 8, deleted: false, consumed: false }],
    });
    expect([...interaction.entitlements.values()]).toEqual([
      { id: '5', skuId: '6', applicationId: base.application_id, userId: '1400000000000000000', guildId: null, consumed: false },
    ]);
  });
});

describe('its first answer', () => {
  it('is a message with builders encoded and mentions off, and there is only one', async () => {
    const { interaction, answers } = read({ type: InteractionType.ApplicationCommand, data: { id: '1', name: 'hello', type: ApplicationCommandType.ChatInput } });
    const row = new ActionRowBuilder<ButtonBuilder>().addComponents(new ButtonBuilder().setCustomId('show:1').setLabel('Show').setStyle(ButtonStyle.Primary));
    await interaction.reply({ content: 'hi', components: [row], flags: MessageFlags.Ephemeral });
    expect(answers).toEqual([
      {
        type: InteractionResponseType.ChannelMessageWithSource,
        data: { content: 'hi', components: [row.toJSON()], flags: MessageFlags.Ephemeral, allowed_mentions: { parse: [] } },
      },
    ]);
    expect([interaction.replied, interaction.ephemeral]).toEqual([true, true]);
    await expect(interaction.deferReply()).rejects.toThrow('already been acknowledged');
    expect(answers).toHaveLength(1);
  });

  it('may be a deferral, after which the reply may be edited but no second answer sent', async () => {
    const { interaction, answers } = read({ type: InteractionType.ApplicationCommand, data: { id: '1', name: 'hello', type: ApplicationCommandType.ChatInput } });
    await expect(interaction.editReply({ content: 'too soon' })).rejects.toThrow('not been answered');
    await interaction.deferReply({ flags: MessageFlags.Ephemeral });
    expect(answers).toEqual([{ type: InteractionResponseType.DeferredChannelMessageWithSource, data: { flags: MessageFlags.Ephemeral } }]);
    await expect(interaction.reply({ content: 'again' })).rejects.toThrow('already been acknowledged');
  });
});
