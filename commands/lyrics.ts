import {
  ApplicationCommandOptionType,
  InteractionContextType,
  type RESTPostAPIApplicationCommandsJSONBody,
} from 'discord-api-types/v10';
import { ActionRowBuilder, ModalBuilder, TextInputBuilder, TextInputStyle } from 'discord.js';
import { checkMayRequest, memberOf, loadCaller, submitAndAcknowledge } from '../src/discord/caller.js';
import type { CommandContext } from '../src/discord/context.js';
import { encodeCustomId, type CustomId } from '../src/discord-rest/custom-ids.js';
import { Refusal } from '../src/discord/errors.js';
import { english, localText } from '../src/i18n/index.js';
import { isJobId } from '../src/discord/job-lookup.js';
import { isModerator } from '../src/guilds/access.js';
import { isShownResult, type JobRow } from '../src/pipeline/job-rows.js';
import { LIMITS, lyricsRequestSchema } from '../src/pipeline/requests.js';
import { lyricsTitleOf } from '../src/pipeline/titles.js';
import { defineCommand, type GuildButton, type GuildModalSubmit } from '../src/discord/command.js';
import { requestSong } from './song.js';

export const definition = {
  name: 'lyrics',
  description: english('command.lyrics.description'),
  contexts: [InteractionContextType.Guild],
  dm_permission: false,
  options: [
    {
      type: ApplicationCommandOptionType.String,
      name: 'prompt',
      description: english('command.lyrics.prompt.description'),
      required: true,
      max_length: LIMITS.promptMax,
    },
  ],
} as const satisfies RESTPostAPIApplicationCommandsJSONBody;

/** The form's fields; their ids are what the modal submit carries back. */
export const MAKE_SONG_FIELDS = { lyrics: 'lyrics', style: 'style', title: 'title' } as const;

/** Discord wants the modal within 3 seconds; the one lookup before it gets this long. */
const MODAL_LOOKUP_BUDGET_MS = 2_000;

function lyricsOf(job: JobRow): string {
  return job.result?.lyrics ?? job.result?.clips?.[0]?.lyrics ?? '';
}

/**
 * The lyrics job a "Make a song" button or form names, if the member may spend on it: its
 * requester or a moderator.
 */
async function lyricsJobFor(interaction: GuildButton | GuildModalSubmit, id: CustomId, context: CommandContext): Promise<JobRow> {
  if (!isJobId(id.subject)) throw new Refusal('not_found', localText('lyrics.refusal.gone'));
  const [job, guild] = await Promise.all([
    context.pipeline.findJob(interaction.guildId, id.subject),
    context.guilds.findGuild(interaction.guildId),
  ]);
  if (!job || job.kind !== 'lyrics' || !isShownResult(job)) {
    throw new Refusal('not_found', localText('lyrics.refusal.gone'));
  }
  const member = memberOf(interaction);
  if (job.userId !== member.userId && !(guild && isModerator(guild, member))) {
    throw new Refusal('not_allowed', localText('lyrics.refusal.notYours'));
  }
  return job;
}

/** `work`, or a refusal asking to try again once {@link MODAL_LOOKUP_BUDGET_MS} passed: for lookups before a modal. */
export function withinBudget<T>(work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Refusal('not_found', localText('songForm.busy'))), MODAL_LOOKUP_BUDGET_MS);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

export default defineCommand({
  definition,
  acknowledge: () => 'public',
  async execute(interaction, args, context) {
    const request = lyricsRequestSchema.parse({ kind: 'lyrics', prompt: args.prompt });
    const caller = await loadCaller(interaction, context, { queuedFor: 'lyrics' });
    await checkMayRequest(context, caller);
    await submitAndAcknowledge(interaction, context, caller, request);
  },
  buttons: {
    /**
     * Opens the "Make a song" form with the lyrics filled in. The modal must be Discord's
     * first answer, so one primary-key lookup (bounded in time) comes before it.
     */
    'make-song': {
      acknowledge: 'modal',
      async execute(interaction, id, context) {
        const job = await withinBudget(lyricsJobFor(interaction, id, context));
        const lyrics = lyricsOf(job).slice(0, LIMITS.lyricsMax);
        const lyricsInput = new TextInputBuilder()
          .setCustomId(MAKE_SONG_FIELDS.lyrics)
          .setLabel(context.t('songForm.lyrics'))
          .setStyle(TextInputStyle.Paragraph)
          .setRequired(true)
          .setMaxLength(LIMITS.lyricsMax);
        if (lyrics.trim().length > 0) lyricsInput.setValue(lyrics);
        // The lyrics' title starts as the song's: the member may change it or clear it.
        const titleInput = new TextInputBuilder()
          .setCustomId(MAKE_SONG_FIELDS.title)
          .setLabel(context.t('songForm.songTitle'))
          .setStyle(TextInputStyle.Short)
          .setRequired(false)
          .setMaxLength(LIMITS.titleMax);
        const title = lyricsTitleOf(job);
        if (title) titleInput.setValue(title.slice(0, LIMITS.titleMax));
        const modal = new ModalBuilder()
          .setCustomId(encodeCustomId({ action: 'make-song-modal', subject: job.id }))
          .setTitle(context.t('songForm.title'))
          .addComponents(
            new ActionRowBuilder<TextInputBuilder>().addComponents(lyricsInput),
            new ActionRowBuilder<TextInputBuilder>().addComponents(
              new TextInputBuilder()
                .setCustomId(MAKE_SONG_FIELDS.style)
                .setLabel(context.t('songForm.style'))
                .setPlaceholder(context.t('songForm.stylePlaceholder'))
                .setStyle(TextInputStyle.Paragraph)
                .setRequired(false)
                .setMaxLength(LIMITS.promptMax),
            ),
            new ActionRowBuilder<TextInputBuilder>().addComponents(titleInput),
          );
        await interaction.showModal(modal);
      },
    },
  },
  modals: {
    'make-song-modal': {
      acknowledge: 'public',
      async execute(interaction, id, context) {
        await lyricsJobFor(interaction, id, context);
        // A field left empty may be missing from the submission altogether.
        const field = (name: string) => {
          const data = interaction.fields.fields.get(name);
          return data && 'value' in data && typeof data.value === 'string' ? data.value : undefined;
        };
        await requestSong(interaction, context, {
          lyrics: field(MAKE_SONG_FIELDS.lyrics),
          prompt: field(MAKE_SONG_FIELDS.style),
          title: field(MAKE_SONG_FIELDS.title),
        });
      },
    },
  },
});
