import {
  ApplicationCommandOptionType,
  InteractionContextType,
  type RESTPostAPIApplicationCommandsJSONBody,
} from 'discord-api-types/v10';
import type { RepliableInteraction } from 'discord.js';
import { admit, openCaller, submitAndAcknowledge } from '../src/discord/caller.js';
import type { CommandContext } from '../src/discord/context.js';
import { Refusal } from '../src/discord/errors.js';
import { DOWNLOAD_SOURCE_KINDS, jobChoices, resolveSong } from '../src/discord/job-lookup.js';
import { OPERATION_COSTS } from '../src/music-api/index.js';
import { downloadRequestSchema } from '../src/pipeline/requests.js';
import { defineCommand } from '../src/discord/command.js';

export const definition = {
  name: 'download',
  description: `Download a song of this server re-encoded as MP3 or WAV (${OPERATION_COSTS.download} credits).`,
  contexts: [InteractionContextType.Guild],
  dm_permission: false,
  options: [
    {
      type: ApplicationCommandOptionType.String,
      name: 'song',
      description: 'The song (pick a recent one, or paste its job id).',
      required: true,
      autocomplete: true,
    },
    {
      type: ApplicationCommandOptionType.String,
      name: 'format',
      description: 'The file format.',
      required: true,
      choices: [
        { name: 'MP3', value: 'mp3' },
        { name: 'WAV', value: 'wav' },
      ],
    },
  ],
} as const satisfies RESTPostAPIApplicationCommandsJSONBody;

async function requestDownload(
  interaction: RepliableInteraction,
  context: CommandContext,
  input: { song: string; format: string | undefined; requesterOrModerator: boolean },
): Promise<void> {
  const format = downloadRequestSchema.shape.format.safeParse(input.format);
  if (!format.success) throw new Refusal('invalid_input', 'The format is MP3 or WAV.');
  const caller = await openCaller(interaction, context);
  const { job, clipId } = await resolveSong(context, caller.guild.id, input.song, DOWNLOAD_SOURCE_KINDS);
  if (input.requesterOrModerator && job.userId !== caller.member.userId && !caller.isModerator) {
    throw new Refusal('not_allowed', 'Only the member who made this song, or a moderator, can use its buttons. Try `/download`.');
  }
  const request = downloadRequestSchema.parse({ kind: 'download', clipId, format: format.data, sourceJobId: job.id });
  await admit(context, caller, request.kind);
  await submitAndAcknowledge(interaction, context, caller, request);
}

export default defineCommand({
  definition,
  acknowledge: () => 'public',
  async execute(interaction, args, context) {
    await requestDownload(interaction, context, { song: args.song, format: args.format, requesterOrModerator: false });
  },
  async autocomplete(interaction, context) {
    return jobChoices(context, interaction.guildId, interaction.options.getFocused(), {
      kinds: DOWNLOAD_SOURCE_KINDS,
      succeededOnly: true,
    });
  },
  buttons: {
    download: {
      acknowledge: 'public',
      async execute(interaction, id, context) {
        await requestDownload(interaction, context, { song: id.subject, format: id.arg, requesterOrModerator: true });
      },
    },
  },
});
