import {
  ApplicationCommandOptionType,
  ChannelType,
  InteractionContextType,
  PermissionFlagsBits,
  type RESTPostAPIApplicationCommandsJSONBody,
} from 'discord-api-types/v10';
import { openCaller, requireModerator } from '../src/discord/caller.js';
import { Refusal } from '../src/discord/errors.js';
import { answerInPlace } from '../src/discord/respond.js';
import { changeSettings, MAX_COOLDOWN_SECONDS, type GuildRow, type SettingsChange } from '../src/guilds/settings.js';
import { defineCommand } from '../src/discord/command.js';

export const definition = {
  name: 'settings',
  description: 'Where and how the bot may be used on this server (moderators).',
  contexts: [InteractionContextType.Guild],
  dm_permission: false,
  default_member_permissions: String(PermissionFlagsBits.ManageGuild),
  options: [
    { type: ApplicationCommandOptionType.Subcommand, name: 'show', description: 'The current settings.' },
    {
      type: ApplicationCommandOptionType.Subcommand,
      name: 'channels',
      description: 'The channels the bot may be used in (all, until one is added).',
      options: [
        { type: ApplicationCommandOptionType.Channel, name: 'add', description: 'Allow this channel.', channel_types: [ChannelType.GuildText, ChannelType.GuildAnnouncement, ChannelType.GuildVoice, ChannelType.GuildForum] },
        { type: ApplicationCommandOptionType.Channel, name: 'remove', description: 'Stop allowing this channel.', channel_types: [ChannelType.GuildText, ChannelType.GuildAnnouncement, ChannelType.GuildVoice, ChannelType.GuildForum] },
        { type: ApplicationCommandOptionType.Boolean, name: 'reset', description: 'Allow every channel again.' },
      ],
    },
    {
      type: ApplicationCommandOptionType.Subcommand,
      name: 'role',
      description: 'The role a member needs to use the bot; leave it out to let everyone.',
      options: [{ type: ApplicationCommandOptionType.Role, name: 'role', description: 'The required role.' }],
    },
    {
      type: ApplicationCommandOptionType.Subcommand,
      name: 'moderator-role',
      description: 'A role whose members moderate the bot (besides Manage Server); leave it out to clear.',
      options: [{ type: ApplicationCommandOptionType.Role, name: 'role', description: 'The moderator role.' }],
    },
    {
      type: ApplicationCommandOptionType.Subcommand,
      name: 'default-model',
      description: 'The model songs use when none is picked; leave it out for the service’s default.',
      options: [{ type: ApplicationCommandOptionType.String, name: 'model', description: 'The model.', autocomplete: true }],
    },
    {
      type: ApplicationCommandOptionType.Subcommand,
      name: 'cooldown',
      description: 'Seconds a member waits between requests (moderators do not); 0 for none.',
      options: [
        {
          type: ApplicationCommandOptionType.Integer,
          name: 'seconds',
          description: 'Seconds between two requests of one member.',
          required: true,
          min_value: 0,
          max_value: MAX_COOLDOWN_SECONDS,
        },
      ],
    },
    {
      type: ApplicationCommandOptionType.Subcommand,
      name: 'visibility',
      description: 'Whether results are posted for the channel to see, or only to the member who asked.',
      options: [
        {
          type: ApplicationCommandOptionType.String,
          name: 'mode',
          description: 'public: the channel sees results; private: only the member who asked.',
          required: true,
          choices: [
            { name: 'public', value: 'public' },
            { name: 'private', value: 'private' },
          ],
        },
      ],
    },
  ],
} as const satisfies RESTPostAPIApplicationCommandsJSONBody;

function describeSettings(guild: GuildRow): string {
  const channels = guild.allowedChannelIds.length === 0 ? 'all' : guild.allowedChannelIds.map((id) => `<#${id}>`).join(', ');
  return [
    '**Settings of this server**',
    `Channels: ${channels}`,
    `Required role: ${guild.requiredRoleId ? `<@&${guild.requiredRoleId}>` : 'none (everyone)'}`,
    `Moderator role: ${guild.moderatorRoleId ? `<@&${guild.moderatorRoleId}>` : 'none (Manage Server only)'}`,
    `Default model: ${guild.defaultModel ?? 'the service’s default'}`,
    `Cooldown: ${guild.cooldownSeconds > 0 ? `${guild.cooldownSeconds} s` : 'none'}`,
    `Visibility: ${guild.visibility}`,
  ].join('\n');
}

export default defineCommand({
  definition,
  acknowledge: () => 'ephemeral',
  async execute(interaction, args, context) {
    const caller = await openCaller(interaction, context);
    // Discord's default permission can be overridden per guild: check again here.
    requireModerator(caller);
    if (args.subcommand === 'show') {
      await answerInPlace(interaction, { content: describeSettings(caller.guild) });
      return;
    }

    let change: SettingsChange;
    switch (args.subcommand) {
      case 'channels': {
        const { add, remove, reset } = args.options;
        if (add === undefined && remove === undefined && reset !== true) {
          await answerInPlace(interaction, { content: describeSettings(caller.guild) });
          return;
        }
        change = { setting: 'allowedChannels', add: add?.id, remove: remove?.id, clear: reset === true };
        break;
      }
      case 'role':
        change = { setting: 'requiredRole', roleId: args.options.role?.id ?? null };
        break;
      case 'moderator-role':
        // A moderator by role must not be able to hand moderation to another role.
        if (!caller.member.canManageGuild) {
          throw new Refusal('missing_permission', 'Only members with Manage Server can change the moderator role.');
        }
        change = { setting: 'moderatorRole', roleId: args.options.role?.id ?? null };
        break;
      case 'default-model':
        change = { setting: 'defaultModel', model: args.options.model ?? null };
        break;
      case 'cooldown':
        change = { setting: 'cooldown', seconds: args.options.seconds };
        break;
      case 'visibility':
        change = { setting: 'visibility', visibility: args.options.mode };
        break;
    }
    const updated = await changeSettings(context.db, {
      guildId: caller.guild.id,
      actorId: caller.member.userId,
      change,
      models: context.config.musicModels,
    });
    await answerInPlace(interaction, { content: `Saved.\n${describeSettings(updated)}` });
  },
  async autocomplete(interaction, context) {
    const typed = interaction.options.getFocused().trim().toLowerCase();
    return context.config.musicModels
      .filter((model) => model.toLowerCase().includes(typed))
      .map((model) => ({ name: model.slice(0, 100), value: model.slice(0, 100) }));
  },
});
