import { ApplicationCommandOptionType } from 'discord-api-types/v10';
import { getGuildCredits } from '../../src/credits/index.js';
import { defineSubcommand } from './subcommand.js';

export const account = defineSubcommand({
  definition: {
    type: ApplicationCommandOptionType.Subcommand,
    name: 'account',
    description: 'The music service account’s own balance (bot owners).',
  },
  ownersOnly: true,
  async execute(_options, { context, caller, reply }) {
    const account = await context.musicApi.getCredits();
    const credits = await getGuildCredits(context.db, caller.guild.id);
    return reply(
      `The music service account has **${account.credits}** credits${account.extraCredits > 0 ? ` (+${account.extraCredits} extra)` : ''}.` +
        (credits ? ` This server’s balance in the bot: ${credits.balance}.` : ''),
    );
  },
});
