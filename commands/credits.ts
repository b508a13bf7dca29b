import { InteractionContextType, type RESTPostAPIApplicationCommandsJSONBody } from 'discord-api-types/v10';
import { getGuildCredits, nextAllowanceTopUp, spentToday, usage, utcMonthStart } from '../src/credits/index.js';
import { openCaller } from '../src/discord/caller.js';
import { answerInPlace } from '../src/discord/respond.js';
import { defineCommand } from '../src/discord/command.js';
import { english } from '../src/i18n/index.js';

export const definition = {
  name: 'credits',
  description: english('command.credits.description'),
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
    const cap = caller.guild.dailyCap;
    const canSpend = credits?.frozen ? 0 : Math.max(0, Math.min(balance, cap === null ? balance : cap - today));

    const { t } = context;
    const lines = [
      t('credits.balance', { balance }),
      credits && credits.monthlyAllowance > 0
        ? t('credits.allowance', { allowance: credits.monthlyAllowance, at: Math.floor(nextAllowanceTopUp(now).getTime() / 1000) })
        : t('credits.noAllowance'),
      t('credits.used', { month: t.month(now), spent: month.spent, count: month.jobs, mySpent: mine.spent, myJobs: mine.jobs }),
      cap === null ? t('credits.canSpend', { canSpend }) : t('credits.canSpendCapped', { canSpend, cap, today }),
    ];
    if (credits?.frozen) lines.push(t('credits.paused'));
    await answerInPlace(interaction, { content: lines.join('\n') });
  },
});
