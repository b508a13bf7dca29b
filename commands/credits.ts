import { InteractionContextType, type RESTPostAPIApplicationCommandsJSONBody } from 'discord-api-types/v10';
import { getGuildCredits, spentToday, usage, utcMonth, utcMonthStart } from '../src/credits/index.js';
import { openCaller } from '../src/discord/caller.js';
import { answerInPlace } from '../src/discord/respond.js';
import { effectiveDailyCap } from '../src/guilds/limits.js';
import { defineCommand } from '../src/discord/command.js';

export const definition = {
  name: 'credits',
  description: 'This server’s credits: balance, allowance, this month’s usage, and what you can still spend today.',
  contexts: [InteractionContextType.Guild],
  dm_permission: false,
} as const satisfies RESTPostAPIApplicationCommandsJSONBody;

export default defineCommand({
  definition,
  acknowledge: () => 'ephemeral',
  async execute(interaction, _args, context) {
    const caller = await openCaller(interaction, context);
    const now = new Date();
    const guildId = caller.guild.id;
    const userId = caller.member.userId;
    const [credits, month, mine, today] = await Promise.all([
      getGuildCredits(context.db, guildId),
      usage(context.db, { guildId, since: utcMonthStart(now) }),
      usage(context.db, { guildId, userId, since: utcMonthStart(now) }),
      spentToday(context.db, { guildId, userId, now }),
    ]);
    const balance = credits?.balance ?? caller.guild.balance;
    const cap = credits ? effectiveDailyCap(credits, caller.member.roleIds) : null;
    const canSpend = credits?.frozen ? 0 : Math.max(0, Math.min(balance, cap === null ? balance : cap - today));

    const lines = [
      `**Credits of this server**: ${balance}`,
      credits && credits.monthlyAllowance > 0
        ? `Monthly allowance: ${credits.monthlyAllowance} (the balance is topped up to it at the start of each month, UTC)`
        : 'Monthly allowance: none',
      `Used in ${utcMonth(now)}: ${month.spent} credits on ${month.jobs} job${month.jobs === 1 ? '' : 's'} (you: ${mine.spent} on ${mine.jobs})`,
      cap === null
        ? `You can still spend today: ${canSpend} (no daily limit)`
        : `You can still spend today: ${canSpend} (daily limit ${cap}, ${today} used; resets at midnight UTC)`,
    ];
    if (credits?.frozen) lines.push('Generation is **paused** on this server by its moderators.');
    await answerInPlace(interaction, { content: lines.join('\n') });
  },
});
