import {
  ApplicationCommandOptionType,
  InteractionContextType,
  type RESTPostAPIApplicationCommandsJSONBody,
} from 'discord-api-types/v10';
import { escapeMarkdown } from 'discord.js';
import { AUDIO_LIMITS, checkAudioAttachment } from '../src/discord/attachments.js';
import { admit, openCaller, submitAndAcknowledge } from '../src/discord/caller.js';
import { Refusal } from '../src/discord/errors.js';
import { answerInPlace } from '../src/discord/respond.js';
import { deleteVoice, findVoice, listVoices } from '../src/guilds/voices.js';
import { OPERATION_COSTS } from '../src/music-api/index.js';
import { LIMITS, voiceRequestSchema } from '../src/pipeline/requests.js';
import { defineCommand } from '../src/discord/command.js';

export const definition = {
  name: 'voice',
  description: 'Voice personas: make one from a recording, list them, delete one.',
  contexts: [InteractionContextType.Guild],
  dm_permission: false,
  options: [
    {
      type: ApplicationCommandOptionType.Subcommand,
      name: 'create',
      description: `Make a voice persona from a clear solo vocal, MP3 or WAV, over 10 s (${OPERATION_COSTS.voice} credits).`,
      options: [
        {
          type: ApplicationCommandOptionType.Attachment,
          name: 'audio',
          description: `A clear solo vocal, MP3 or WAV, longer than ${AUDIO_LIMITS.voiceMinSeconds} seconds.`,
          required: true,
        },
        {
          type: ApplicationCommandOptionType.String,
          name: 'name',
          description: 'What to call the voice.',
          required: true,
          max_length: LIMITS.voiceNameMax,
        },
      ],
    },
    {
      type: ApplicationCommandOptionType.Subcommand,
      name: 'list',
      description: 'The voice personas of this server.',
    },
    {
      type: ApplicationCommandOptionType.Subcommand,
      name: 'delete',
      description: 'Delete a voice persona (its owner or a moderator).',
      options: [
        {
          type: ApplicationCommandOptionType.String,
          name: 'voice',
          description: 'The voice to delete.',
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
          throw new Refusal('invalid_input', `This server already has a voice named “${request.name}”. Pick another name.`);
        }
        await admit(context, caller, request.kind);
        await submitAndAcknowledge(interaction, context, caller, request);
        return;
      }
      case 'list': {
        const voices = await listVoices(context.db, interaction.guildId, { limit: 50 });
        const lines = voices.map(
          (voice) => `• **${escapeMarkdown(voice.name)}**, by <@${voice.ownerId}>, <t:${Math.floor(voice.createdAt.getTime() / 1000)}:d>`,
        );
        await answerInPlace(interaction, {
          content:
            lines.length === 0
              ? 'This server has no voice personas yet. Make one with `/voice create`.'
              : `**Voice personas of this server** (${voices.length})\n${lines.join('\n')}`.slice(0, 2000),
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
          throw new Refusal('not_found', 'That is not one of this server’s voice personas. Pick one from the list.');
        }
        if (!outcome.deleted) {
          throw new Refusal('not_allowed', 'Only the member who made this voice, or a moderator, can delete it.');
        }
        await answerInPlace(interaction, { content: `Deleted the voice **${escapeMarkdown(outcome.voice.name)}**.` });
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
