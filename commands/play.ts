/**
 * `/play song:`: a finished song of this server, played in the member's voice channel, or
 * queued when something plays. The Play button on every song and `/library`'s "Play a song"
 * menu do the same. Free: nothing is spent, the music service is not called.
 */
import { ApplicationCommandOptionType, InteractionContextType, type RESTPostAPIApplicationCommandsJSONBody } from 'discord-api-types/v10';
import type { RepliablePort } from '../src/discord/interaction-port.js';
import { defineCommand } from '../src/discord/command.js';
import type { CommandContext } from '../src/discord/context.js';
import { Refusal } from '../src/discord/errors.js';
import { isJobId, jobChoices, oncePerMenu, resolveSong, VIDEO_SOURCE_KINDS } from '../src/discord/job-lookup.js';
import { english, localText } from '../src/i18n/index.js';
import { entryOf } from '../src/voice/library-entries.js';
import { takeFromArg } from '../src/pipeline/takes.js';
import { askPlayer, playerButtons } from './player.js';

export const definition = {
  name: 'play',
  description: english('command.play.description'),
  contexts: [InteractionContextType.Guild],
  dm_permission: false,
  options: [
    {
      type: ApplicationCommandOptionType.String,
      name: 'song',
      description: english('command.play.song.description'),
      required: true,
      autocomplete: true,
    },
  ],
} as const satisfies RESTPostAPIApplicationCommandsJSONBody;

/** Plays (or queues) the guild's song the member typed, picked or pressed Play on; `take` is the Play button's. */
export async function playSong(interaction: RepliablePort, context: CommandContext, song: string, take?: number): Promise<void> {
  if (!interaction.guildId) throw new Refusal('not_in_guild', localText('refusal.notInGuild'));
  const { job } = await resolveSong(context, interaction.guildId, song, VIDEO_SOURCE_KINDS, { action: 'play-pick', subject: 'song' });
  const entry = entryOf(job, interaction.user.id, take);
  if (!entry) throw new Refusal('not_found', localText('player.noAudio'));
  await askPlayer(interaction, context, { op: 'play', entry });
}

export default defineCommand({
  definition,
  acknowledge: () => 'public',
  async execute(interaction, args, context) {
    await playSong(interaction, context, args.song);
  },
  async autocomplete(interaction, context) {
    return jobChoices(context, interaction.guildId, interaction.options.getFocused(), { kinds: VIDEO_SOURCE_KINDS, succeededOnly: true });
  },
  buttons: {
    play: {
      acknowledge: 'public',
      async execute(interaction, id, context) {
        const take = takeFromArg(id.arg);
        if (!isJobId(id.subject) || take === undefined) throw new Refusal('not_found', localText('jobLookup.notASong'));
        await playSong(interaction, context, id.subject, id.arg === undefined ? undefined : take);
      },
    },
    ...playerButtons,
  },
  selects: {
    'play-pick': {
      acknowledge: 'public',
      async execute(interaction, _id, context) {
        await oncePerMenu(context, interaction.message.id, () => playSong(interaction, context, interaction.values[0] ?? ''));
      },
    },
    'library-play': {
      acknowledge: 'public',
      async execute(interaction, _id, context) {
        await playSong(interaction, context, interaction.values[0] ?? '');
      },
    },
  },
});
