import { ApplicationCommandOptionType } from 'discord-api-types/v10';
import { utcMonthStart } from '../../src/credits/index.js';
import { english } from '../../src/i18n/index.js';
import { userOption } from './options.js';
import { defineSubcommand } from './subcommand.js';

export const usage = defineSubcommand({
  definition: {
    type: ApplicationCommandOptionType.Subcommand,
    name: 'usage',
    description: english('command.credits-admin.usage.description'),
    options: [userOption(english('command.credits-admin.usage.user.description'))],
  },
  ownersOnly: false,
  async execute(options, { context, caller, reply }) {
    const now = new Date();
    const userId = options.user?.id;
    const report = await context.credits.usage({ guildId: caller.guild.id, userId, since: utcMonthStart(now) });
    const { t } = context;
    const month = t.month(now);
    if (userId !== undefined) {
      return reply(
        t('creditsAdmin.usageOfMember', { user: userId, month, spent: report.spent, jobs: report.jobs, charged: report.charged, returned: report.returned }),
      );
    }
    const lines = report.byMember.slice(0, 20).map((member) => t('creditsAdmin.usageLine', { user: member.userId, spent: member.spent, jobs: member.jobs }));
    return reply([t('creditsAdmin.usageHeading', { month, spent: report.spent, jobs: report.jobs, returned: report.returned }), ...lines].join('\n'));
  },
});
