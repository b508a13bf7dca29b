import { ApplicationCommandOptionType } from 'discord-api-types/v10';
import { usage as usageReport, utcMonth, utcMonthStart } from '../../src/credits/index.js';
import { userOption } from './options.js';
import { defineSubcommand } from './subcommand.js';

export const usage = defineSubcommand({
  definition: {
    type: ApplicationCommandOptionType.Subcommand,
    name: 'usage',
    description: 'Credits spent this month, by member.',
    options: [userOption],
  },
  ownersOnly: false,
  async execute(options, { context, caller, reply }) {
    const now = new Date();
    const userId = options.user?.id;
    const report = await usageReport(context.db, { guildId: caller.guild.id, userId, since: utcMonthStart(now) });
    const month = utcMonth(now);
    if (userId !== undefined) {
      return reply(`<@${userId}> in ${month}: ${report.spent} credits on ${report.jobs} jobs (${report.charged} charged, ${report.returned} returned).`);
    }
    const lines = report.byMember.slice(0, 20).map((member) => `• <@${member.userId}>: ${member.spent} credits on ${member.jobs} jobs`);
    return reply([`**Usage in ${month}**: ${report.spent} credits on ${report.jobs} jobs (${report.returned} returned)`, ...lines].join('\n'));
  },
});
