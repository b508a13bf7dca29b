/** `/credits-admin freeze` and `unfreeze`: one switch, two subcommands. */
import { ApplicationCommandOptionType } from 'discord-api-types/v10';
import { english } from '../../src/i18n/index.js';
import { defineSubcommand, type SubcommandRun } from './subcommand.js';

async function switchSpending(frozen: boolean, { context, caller, reply }: SubcommandRun): Promise<void> {
  const outcome = await context.credits.setFrozen({ guildId: caller.guild.id, frozen, actorId: caller.member.userId });
  if (frozen) return reply(context.t(outcome.changed ? 'creditsAdmin.frozen' : 'creditsAdmin.alreadyFrozen'));
  return reply(context.t(outcome.changed ? 'creditsAdmin.unfrozen' : 'creditsAdmin.alreadyUnfrozen'));
}

export const freeze = defineSubcommand({
  definition: { type: ApplicationCommandOptionType.Subcommand, name: 'freeze', description: english('command.credits-admin.freeze.description') },
  ownersOnly: false,
  execute: (_options, run) => switchSpending(true, run),
});

export const unfreeze = defineSubcommand({
  definition: { type: ApplicationCommandOptionType.Subcommand, name: 'unfreeze', description: english('command.credits-admin.unfreeze.description') },
  ownersOnly: false,
  execute: (_options, run) => switchSpending(false, run),
});
