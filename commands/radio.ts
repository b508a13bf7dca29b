/**
 * `/radio [user:] [query:] [stay:]`: the server's library (the same filters as `/library`),
 * shuffled, in the member's voice channel until stopped. `stay:true`, for moderators, keeps the
 * bot in its channel when nobody listens: 24/7 radio.
 */
import { ApplicationCommandOptionType, InteractionContextType, type RESTPostAPIApplicationCommandsJSONBody } from 'discord-api-types/v10';
import { defineCommand } from '../src/discord/command.js';
import { english } from '../src/i18n/index.js';
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
  ],
} as const satisfies RESTPostAPIApplicationCommandsJSONBody;

export default defineCommand({
  definition,
  acknowledge: () => 'public',
  async execute(interaction, args, context) {
    const query = searchWords(args.query) ?? null;
    await askPlayer(interaction, context, { op: 'radio', radio: { userId: args.user?.id ?? null, query }, stay: args.stay === true });
  },
});
