import {
  ApplicationCommandOptionType,
  InteractionContextType,
  type RESTPostAPIApplicationCommandsJSONBody,
} from 'discord-api-types/v10';
import type { RepliablePort } from '../src/discord/interaction-port.js';
import { AUDIO_LIMITS, readAudioAttachment, vetAudioAttachment } from '../src/discord/attachments.js';
import { checkMayRequest, loadCaller, submitAndAcknowledge } from '../src/discord/caller.js';
import { Refusal } from '../src/discord/errors.js';
import { english, localText } from '../src/i18n/index.js';
import { answerInPlace } from '../src/discord/respond.js';
import type { CommandContext } from '../src/discord/context.js';
import { listLines, shortDate } from '../src/discord/job-lookup.js';
import type { CustomId } from '../src/discord-rest/custom-ids.js';
import type { VoicePersona } from '../src/guilds/voices.js';
import { LIMITS, voiceRequestSchema } from '../src/pipeline/requests.js';
import { discordTimestamp, escapeMarkdown, truncate } from '../src/text.js';
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

/**
 * The persona a member means by what they typed in a voice option (see `resolveVoice`).
 *
 * @throws Refusal `ambiguous` listing the candidates, with a menu that continues the command
 *   when `ask` is given (`keep` runs first: it keeps what the pick goes on with), else the text
 *   says how to type one exactly; `not_found` when no voice is like it. Nothing is spent
 *   before the member picks.
 */
export async function pickVoice(
  context: CommandContext,
  guildId: string,
  typed: string,
  ask?: { readonly menu: CustomId; readonly keep?: () => Promise<void> },
): Promise<VoicePersona> {
  const match = await context.library.resolveVoice(guildId, typed);
  if ('voice' in match) return match.voice;
  const name = escapeMarkdown(truncate(typed.replaceAll('\u0000', '').trim().replace(/\s+/g, ' '), 100));
  if (match.candidates.length === 0) throw new Refusal('not_found', localText('voice.refusal.noneNamed', { name }));
  const list = listLines(
    match.candidates.map((voice) => `• **${escapeMarkdown(voice.name)}** · <@${voice.ownerId}> · ${discordTimestamp(voice.createdAt, 'd')} · \`${voice.id}\``),
  );
  const menu = ask?.menu;
  await ask?.keep?.();
  const key = match.exact
    ? menu
      ? 'voice.refusal.ambiguousPick'
      : 'voice.refusal.ambiguous'
    : menu
      ? 'voice.refusal.didYouMeanPick'
      : 'voice.refusal.didYouMean';
  throw new Refusal(
    'ambiguous',
    localText(key, { name, list }),
    menu && {
      customId: menu,
      placeholder: localText('voice.pick'),
      options: match.candidates.map((voice) => ({
        label: voice.name,
        description: `${shortDate(context.t.locale, voice.createdAt)} · ${voice.id.slice(0, 8)}`,
        value: voice.id,
      })),
    },
  );
}

/** `/voice delete` with what the member typed or picked. */
async function deleteTyped(interaction: RepliablePort, context: CommandContext, typed: string): Promise<void> {
  const caller = await loadCaller(interaction, context);
  const voice = await pickVoice(context, caller.guild.id, typed, { menu: { action: 'voice-delete-pick', subject: 'voice' } });
  const outcome = await context.library.deleteVoice({
    guildId: caller.guild.id,
    idOrName: voice.id,
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
}

export default defineCommand({
  definition,
  acknowledge: (args) => (args.subcommand === 'create' ? 'public' : 'ephemeral'),
  async execute(interaction, args, context) {
    switch (args.subcommand) {
      case 'create': {
        const { audio, name } = args.options;
        // Name and what the file declares first: bad input is refused before the database is touched.
        const named = voiceRequestSchema.shape.name.parse(name);
        const vetted = vetAudioAttachment(audio, context.settings.discordCdnUrls);
        const caller = await loadCaller(interaction, context);
        if (await context.library.findVoice(caller.guild.id, named)) {
          throw new Refusal('invalid_input', localText('voice.refusal.nameTaken', { name: escapeMarkdown(named) }));
        }
        await checkMayRequest(context, caller);
        // Only an admitted member makes the bot download anything.
        const checked = await readAudioAttachment(vetted, { minSeconds: AUDIO_LIMITS.voiceMinSeconds });
        const request = voiceRequestSchema.parse({ kind: 'voice', name: named, audioUrl: checked.url });
        await submitAndAcknowledge(interaction, context, caller, request);
        return;
      }
      case 'list': {
        const voices = await context.library.listVoices(interaction.guildId, { limit: 50 });
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
      case 'delete':
        await deleteTyped(interaction, context, args.options.voice);
        return;
    }
  },
  selects: {
    /** The voice picked when the typed name fitted several: deleted as if it had been picked from the list. */
    'voice-delete-pick': {
      acknowledge: 'ephemeral',
      execute: (interaction, _id, context) => deleteTyped(interaction, context, interaction.values[0] ?? ''),
    },
  },
  async autocomplete(interaction, context) {
    const typed = interaction.options.getFocused();
    const voices = await context.library.listVoices(interaction.guildId, { search: typed, limit: 25 });
    return voices.map((voice) => ({ name: voice.name, value: voice.id }));
  },
});
