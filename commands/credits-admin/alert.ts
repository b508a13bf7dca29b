import { ApplicationCommandOptionType, ChannelType } from 'discord-api-types/v10';
import { english } from '../../src/i18n/index.js';
import { MAX_AMOUNT } from './options.js';
import { defineSubcommand } from './subcommand.js';

export const alert = defineSubcommand({
  definition: {
    type: ApplicationCommandOptionType.Subcommand,
    name: 'alert',
    description: english('command.credits-admin.alert.description'),
    options: [
      {
        type: ApplicationCommandOptionType.Channel,
        name: 'channel',
        description: english('command.credits-admin.alert.channel.description'),
        required: true,
        channel_types: [ChannelType.GuildText, ChannelType.GuildAnnouncement],
      },
      {
        type: ApplicationCommandOptionType.Integer,
        name: 'below',
        description: english('command.credits-admin.alert.below.description'),
        required: true,
        min_value: 0,
        max_value: MAX_AMOUNT,
      },
    ],
  },
  ownersOnly: false,
  async execute({ channel, below }, { context, caller, reply }) {
    await context.credits.setLowBalanceAlert({
      guildId: caller.guild.id,
      actorId: caller.member.userId,
      channelId: below === 0 ? null : channel.id,
      below: below === 0 ? null : below,
    });
    return reply(below === 0 ? context.t('creditsAdmin.alertOff') : context.t('creditsAdmin.alertOn', { channel: channel.id, count: below }));
  },
});
