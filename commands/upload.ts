import {
  ApplicationCommandOptionType,
  InteractionContextType,
  type RESTPostAPIApplicationCommandsJSONBody,
} from 'discord-api-types/v10';
import { readAudioAttachment, vetAudioAttachment } from '../src/discord/attachments.js';
import { checkMayRequest, loadCaller, submitAndAcknowledge } from '../src/discord/caller.js';
import { english } from '../src/i18n/index.js';
import { LIMITS, uploadRequestSchema } from '../src/pipeline/requests.js';
import { defineCommand } from '../src/discord/command.js';

export const definition = {
  name: 'upload',
  description: english('command.upload.description'),
  contexts: [InteractionContextType.Guild],
  dm_permission: false,
  options: [
    {
      type: ApplicationCommandOptionType.Attachment,
      name: 'audio',
      description: english('command.upload.audio.description'),
      required: true,
    },
    {
      type: ApplicationCommandOptionType.String,
      name: 'title',
      description: english('command.upload.title.description'),
      max_length: LIMITS.titleMax,
    },
  ],
} as const satisfies RESTPostAPIApplicationCommandsJSONBody;

export default defineCommand({
  definition,
  acknowledge: () => 'public',
  async execute(interaction, args, context) {
    uploadRequestSchema.shape.title.parse(args.title);
    const vetted = vetAudioAttachment(args.audio, context.settings.discordCdnUrls);
    const caller = await loadCaller(interaction, context);
    await checkMayRequest(context, caller);
    // Only an admitted member makes the bot download anything.
    const checked = await readAudioAttachment(vetted);
    const request = uploadRequestSchema.parse({ kind: 'upload', audioUrl: checked.url, title: args.title });
    await submitAndAcknowledge(interaction, context, caller, request);
  },
});
