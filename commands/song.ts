import {
  ApplicationCommandOptionType,
  InteractionContextType,
  type RESTPostAPIApplicationCommandsJSONBody,
} from 'discord-api-types/v10';
import type { RepliablePort } from '../src/discord/interaction-port.js';
import { Refusal } from '../src/discord/errors.js';
import { english, localText } from '../src/i18n/index.js';
import { checkMayRequest, loadCaller, submitAndAcknowledge, type Caller } from '../src/discord/caller.js';
import type { CommandContext } from '../src/discord/context.js';
import { pickVoice } from './voice.js';
import {
  LIMITS,
  personaSongRequestSchema,
  songRequestSchema,
  type GenerationRequest,
  type PersonaSongRequest,
  type SongRequest,
} from '../src/pipeline/requests.js';
import { defineCommand } from '../src/discord/command.js';
import { z } from 'zod';

export const definition = {
  name: 'song',
  description: english('command.song.description'),
  contexts: [InteractionContextType.Guild],
  dm_permission: false,
  options: [
    {
      type: ApplicationCommandOptionType.String,
      name: 'prompt',
      description: english('command.song.prompt.description'),
      required: true,
      max_length: LIMITS.promptMax,
    },
    {
      type: ApplicationCommandOptionType.String,
      name: 'lyrics',
      description: english('command.song.lyrics.description'),
      max_length: LIMITS.lyricsMax,
    },
    {
      type: ApplicationCommandOptionType.String,
      name: 'title',
      description: english('command.song.title.description'),
      max_length: LIMITS.titleMax,
    },
    {
      type: ApplicationCommandOptionType.String,
      name: 'model',
      description: english('command.song.model.description'),
      autocomplete: true,
    },
    {
      type: ApplicationCommandOptionType.Boolean,
      name: 'instrumental',
      description: english('command.song.instrumental.description'),
    },
    {
      type: ApplicationCommandOptionType.String,
      name: 'voice',
      description: english('command.song.voice.description'),
      autocomplete: true,
    },
  ],
} as const satisfies RESTPostAPIApplicationCommandsJSONBody;

/** What a song request is made of, from the command or from the "Make a song" form. */
export interface SongFields {
  readonly prompt?: string | undefined;
  readonly lyrics?: string | undefined;
  readonly title?: string | undefined;
  readonly model?: string | undefined;
  readonly instrumental?: boolean | undefined;
  readonly voice?: string | undefined;
  /** The song this one remixes (the Remix button), recorded with the new job. */
  readonly remixOf?: { readonly jobId: string; readonly title: string } | undefined;
  /** The first song of the line this one rerolls (the Reroll button), recorded with the new job. */
  readonly rerollOf?: { readonly jobId: string; readonly title: string } | undefined;
}

/** A song's fields checked with zod (before any database call), the model named resolved; the voice is looked up later. */
export type CheckedSong =
  | { readonly voice: undefined; readonly request: SongRequest }
  | { readonly voice: string; readonly request: Omit<PersonaSongRequest, 'voiceId' | 'personaId'> };

/**
 * Checks the fields with zod, once, before anything is read or reserved, and resolves the
 * model among the configured ones. The request then goes on as the typed value it is.
 * `typed`: the texts were typed as command options, where a blank one is refused as empty;
 * otherwise they come from a form, where a field left blank is a field not given.
 */
export function checkSongFields(models: readonly string[], fields: SongFields, options: { typed?: boolean } = {}): CheckedSong {
  const texts = options.typed
    ? { prompt: fields.prompt, lyrics: fields.lyrics, title: fields.title }
    : {
        prompt: blankToUndefined(fields.prompt, LIMITS.promptMax),
        lyrics: blankToUndefined(fields.lyrics, LIMITS.lyricsMax),
        title: blankToUndefined(fields.title, LIMITS.titleMax),
      };
  if (fields.voice === undefined) {
    const model = fields.model === undefined ? undefined : configuredModel(models, fields.model);
    if (fields.model !== undefined && model === undefined) {
      throw new Refusal('invalid_input', localText('song.refusal.unknownModel'));
    }
    return { voice: undefined, request: songRequestSchema.parse({ kind: 'song', ...texts, model, instrumental: fields.instrumental, remixOf: fields.remixOf, rerollOf: fields.rerollOf }) };
  }
  if (fields.instrumental === true) {
    throw new Refusal('invalid_input', localText('song.refusal.voiceInstrumental'));
  }
  if (fields.model !== undefined) {
    throw new Refusal('invalid_input', localText('song.refusal.voiceModel'));
  }
  const persona = personaSongRequestSchema.omit({ voiceId: true, personaId: true });
  return { voice: fields.voice, request: persona.parse({ kind: 'persona_song', ...texts, remixOf: fields.remixOf, rerollOf: fields.rerollOf }) };
}

