import { ApplicationCommandOptionType } from 'discord-api-types/v10';
import { setMonthlyAllowance } from '../../src/credits/index.js';
import { amountOption } from './options.js';
import { defineSubcommand } from './subcommand.js';

export const allowance = defineSubcommand({
  definition: {
    type: ApplicationCommandOptionType.Subcommand,
    name: 'allowance',
    description: 'Monthly allowance: the balance is topped up to it each month (bot owners); 0 turns it off.',
    options: [amountOption('Credits per month; 0 turns the allowance off.', 0)],
  },
  ownersOnly: true,
  async execute({ amount }, { interaction, context, caller, reply }) {
    const outcome = await setMonthlyAllowance(context.db, { guildId: caller.guild.id, amount, actorId: caller.member.userId, key: interaction.id });
    return reply(
      amount === 0
        ? 'The monthly allowance is off.'
        : `The monthly allowance is ${outcome.monthlyAllowance} credits (was ${outcome.previous}): at its first use each month (UTC) the balance is topped up to it.`,
    );
  },
});
