/**
 * `/credits-admin grant` and `take`: the bot owners move credits by hand, with a reason. A take
 * under a monthly allowance says that the next top-up gives it back.
 */
import { ApplicationCommandOptionType } from 'discord-api-types/v10';
import { allowanceInForce, nextAllowanceTopUp } from '../../src/credits/index.js';
import { english } from '../../src/i18n/index.js';
import { amountOption, reasonOption } from './options.js';
import { defineSubcommand, type SubcommandRun } from './subcommand.js';

async function move(direction: 'grant' | 'take', amount: number, reason: string, { interaction, context, caller, reply }: SubcommandRun): Promise<void> {
  const movement = direction === 'grant' ? context.credits.grant : context.credits.take;
  const outcome = await movement({ guildId: caller.guild.id, amount, actorId: caller.member.userId, reason, key: interaction.id });
  const moved = context.t(direction === 'grant' ? 'creditsAdmin.granted' : 'creditsAdmin.taken', { count: amount, balance: outcome.balance });
  const allowance = allowanceInForce(caller.guild);
  if (direction === 'grant' || allowance <= outcome.balance) return reply(moved);
  const at = Math.floor(nextAllowanceTopUp(new Date()).getTime() / 1000);
  return reply(`${moved} ${context.t('creditsAdmin.takeAllowanceNote', { allowance, at })}`);
}

export const grant = defineSubcommand({
  definition: {
    type: ApplicationCommandOptionType.Subcommand,
    name: 'grant',
    description: english('command.credits-admin.grant.description'),
    options: [amountOption(english('command.credits-admin.grant.amount.description'), 1), reasonOption(english('command.credits-admin.grant.reason.description'))],
  },
  ownersOnly: true,
  execute: ({ amount, reason }, run) => move('grant', amount, reason, run),
});

export const take = defineSubcommand({
  definition: {
    type: ApplicationCommandOptionType.Subcommand,
    name: 'take',
    description: english('command.credits-admin.take.description'),
    options: [amountOption(english('command.credits-admin.take.amount.description'), 1), reasonOption(english('command.credits-admin.take.reason.description'))],
  },
  ownersOnly: true,
  execute: ({ amount, reason }, run) => move('take', amount, reason, run),
});
