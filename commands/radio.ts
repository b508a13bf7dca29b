/**
 * `/radio [user:] [query:] [stay:] [chart:]`: the server's library (the same filters as `/library`),
 * shuffled, or with `chart:` the server's chart in order and then shuffled, in the member's
 * voice channel until stopped. `stay:true`, for moderators, keeps the
 * bot in its channel when nobody listens: 24/7 radio.
 */
import { ApplicationCommandOptionType, InteractionContextType, type RESTPostAPIApplicationCommandsJSONBody } from 'discord-api-types/v10';
import { defineCommand } from '../src/discord/command.js';
import { Refusal } from '../src/discord/errors.js';
import { english, localText } from '../src/i18n/index.js';
import { QUERY_MAX, searchWords } from './library.js';
import { askPlayer } from './player.js';

export const definition = {
  name: 'radio',
  description: english('command.radio.description'),
  contexts: [InteractionContextType.Guild],
  dm_permission: false,
  options: [
    { type: ApplicationCommandOptionType.User, name: 'user', description: english('command.radio.user.description') },
    { type: ApplicationCommandOptionType.String, name: 'query', description: english('command.radio.query.description'), max_length: QUERY_MAX },
    { type: ApplicationCommandOptionType.Boolean, name: 'stay', description: english('command.radio.stay.description') },
    {
      type: ApplicationCommandOptionType.String,
      name: 'chart',
      description: english('command.radio.chart.description'),
      choices: [
        { name: english('command.radio.chart.choice.week'), value: 'week' },
        { name: english('command.radio.chart.choice.month'), value: 'month' },
        { name: english('command.radio.chart.choice.all'), value: 'all' },
      ],
    },
  ],
} as const satisfies RESTPostAPIApplicationCommandsJSONBody;

export default defineCommand({
  definition,
  acknowledge: () => 'public',
  async execute(interaction, args, context) {
    const query = searchWords(args.query) ?? null;
    const chart = args.chart ?? null;
    if (chart !== null && (args.user !== undefined || query !== null)) throw new Refusal('invalid_input', localText('radio.chartAlone'));
    await askPlayer(interaction, context, { op: 'radio', radio: { userId: args.user?.id ?? null, query, chart }, stay: args.stay === true });
  },
});
