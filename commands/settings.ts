import {
  ApplicationCommandOptionType,
  ChannelType,
  InteractionContextType,
  PermissionFlagsBits,
  type RESTPostAPIApplicationCommandsJSONBody,
} from 'discord-api-types/v10';
import { loadCaller, requireModerator } from '../src/discord/caller.js';
import { Refusal } from '../src/discord/errors.js';
import { english, localText, type Translator } from '../src/i18n/index.js';
import { answerInPlace } from '../src/discord/respond.js';
import { MAX_COOLDOWN_SECONDS, type GuildRow, type SettingsChange } from '../src/guilds/settings.js';
import type { AutomodState } from '../src/guilds/automod.js';
import type { ChartPostSettings } from '../src/guilds/chart-posts.js';
import type { CommandContext } from '../src/discord/context.js';
import { defineCommand } from '../src/discord/command.js';
import { configuredModel } from './song.js';

/** The weekdays as `/settings charts day:` offers them, Sunday first (JavaScript's numbering). */
const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'] as const;

/** The time zones offered as a moderator types (`Intl`'s list; any name `Intl` knows is taken). */
const TIME_ZONES: readonly string[] = ['UTC', ...Intl.supportedValuesOf('timeZone')];

export const definition = {
  name: 'settings',
  description: english('command.settings.description'),
  contexts: [InteractionContextType.Guild],
  dm_permission: false,
  default_member_permissions: String(PermissionFlagsBits.ManageGuild),
  options: [
    { type: ApplicationCommandOptionType.Subcommand, name: 'show', description: english('command.settings.show.description') },
    {
      type: ApplicationCommandOptionType.Subcommand,
      name: 'channels',
      description: english('command.settings.channels.description'),
      options: [
        { type: ApplicationCommandOptionType.Channel, name: 'add', description: english('command.settings.channels.add.description'), channel_types: [ChannelType.GuildText, ChannelType.GuildAnnouncement, ChannelType.GuildVoice, ChannelType.GuildForum] },
        { type: ApplicationCommandOptionType.Channel, name: 'remove', description: english('command.settings.channels.remove.description'), channel_types: [ChannelType.GuildText, ChannelType.GuildAnnouncement, ChannelType.GuildVoice, ChannelType.GuildForum] },
        { type: ApplicationCommandOptionType.Boolean, name: 'reset', description: english('command.settings.channels.reset.description') },
      ],
    },
    {
      type: ApplicationCommandOptionType.Subcommand,
      name: 'role',
      description: english('command.settings.role.description'),
      options: [{ type: ApplicationCommandOptionType.Role, name: 'role', description: english('command.settings.role.role.description') }],
    },
    {
      type: ApplicationCommandOptionType.Subcommand,
      name: 'moderator-role',
      description: english('command.settings.moderator-role.description'),
      options: [{ type: ApplicationCommandOptionType.Role, name: 'role', description: english('command.settings.moderator-role.role.description') }],
    },
    {
      type: ApplicationCommandOptionType.Subcommand,
      name: 'dj-role',
      description: english('command.settings.dj-role.description'),
      options: [{ type: ApplicationCommandOptionType.Role, name: 'role', description: english('command.settings.dj-role.role.description') }],
    },
    {
      type: ApplicationCommandOptionType.Subcommand,
      name: 'default-model',
      description: english('command.settings.default-model.description'),
      options: [{ type: ApplicationCommandOptionType.String, name: 'model', description: english('command.settings.default-model.model.description'), autocomplete: true }],
    },
    {
      type: ApplicationCommandOptionType.Subcommand,
      name: 'cooldown',
      description: english('command.settings.cooldown.description'),
      options: [
        {
          type: ApplicationCommandOptionType.Integer,
          name: 'seconds',
          description: english('command.settings.cooldown.seconds.description'),
          required: true,
          min_value: 0,
          max_value: MAX_COOLDOWN_SECONDS,
        },
      ],
    },
    {
      type: ApplicationCommandOptionType.Subcommand,
      name: 'notify',
      description: english('command.settings.notify.description'),
      options: [{ type: ApplicationCommandOptionType.Boolean, name: 'when-done', description: english('command.settings.notify.when-done.description'), required: true }],
    },
    {
      type: ApplicationCommandOptionType.Subcommand,
      name: 'visibility',
      description: english('command.settings.visibility.description'),
      options: [
        {
          type: ApplicationCommandOptionType.String,
          name: 'mode',
          description: english('command.settings.visibility.mode.description'),
          required: true,
          choices: [
            { name: 'public', value: 'public' },
            { name: 'private', value: 'private' },
          ],
        },
      ],
    },
    {
      type: ApplicationCommandOptionType.Subcommand,
      name: 'charts',
      description: english('command.settings.charts.description'),
      options: [
        { type: ApplicationCommandOptionType.Channel, name: 'channel', description: english('command.settings.charts.channel.description'), channel_types: [ChannelType.GuildText, ChannelType.GuildAnnouncement] },
        {
          type: ApplicationCommandOptionType.String,
          name: 'day',
          description: english('command.settings.charts.day.description'),
          choices: [
            { name: english('command.settings.charts.day.choice.sunday'), value: 'sunday' },
            { name: english('command.settings.charts.day.choice.monday'), value: 'monday' },
            { name: english('command.settings.charts.day.choice.tuesday'), value: 'tuesday' },
            { name: english('command.settings.charts.day.choice.wednesday'), value: 'wednesday' },
            { name: english('command.settings.charts.day.choice.thursday'), value: 'thursday' },
            { name: english('command.settings.charts.day.choice.friday'), value: 'friday' },
            { name: english('command.settings.charts.day.choice.saturday'), value: 'saturday' },
          ],
        },
        { type: ApplicationCommandOptionType.Integer, name: 'hour', description: english('command.settings.charts.hour.description'), min_value: 0, max_value: 23 },
        { type: ApplicationCommandOptionType.String, name: 'timezone', description: english('command.settings.charts.timezone.description'), max_length: 64, autocomplete: true },
        { type: ApplicationCommandOptionType.Boolean, name: 'off', description: english('command.settings.charts.off.description') },
      ],
    },
    {
      type: ApplicationCommandOptionType.Subcommand,
      name: 'safety',
      description: english('command.settings.safety.description'),
      options: [
        { type: ApplicationCommandOptionType.Channel, name: 'review-channel', description: english('command.settings.safety.review-channel.description'), channel_types: [ChannelType.GuildText, ChannelType.GuildAnnouncement] },
        { type: ApplicationCommandOptionType.Boolean, name: 'clear-review-channel', description: english('command.settings.safety.clear-review-channel.description') },
        { type: ApplicationCommandOptionType.Boolean, name: 'use-automod', description: english('command.settings.safety.use-automod.description') },
        { type: ApplicationCommandOptionType.Boolean, name: 'explicit-in-age-restricted-only', description: english('command.settings.safety.explicit-in-age-restricted-only.description') },
      ],
    },
  ],
} as const satisfies RESTPostAPIApplicationCommandsJSONBody;