/**
 * Completes a checked song for the caller's guild: the guild's default model when none was
 * named, or the voice persona named. `askingId` (the interaction's id) lets a voice that fits
 * several be asked about with a menu that goes on with these fields (kept meanwhile, see
 * pending-choices.ts).
 */
async function completeSongRequest(
  context: CommandContext,
  caller: Caller,
  checked: CheckedSong,
  fields: SongFields,
  askingId?: string,
): Promise<GenerationRequest> {
  if (checked.voice === undefined) {
    const serverDefault = caller.guild.defaultModel ?? undefined;
    const model = checked.request.model ?? (serverDefault && context.settings.musicModels.includes(serverDefault) ? serverDefault : undefined);
    return model === undefined ? checked.request : { ...checked.request, model };
  }
  const { pendingChoices } = context;
  const ask =
    askingId === undefined || pendingChoices === undefined
      ? undefined
      : {
          menu: { action: 'song-voice-pick', subject: askingId } as const,
          keep: () => pendingChoices.keep(askingId, { userId: caller.member.userId, prompt: fields.prompt, lyrics: fields.lyrics, title: fields.title }),
        };
  const voice = await pickVoice(context, caller.guild.id, checked.voice, ask);
  return { ...checked.request, voiceId: voice.id, personaId: voice.personaId };
}

/** A configured model by its name as typed: exactly, or in any case and spacing. */
export function configuredModel(models: readonly string[], typed: string): string | undefined {
  const name = (value: string) => value.trim().replace(/\s+/g, ' ').toLowerCase();
  return models.find((model) => model === typed) ?? models.find((model) => name(model) === name(typed));
}

/** Validates, admits and submits a song; used by `/song` and by the "Make a song" form. */
export async function requestSong(
  interaction: RepliablePort,
  context: CommandContext,
  fields: SongFields,
  options: { typed?: boolean } = {},
): Promise<void> {
  const checked = checkSongFields(context.settings.musicModels, fields, options);
  const caller = await loadCaller(interaction, context, { queuedFor: 'song' });
  const request = await completeSongRequest(context, caller, checked, fields, interaction.id);
  await checkMayRequest(context, caller);
  await submitAndAcknowledge(interaction, context, caller, request);
}

/** A field left blank is a field not given; one longer than its limit stays, and is refused as too long, blank or not. */
function blankToUndefined(value: string | undefined, max: number): string | undefined {
  return value === undefined || (value.length <= max && value.trim() === '') ? undefined : value;
}

/** What `/song` keeps while it asks which voice was meant. */
const keptSong = z.object({
  userId: z.string(),
  prompt: z.string().optional(),
  lyrics: z.string().optional(),
  title: z.string().optional(),
});

export default defineCommand({
  definition,
  acknowledge: () => 'public',
  async execute(interaction, args, context) {
    await requestSong(interaction, context, args, { typed: true });
  },
  async autocomplete(interaction, context) {
    const focused = interaction.options.getFocused(true);
    const typed = focused.value.trim().toLowerCase();
    if (focused.name === 'model') {
      return context.settings.musicModels
        .filter((model) => model.toLowerCase().includes(typed))
        .map((model) => ({ name: model.slice(0, 100), value: model.slice(0, 100) }));
    }
    if (focused.name === 'voice') {
      const voices = await context.library.listVoices(interaction.guildId, { search: typed, limit: 25 });
      return voices.map((voice) => ({ name: voice.name, value: voice.id }));
    }
    return [];
  },
  selects: {
    /** The voice picked when the typed name fitted several: the song is asked for with the options kept. subject: the asking interaction's id. */
    'song-voice-pick': {
      acknowledge: 'public',
      async execute(interaction, id, context) {
        const kept = keptSong.safeParse(await context.pendingChoices?.take(id.subject));
        if (!kept.success || kept.data.userId !== interaction.user.id) {
          throw new Refusal('not_found', localText('song.refusal.pickGone'));
        }
        const { userId: _userId, ...fields } = kept.data;
        await requestSong(interaction, context, { ...fields, voice: interaction.values[0] ?? '' });
      },
    },
  },
});
