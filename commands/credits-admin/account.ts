import { ApplicationCommandOptionType } from 'discord-api-types/v10';
import { getGuildCredits } from '../../src/credits/index.js';
import { english } from '../../src/i18n/index.js';
import { defineSubcommand } from './subcommand.js';

export const account = defineSubcommand({
  definition: {
    type: ApplicationCommandOptionType.Subcommand,
    name: 'account',
    description: english('command.credits-admin.account.description'),
  },
  ownersOnly: true,
  async execute(_options, { context, caller, reply }) {
    const account = await context.musicApi.getCredits();
    const credits = await getGuildCredits(context.db, caller.guild.id);
    const { t } = context;
    // The account's figures are shown as the service gives them, without grouping.
    const own =
      account.extraCredits > 0
        ? t('creditsAdmin.accountWithExtra', { credits: String(account.credits), extra: String(account.extraCredits) })
        : t('creditsAdmin.account', { credits: String(account.credits) });
    return reply(credits ? `${own} ${t('creditsAdmin.accountGuildBalance', { balance: credits.balance })}` : own);
  },
});