/**
 * What `/settings show` says of the guild; `chartPost`: its weekly chart post (undefined: off);
 * `automod`: its rules' state, when it uses them and they were looked up.
 */
function describeSettings(guild: GuildRow, chartPost: ChartPostSettings | undefined, t: Translator, automod?: AutomodState): string {
  const channels = guild.allowedChannelIds.length === 0 ? t('settings.allChannels') : guild.allowedChannelIds.map((id) => `<#${id}>`).join(', ');
  return [
    t('settings.heading'),
    t('settings.channels', { channels }),
    guild.requiredRoleId ? t('settings.requiredRole', { role: guild.requiredRoleId }) : t('settings.noRequiredRole'),
    guild.moderatorRoleId ? t('settings.moderatorRole', { role: guild.moderatorRoleId }) : t('settings.noModeratorRole'),
    guild.djRoleId ? t('settings.djRole', { role: guild.djRoleId }) : t('settings.noDjRole'),
    guild.defaultModel ? t('settings.defaultModel', { model: guild.defaultModel }) : t('settings.serviceDefaultModel'),
    guild.cooldownSeconds > 0 ? t('settings.cooldown', { seconds: guild.cooldownSeconds }) : t('settings.noCooldown'),
    t('settings.visibility', { visibility: t(`command.settings.visibility.mode.choice.${guild.visibility}`) }),
    guild.reviewChannelId ? t('settings.reviewChannel', { channel: guild.reviewChannelId }) : t('settings.noReviewChannel'),
    guild.useAutomod ? automodLine(t, automod) : t('settings.automodOff'),
    guild.explicitInAgeRestrictedOnly ? t('settings.explicitAgeRestrictedOnly') : t('settings.explicitAnywhere'),
    guild.notifyWhenDone ? t('settings.notifyOn') : t('settings.notifyOff'),
    chartPostLine(chartPost, t),
  ].join('\n');
}

/** What `/settings charts` and `/settings show` say of the weekly post. */
function chartPostLine(post: ChartPostSettings | undefined, t: Translator): string {
  if (!post) return t('settings.charts.off');
  const day = t(`command.settings.charts.day.choice.${WEEKDAYS[post.weekday] ?? 'sunday'}`);
  return t('settings.charts.on', { channel: post.channelId, day, hour: String(post.hour).padStart(2, '0'), zone: post.timeZone, next: Math.floor(post.nextAt.getTime() / 1000) });
}

