import { ApplicationCommandOptionType } from 'discord-api-types/v10';
import { setUserDailyCap } from '../../src/credits/index.js';
import { amountOption } from './options.js';
import { defineSubcommand } from './subcommand.js';

export const userLimit = defineSubcommand({
  definition: {
    type: ApplicationCommandOptionType.Subcommand,
    name: 'user-limit',
    description: 'Credits one member may spend per day (UTC); 0 removes the limit.',
    options: [
      amountOption('Credits per member per day; 0 removes the limit.', 0),
      { type: ApplicationCommandOptionType.Role, name: 'role', description: 'Set this role’s own limit instead.' },
    ],
  },
  ownersOnly: false,
  async execute({ amount, role }, { interaction, context, caller, reply }) {
    await setUserDailyCap(context.db, {
      guildId: caller.guild.id,
      actorId: caller.member.userId,
      amount: amount === 0 ? null : amount,
      roleId: role?.id,
      key: interaction.id,
    });
    const who = role ? `Members with <@&${role.id}>` : 'Each member';
    return reply(amount === 0 ? `${who}: no daily limit any more.` : `${who} may now spend ${amount} credits per day (UTC).`);
  },
});
