import {
  ApplicationCommandOptionType,
  InteractionContextType,
  type RESTPostAPIApplicationCommandsJSONBody,
} from 'discord-api-types/v10';
import { AUDIO_LIMITS, checkAudioAttachment } from '../src/discord/attachments.js';
import { admit, openCaller, submitAndAcknowledge } from '../src/discord/caller.js';
import { Refusal } from '../src/discord/errors.js';
import { english, localText } from '../src/i18n/index.js';
import { answerInPlace } from '../src/discord/respond.js';
import { deleteVoice, findVoice, listVoices } from '../src/guilds/voices.js';
import { LIMITS, voiceRequestSchema } from '../src/pipeline/requests.js';
import { discordTimestamp, escapeMarkdown } from '../src/text.js';
import { defineCommand } from '../src/discord/command.js';

export const definition = {
  name: 'voice',
  description: english('command.voice.description'),
  contexts: [InteractionContextType.Guild],
  dm_permission: false,
  options: [
    {
      type: ApplicationCommandOptionType.Subcommand,
      name: 'create',
      description: english('command.voice.create.description'),
      options: [
        {
          type: ApplicationCommandOptionType.Attachment,
          name: 'audio',
          description: english('command.voice.create.audio.description'),
          required: true,
        },
        {
          type: ApplicationCommandOptionType.String,
          name: 'name',
          description: english('command.voice.create.name.description'),
          required: true,
          max_length: LIMITS.voiceNameMax,
        },
      ],
    },
    {
      type: ApplicationCommandOptionType.Subcommand,
      name: 'list',
      description: english('command.voice.list.description'),
    },
    {
      type: ApplicationCommandOptionType.Subcommand,
      name: 'delete',
      description: english('command.voice.delete.description'),
      options: [
        {
          type: ApplicationCommandOptionType.String,
          name: 'voice',
          description: english('command.voice.delete.voice.description'),
          required: true,
          autocomplete: true,
        },
      ],
    },
  ],
} as const satisfies RESTPostAPIApplicationCommandsJSONBody;

export default defineCommand({
  definition,
  acknowledge: (args) => (args.subcommand === 'create' ? 'public' : 'ephemeral'),
  async execute(interaction, args, context) {
    switch (args.subcommand) {
      case 'create': {
        const { audio, name } = args.options;
        // Name and file first: bad input is refused before the database is touched.
        const named = voiceRequestSchema.shape.name.parse(name);
        const checked = await checkAudioAttachment(audio, { minSeconds: AUDIO_LIMITS.voiceMinSeconds });
        const request = voiceRequestSchema.parse({ kind: 'voice', name: named, audioUrl: checked.url });
        const caller = await openCaller(interaction, context);
        if (await findVoice(context.db, caller.guild.id, request.name)) {
          throw new Refusal('invalid_input', localText('voice.refusal.nameTaken', { name: escapeMarkdown(request.name) }));
        }
        await admit(context, caller, request.kind);
        await submitAndAcknowledge(interaction, context, caller, request);
        return;
      }
      case 'list': {
        const voices = await listVoices(context.db, interaction.guildId, { limit: 50 });
        const lines = voices.map((voice) =>
          context.t('voice.list.line', { name: escapeMarkdown(voice.name), user: voice.ownerId, date: discordTimestamp(voice.createdAt, 'd') }),
        );
        await answerInPlace(interaction, {
          content:
            lines.length === 0
              ? context.t('voice.list.empty')
              : [context.t('voice.list.heading', { count: voices.length }), ...lines].join('\n').slice(0, 2000),
        });
        return;
      }
      case 'delete': {
        const caller = await openCaller(interaction, context);
        const outcome = await deleteVoice(context.db, {
          guildId: caller.guild.id,
          idOrName: args.options.voice,
          actorId: caller.member.userId,
          isModerator: caller.isModerator,
        });
        if (!outcome.deleted && outcome.reason === 'not_found') {
          throw new Refusal('not_found', localText('voice.refusal.unknown'));
        }
        if (!outcome.deleted) {
          throw new Refusal('not_allowed', localText('voice.refusal.notYours'));
        }
        await answerInPlace(interaction, { content: context.t('voice.deleted', { name: escapeMarkdown(outcome.voice.name) }) });
        return;
      }
    }
  },
  async autocomplete(interaction, context) {
    const typed = interaction.options.getFocused();
    const voices = await listVoices(context.db, interaction.guildId, { search: typed, limit: 25 });
    return voices.map((voice) => ({ name: voice.name, value: voice.id }));
  },
});
