import {
  ApplicationCommandOptionType,
  InteractionContextType,
  type RESTPostAPIApplicationCommandsJSONBody,
} from 'discord-api-types/v10';
import type { RepliablePort } from '../src/discord/interaction-port.js';
import { checkMayRequest, loadCaller, submitAndAcknowledge } from '../src/discord/caller.js';
import type { CommandContext } from '../src/discord/context.js';
import { Refusal } from '../src/discord/errors.js';
import { english, localText } from '../src/i18n/index.js';
import { DOWNLOAD_SOURCE_KINDS, fileAlreadyThere, isJobId, oncePerMenu, jobChoices, resolveSong } from '../src/discord/job-lookup.js';
import { downloadRequestSchema } from '../src/pipeline/requests.js';
import { answerPrivately } from '../src/discord/respond.js';
import { defineCommand } from '../src/discord/command.js';
import { takeFromArg } from '../src/pipeline/takes.js';

export const definition = {
  name: 'download',
  description: english('command.download.description'),
  contexts: [InteractionContextType.Guild],
  dm_permission: false,
  options: [
    {
      type: ApplicationCommandOptionType.String,
      name: 'song',
      description: english('command.download.song.description'),
      required: true,
      autocomplete: true,
    },
    {
      type: ApplicationCommandOptionType.String,
      name: 'format',
      description: english('command.download.format.description'),
      required: true,
      choices: [
        { name: english('command.download.format.choice.mp3'), value: 'mp3' },
        { name: english('command.download.format.choice.wav'), value: 'wav' },
      ],
    },
  ],
} as const satisfies RESTPostAPIApplicationCommandsJSONBody;

async function requestDownload(
  interaction: RepliablePort,
  context: CommandContext,
  input: { song: string; format: string | undefined; requesterOrModerator: boolean; take?: number },
): Promise<void> {
  const format = downloadRequestSchema.shape.format.safeParse(input.format);
  if (!format.success) throw new Refusal('invalid_input', localText('download.refusal.format'));
  const caller = await loadCaller(interaction, context);
  const take = input.take ?? 1;
  const { job, clipId } = await resolveSong(context, caller.guild.id, input.song, DOWNLOAD_SOURCE_KINDS, { action: 'download-pick', subject: format.data }, take);
  // A file the song comes with (an old button), or made already, is its link, free.
  const there = await fileAlreadyThere(context, job, clipId, format.data, take);
  if (there !== undefined) {
    await answerPrivately(interaction, { content: there });
    return;
  }
  if (input.requesterOrModerator && job.userId !== caller.member.userId && !caller.isModerator) {
    throw new Refusal('not_allowed', localText('songButtons.notYours', { command: '/download' }));
  }
  const request = downloadRequestSchema.parse({ kind: 'download', clipId, format: format.data, sourceJobId: job.id });
  await checkMayRequest(context, caller);
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
        // The argument is the format, and `:<take>` for a take after the first.
        const [format, takeText] = (id.arg ?? '').split(':');
        const take = takeFromArg(takeText);
        if (!isJobId(id.subject) || take === undefined) throw new Refusal('not_found', localText('jobLookup.notASong'));
        await requestDownload(interaction, context, { song: id.subject, format, requesterOrModerator: true, take });
      },
    },
  },
  selects: {
    /** The song picked when the typed title fitted several; the format is the one the command asked for. */
    'download-pick': {
      acknowledge: 'public',
      async execute(interaction, id, context) {
        await oncePerMenu(context, interaction.message.id, () =>
          requestDownload(interaction, context, { song: interaction.values[0] ?? '', format: id.subject, requesterOrModerator: false }),
        );
      },
    },
  },
});
