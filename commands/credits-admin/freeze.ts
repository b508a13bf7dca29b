/** `/credits-admin freeze` and `unfreeze`: one switch, two subcommands. */
import { ApplicationCommandOptionType } from 'discord-api-types/v10';
import { setFrozen } from '../../src/credits/index.js';
import { defineSubcommand, type SubcommandRun } from './subcommand.js';

async function switchSpending(frozen: boolean, { context, caller, reply }: SubcommandRun): Promise<void> {
  const outcome = await setFrozen(context.db, { guildId: caller.guild.id, frozen, actorId: caller.member.userId });
  const state = frozen ? 'paused: no new requests are accepted' : 'allowed again';
  return reply(outcome.changed ? `Spending on this server is ${state}.` : `Spending was already ${state}.`);
}

export const freeze = defineSubcommand({
  definition: { type: ApplicationCommandOptionType.Subcommand, name: 'freeze', description: 'Pause all spending on this server.' },
  ownersOnly: false,
  execute: (_options, run) => switchSpending(true, run),
});

export const unfreeze = defineSubcommand({
  definition: { type: ApplicationCommandOptionType.Subcommand, name: 'unfreeze', description: 'Allow spending again.' },
  ownersOnly: false,
  execute: (_options, run) => switchSpending(false, run),
});