function automodLine(t: Translator, automod: AutomodState | undefined): string {
  switch (automod?.status) {
    case 'in_use':
      return t('settings.automodInUse', { count: automod.rules.size });
    case 'missing_permission':
      return t('settings.automodMissingPermission');
    case 'unavailable':
      return t('settings.automodUnavailable');
    case undefined:
      return t('settings.automodOn');
  }
}

/** The guild's AutoMod state when it uses AutoMod: read from Discord unless this process has it fresh. */
async function automodOf(context: CommandContext, guild: GuildRow): Promise<AutomodState | undefined> {
  return guild.useAutomod ? context.automod?.rulesFor(guild.id, guild.automodVersion) : undefined;
}

export default defineCommand({
  definition,
  acknowledge: () => 'ephemeral',
  async execute(interaction, args, context) {
    const caller = await loadCaller(interaction, context);
    // Discord's default permission can be overridden per guild: check again here.
    requireModerator(caller);
    if (args.subcommand === 'show') {
      const chartPost = await context.charts.chartPostOf(caller.guild.id);
      await answerInPlace(interaction, { content: describeSettings(caller.guild, chartPost, context.t, await automodOf(context, caller.guild)) });
      return;
    }

    if (args.subcommand === 'charts') {
      const { channel, day, hour, timezone, off } = args.options;
      const post = await context.charts.setChartPost({
        guildId: caller.guild.id,
        actorId: caller.member.userId,
        ...(channel && { channelId: channel.id }),
        ...(day !== undefined && { weekday: WEEKDAYS.indexOf(day) }),
        ...(hour !== undefined && { hour }),
        ...(timezone !== undefined && { timeZone: timezone }),
        off: off === true,
        locale: interaction.guildLocale ?? null,
        now: new Date(),
      });
      await answerInPlace(interaction, { content: `${context.t('settings.saved')}\n${chartPostLine(post, context.t)}` });
      return;
    }

    let change: SettingsChange;
    switch (args.subcommand) {
      case 'channels': {
        const { add, remove, reset } = args.options;
        if (add === undefined && remove === undefined && reset !== true) {
          await answerInPlace(interaction, { content: describeSettings(caller.guild, await context.charts.chartPostOf(caller.guild.id), context.t) });
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
          throw new Refusal('missing_permission', localText('settings.moderatorRoleRefused'));
        }
        change = { setting: 'moderatorRole', roleId: args.options.role?.id ?? null };
        break;
      case 'dj-role':
        change = { setting: 'djRole', roleId: args.options.role?.id ?? null };
        break;
      case 'default-model':
        // A model typed rather than picked counts in any case.
        change = {
          setting: 'defaultModel',
          model: args.options.model === undefined ? null : (configuredModel(context.settings.musicModels, args.options.model) ?? args.options.model),
        };
        break;
      case 'cooldown':
        change = { setting: 'cooldown', seconds: args.options.seconds };
        break;
      case 'visibility':
        change = { setting: 'visibility', visibility: args.options.mode };
        break;
      case 'notify':
        change = { setting: 'notify', whenDone: args.options['when-done'] };
        break;
      case 'safety': {
        const options = args.options;
        const safety = {
          reviewChannelId: options['clear-review-channel'] === true ? null : options['review-channel']?.id,
          useAutomod: options['use-automod'],
          explicitInAgeRestrictedOnly: options['explicit-in-age-restricted-only'],
        };
        if (Object.values(safety).every((value) => value === undefined)) throw new Refusal('invalid_input', localText('settings.safetyUnchanged'));
        change = { setting: 'safety', safety };
        break;
      }
    }
    const updated = await context.guilds.changeSettings({
      guildId: caller.guild.id,
      actorId: caller.member.userId,
      change,
      models: context.settings.musicModels,
    });
    const chartPost = await context.charts.chartPostOf(updated.id);
    await answerInPlace(interaction, { content: `${context.t('settings.saved')}\n${describeSettings(updated, chartPost, context.t, await automodOf(context, updated))}` });
  },
  async autocomplete(interaction, context) {
    const focused = interaction.options.getFocused(true);
    const typed = focused.value.trim().toLowerCase();
    if (focused.name === 'timezone') {
      return TIME_ZONES.filter((zone) => zone.toLowerCase().includes(typed.replace(/ /g, '_'))).map((zone) => ({ name: zone, value: zone }));
    }
    return context.settings.musicModels
      .filter((model) => model.toLowerCase().includes(typed))
      .map((model) => ({ name: model.slice(0, 100), value: model.slice(0, 100) }));
  },
});
