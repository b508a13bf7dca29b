/**
 * `/charts [period:] [by:]`: the server's top 10 songs this week, this month or of all time, by
 * likes, plays in voice channels or remixes, each with who made it, its count and how it moved
 * since the period before. Public or private as the server's visibility says.
 */
import { ApplicationCommandOptionType, InteractionContextType, type RESTPostAPIApplicationCommandsJSONBody } from 'discord-api-types/v10';
import { loadCaller } from '../src/discord/caller.js';
import { defineCommand } from '../src/discord/command.js';
import { answerInPlace, answerPrivately } from '../src/discord/respond.js';
import { english } from '../src/i18n/index.js';
import { chartText } from '../src/pipeline/chart-text.js';

export const definition = {
  name: 'charts',
  description: english('command.charts.description'),
  contexts: [InteractionContextType.Guild],
  dm_permission: false,
  options: [
    {
      type: ApplicationCommandOptionType.String,
      name: 'period',
      description: english('command.charts.period.description'),
      choices: [
        { name: english('command.charts.period.choice.week'), value: 'week' },
        { name: english('command.charts.period.choice.month'), value: 'month' },
        { name: english('command.charts.period.choice.all'), value: 'all' },
      ],
    },
    {
      type: ApplicationCommandOptionType.String,
      name: 'by',
      description: english('command.charts.by.description'),
      choices: [
        { name: english('command.charts.by.choice.likes'), value: 'likes' },
        { name: english('command.charts.by.choice.plays'), value: 'plays' },
        { name: english('command.charts.by.choice.remixes'), value: 'remixes' },
      ],
    },
  ],
} as const satisfies RESTPostAPIApplicationCommandsJSONBody;

export default defineCommand({
  definition,
  acknowledge: () => 'public',
  async execute(interaction, args, context) {
    const caller = await loadCaller(interaction, context);
    const chart = { period: args.period ?? 'week', metric: args.by ?? 'likes' } as const;
    const entries = await context.charts.readChart({ guildId: caller.guild.id, ...chart, now: new Date() });
    const reply = { content: chartText(entries, chart, context.t) };
    await (caller.guild.visibility === 'private' ? answerPrivately(interaction, reply) : answerInPlace(interaction, reply));
  },
});
