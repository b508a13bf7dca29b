import { ApplicationCommandOptionType } from 'discord-api-types/v10';
import { english } from '../../src/i18n/index.js';
import { amountOption } from './options.js';
import { defineSubcommand } from './subcommand.js';

export const userLimit = defineSubcommand({
  definition: {
    type: ApplicationCommandOptionType.Subcommand,
    name: 'user-limit',
    description: english('command.credits-admin.user-limit.description'),
    options: [
      amountOption(english('command.credits-admin.user-limit.amount.description'), 0),
      { type: ApplicationCommandOptionType.Role, name: 'role', description: english('command.credits-admin.user-limit.role.description') },
    ],
  },
  ownersOnly: false,
  async execute({ amount, role }, { interaction, context, caller, reply }) {
    await context.credits.setUserDailyCap({
      guildId: caller.guild.id,
      actorId: caller.member.userId,
      amount: amount === 0 ? null : amount,
      roleId: role?.id,
      key: interaction.id,
    });
    const { t } = context;
    if (amount === 0) return reply(role ? t('creditsAdmin.limitRemovedRole', { role: role.id }) : t('creditsAdmin.limitRemoved'));
    return reply(role ? t('creditsAdmin.limitSetRole', { role: role.id, count: amount }) : t('creditsAdmin.limitSet', { count: amount }));
  },
});
