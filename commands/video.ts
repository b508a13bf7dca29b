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
import { fileAlreadyThere, isJobId, jobChoices, oncePerMenu, resolveSong, VIDEO_SOURCE_KINDS } from '../src/discord/job-lookup.js';
import { videoRequestSchema } from '../src/pipeline/requests.js';
import { answerPrivately } from '../src/discord/respond.js';
import { takeFromArg } from '../src/pipeline/takes.js';
import { defineCommand } from '../src/discord/command.js';

export const definition = {
  name: 'video',
  description: english('command.video.description'),
  contexts: [InteractionContextType.Guild],
  dm_permission: false,
  options: [
    {
      type: ApplicationCommandOptionType.String,
      name: 'song',
      description: english('command.video.song.description'),
      required: true,
      autocomplete: true,
    },
  ],
} as const satisfies RESTPostAPIApplicationCommandsJSONBody;

/**
 * A video of one of the guild's songs. From a button on a result, only the song's requester
 * or a moderator may spend on it; from the command, any member may. A song that already
 * comes with its video (an old button) gets its link, free.
 */
async function requestVideo(
  interaction: RepliablePort,
  context: CommandContext,
  song: string,
  options: { requesterOrModerator: boolean; take?: number },
): Promise<void> {
  const caller = await loadCaller(interaction, context);
  const take = options.take ?? 1;
  const { job, clipId } = await resolveSong(context, caller.guild.id, song, VIDEO_SOURCE_KINDS, { action: 'video-pick', subject: 'song' }, take);
  const there = await fileAlreadyThere(context, job, clipId, 'video', take);
  if (there !== undefined) {
    await answerPrivately(interaction, { content: there });
    return;
  }
  if (options.requesterOrModerator && job.userId !== caller.member.userId && !caller.isModerator) {
    throw new Refusal('not_allowed', localText('songButtons.notYours', { command: '/video' }));
  }
  const request = videoRequestSchema.parse({ kind: 'video', clipId, sourceJobId: job.id });
  await checkMayRequest(context, caller);
  await submitAndAcknowledge(interaction, context, caller, request);
}

export default defineCommand({
  definition,
  acknowledge: () => 'public',
  async execute(interaction, args, context) {
    await requestVideo(interaction, context, args.song, { requesterOrModerator: false });
  },
  async autocomplete(interaction, context) {
    return jobChoices(context, interaction.guildId, interaction.options.getFocused(), {
      kinds: VIDEO_SOURCE_KINDS,
      succeededOnly: true,
    });
  },
  buttons: {
    video: {
      acknowledge: 'public',
      async execute(interaction, id, context) {
        const take = takeFromArg(id.arg);
        if (!isJobId(id.subject) || take === undefined) throw new Refusal('not_found', localText('jobLookup.notASong'));
        await requestVideo(interaction, context, id.subject, { requesterOrModerator: true, take });
      },
    },
  },
  selects: {
    /** The song picked when the typed title fitted several: the command goes on as if it had been picked. */
    'video-pick': {
      acknowledge: 'public',
      async execute(interaction, _id, context) {
        await oncePerMenu(context, interaction.message.id, () =>
          requestVideo(interaction, context, interaction.values[0] ?? '', { requesterOrModerator: false }),
        );
      },
    },
  },
});
