/**
 * Remix: the Remix button on a song result, and `/library`'s "Remix a song" menu, open the song
 * form filled from that song; submitting it makes a new song like `/song` (every check, the same
 * price, the same model or voice), linked to its source. Any member may remix any server song.
 */
import { clipOfTake, takeArg, takeCount, takeFromArg } from '../src/pipeline/takes.js';
import { ActionRowBuilder, ModalBuilder, TextInputBuilder, TextInputStyle } from 'discord.js';
import type { ButtonHandler, GuildButton, GuildModalSubmit, GuildStringSelect, ModalHandler, SelectHandler } from '../src/discord/command.js';
import type { CommandContext } from '../src/discord/context.js';
import { encodeCustomId } from '../src/discord-rest/custom-ids.js';
import { Refusal } from '../src/discord/errors.js';
import { english, localText, type Translator } from '../src/i18n/index.js';
import { isJobId } from '../src/discord/job-lookup.js';
import { describeJob } from '../src/pipeline/titles.js';
import { type JobRow } from '../src/pipeline/job-rows.js';
import { isRemixSource } from '../src/pipeline/library.js';
import { LIMITS } from '../src/pipeline/requests.js';
import { truncate } from '../src/text.js';
import { MAKE_SONG_FIELDS, withinBudget } from './lyrics.js';
import { requestSong, type SongFields } from './song.js';

/**
 * The song to remix: a finished song of this guild.
 *
 * @throws Refusal for a song of another guild, or one that no longer exists.
 */
async function remixSource(context: CommandContext, guildId: string, jobId: string | undefined): Promise<JobRow> {
  // The same sentence as the pipeline's, when the source disappears after the form was sent.
  if (jobId === undefined || !isJobId(jobId)) throw new Refusal('not_found', localText('refusal.remixSourceGone'));
  const job = await context.jobs.getJob(jobId);
  if (job && job.guildId !== guildId) throw new Refusal('not_allowed', localText('remix.refusal.otherGuild'));
  if (!isRemixSource(job, guildId)) throw new Refusal('not_found', localText('refusal.remixSourceGone'));
  return job;
}

function requestString(job: JobRow, field: string): string | undefined {
  const value = job.request[field];
  return typeof value === 'string' && value.trim().length > 0 ? value : undefined;
}

/** What the form starts with: what the song was asked for, and the words it was sung with. */
function formValues(job: JobRow, take: number): { prompt?: string; lyrics?: string; title?: string } {
  const clip = clipOfTake(job, take);
  const lyrics = clip?.lyrics?.trim() ? clip.lyrics : requestString(job, 'lyrics');
  const title = requestString(job, 'title') ?? (clip?.title?.trim() ? clip.title : undefined);
  return { prompt: requestString(job, 'prompt'), lyrics, title };
}

/**
 * What the remix keeps of its source besides the form: the voice (a persona song stays one,
 * at its price), or the model and the instrumental setting.
 *
 * @throws Refusal when the source's voice was deleted since.
 */
async function keptSettings(context: CommandContext, job: JobRow): Promise<Pick<SongFields, 'model' | 'instrumental' | 'voice'>> {
  if (job.kind === 'persona_song') {
    const voiceId = requestString(job, 'voiceId');
    const voice = voiceId === undefined ? undefined : await context.library.findVoice(job.guildId, voiceId);
    if (!voice) throw new Refusal('not_found', localText('remix.refusal.voiceGone'));
    return { voice: voice.id };
  }
  const model = requestString(job, 'model');
  return {
    model: model !== undefined && context.settings.musicModels.includes(model) ? model : undefined,
    instrumental: job.request.instrumental === true ? true : undefined,
  };
}

function input(id: string, label: string, style: TextInputStyle, max: number, value: string | undefined): TextInputBuilder {
  const field = new TextInputBuilder().setCustomId(id).setLabel(label).setStyle(style).setRequired(false).setMaxLength(max);
  if (value !== undefined && value.trim().length > 0) field.setValue(value.slice(0, max));
  return field;
}

/** What a remix says it was made from: the song, and its take where it has several. */
function remixedTitle(job: JobRow, take: number): string {
  const title = describeJob(job, english, 180);
  return takeCount(job) > 1 ? `${title} (${english('result.take', { n: take })})` : title;
}

/** The "Make a song" form (the same fields as from lyrics), filled with the song, editable, in the member's language. */
function remixModal(t: Translator, job: JobRow, take: number): ModalBuilder {
  const values = formValues(job, take);
  const style = input(MAKE_SONG_FIELDS.style, t('songForm.style'), TextInputStyle.Paragraph, LIMITS.promptMax, values.prompt);
  if (values.prompt === undefined) style.setPlaceholder(t('songForm.stylePlaceholder'));
  return new ModalBuilder()
    .setCustomId(encodeCustomId({ action: 'remix-modal', subject: job.id, arg: takeArg(take) }))
    // Discord allows 45 characters in a modal's title.
    .setTitle(truncate(t('songForm.remixTitle', { title: describeJob(job, t) }), 45))
    .addComponents(
      new ActionRowBuilder<TextInputBuilder>().addComponents(
        input(MAKE_SONG_FIELDS.lyrics, t('songForm.lyrics'), TextInputStyle.Paragraph, LIMITS.lyricsMax, values.lyrics),
      ),
      new ActionRowBuilder<TextInputBuilder>().addComponents(style),
      new ActionRowBuilder<TextInputBuilder>().addComponents(
        input(MAKE_SONG_FIELDS.title, t('songForm.songTitle'), TextInputStyle.Short, LIMITS.titleMax, values.title),
      ),
    );
}

/**
 * Opens the form. The modal must be Discord's first answer, so the lookups before it are
 * bounded in time; a source whose voice is gone is refused here, before anything is typed.
 */
async function openRemix(interaction: GuildButton | GuildStringSelect, context: CommandContext, jobId: string | undefined, take = 1): Promise<void> {
  const job = await withinBudget(
    (async () => {
      const source = await remixSource(context, interaction.guildId, jobId);
      await keptSettings(context, source);
      return source;
    })(),
  );
  await interaction.showModal(remixModal(context.t, job, take));
}

export const remixButtons = {
  remix: {
    acknowledge: 'modal',
    // A forged take is the first: the form only fills in what the song was made from.
    execute: (interaction, id, context) => openRemix(interaction, context, id.subject, takeFromArg(id.arg) ?? 1),
  },
} as const satisfies Record<'remix', ButtonHandler>;

export const remixSelects = {
  'library-remix': {
    acknowledge: 'modal',
    execute: (interaction, _id, context) => openRemix(interaction, context, interaction.values[0]),
  },
} as const satisfies Record<'library-remix', SelectHandler>;

export const remixModals = {
  'remix-modal': {
    acknowledge: 'public',
    async execute(interaction: GuildModalSubmit, id, context) {
      const source = await remixSource(context, interaction.guildId, id.subject);
      // A field left empty may be missing from the submission altogether.
      const field = (name: string) => {
        const data = interaction.fields.fields.get(name);
        return data && 'value' in data && typeof data.value === 'string' ? data.value : undefined;
      };
      await requestSong(interaction, context, {
        ...(await keptSettings(context, source)),
        lyrics: field(MAKE_SONG_FIELDS.lyrics),
        prompt: field(MAKE_SONG_FIELDS.style),
        title: field(MAKE_SONG_FIELDS.title),
        remixOf: { jobId: source.id, title: remixedTitle(source, takeFromArg(id.arg) ?? 1) },
      });
    },
  },
} as const satisfies Record<'remix-modal', ModalHandler>;
