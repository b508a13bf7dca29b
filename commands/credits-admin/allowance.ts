import { ApplicationCommandOptionType } from 'discord-api-types/v10';
import { setMonthlyAllowance } from '../../src/credits/index.js';
import { english } from '../../src/i18n/index.js';
import { amountOption } from './options.js';
import { defineSubcommand } from './subcommand.js';

export const allowance = defineSubcommand({
  definition: {
    type: ApplicationCommandOptionType.Subcommand,
    name: 'allowance',
    description: english('command.credits-admin.allowance.description'),
    options: [amountOption(english('command.credits-admin.allowance.amount.description'), 0)],
  },
  ownersOnly: true,
  async execute({ amount }, { interaction, context, caller, reply }) {
    const outcome = await setMonthlyAllowance(context.db, { guildId: caller.guild.id, amount, actorId: caller.member.userId, key: interaction.id });
    return reply(
      amount === 0
        ? context.t('creditsAdmin.allowanceOff')
        : context.t('creditsAdmin.allowanceOn', { count: outcome.monthlyAllowance, previous: outcome.previous }),
    );
  },
});
