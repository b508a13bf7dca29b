import { ApplicationCommandOptionType, ChannelType } from 'discord-api-types/v10';
import { setLowBalanceAlert } from '../../src/credits/index.js';
import { MAX_AMOUNT } from './options.js';
import { defineSubcommand } from './subcommand.js';

export const alert = defineSubcommand({
  definition: {
    type: ApplicationCommandOptionType.Subcommand,
    name: 'alert',
    description: 'Post one message when the balance falls below a threshold; 0 turns it off.',
    options: [
      {
        type: ApplicationCommandOptionType.Channel,
        name: 'channel',
        description: 'Where to post the alert.',
        required: true,
        channel_types: [ChannelType.GuildText, ChannelType.GuildAnnouncement],
      },
      {
        type: ApplicationCommandOptionType.Integer,
        name: 'below',
        description: 'Alert when the balance falls below this; 0 turns the alert off.',
        required: true,
        min_value: 0,
        max_value: MAX_AMOUNT,
      },
    ],
  },
  ownersOnly: false,
  async execute({ channel, below }, { context, caller, reply }) {
    await setLowBalanceAlert(context.db, {
      guildId: caller.guild.id,
      actorId: caller.member.userId,
      channelId: below === 0 ? null : channel.id,
      below: below === 0 ? null : below,
    });
    return reply(below === 0 ? 'The low-balance alert is off.' : `One message will be posted in <#${channel.id}> when the balance falls below ${below} credits.`);
  },
});
