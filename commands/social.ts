/**
 * The social buttons on every song: Like (one per member, pressed again to take it back; the
 * count on the message follows within a moment) and Reroll (the same inputs made again, checked
 * and charged as `/song` for whoever presses it; the result links the first song of its line).
 * A hidden or deleted song has neither.
 */
import type { ButtonHandler, GuildButton } from '../src/discord/command.js';
import type { CommandContext } from '../src/discord/context.js';
import { Refusal } from '../src/discord/errors.js';
import type { ComponentPort } from '../src/discord/interaction-port.js';
import { isJobId } from '../src/discord/job-lookup.js';
import { answerInPlace } from '../src/discord/respond.js';
import { LOCALES, localText, resolveLocale, translator, type AppLocale } from '../src/i18n/index.js';
import type { JobRow } from '../src/pipeline/job-rows.js';
import { isLikeable } from '../src/pipeline/likes.js';
import { RequestTakenError } from '../src/pipeline/requests.js';
import { describeJob } from '../src/pipeline/titles.js';
import { escapeMarkdown } from '../src/text.js';
import { requestSong, type SongFields } from './song.js';

/** A second press of Reroll on one song by one member within this long is the same reroll. */
export const REROLL_PRESS_MS = 5_000;

/**
 * The language a result message was written in, from its footer (a result's footer is
 * `job.footer` in its language); the guild's when it cannot tell.
 */
function resultLocaleOf(message: ComponentPort['message'], jobId: string, fallback: AppLocale | null): AppLocale | null {
  const footer = message.embeds[0]?.footer?.text;
  return LOCALES.find((locale) => translator(locale)('job.footer', { id: jobId }) === footer) ?? fallback;
}

async function like(interaction: GuildButton, jobId: string, context: CommandContext): Promise<void> {
  if (!isJobId(jobId)) throw new Refusal('not_found', localText('like.gone'));
  const liked = await context.pipeline.likeSong(
    { guildId: interaction.guildId, jobId, userId: interaction.user.id, pressId: interaction.id },
    {
      channelId: interaction.channelId ?? '',
      messageId: interaction.channelId ? interaction.message.id : '',
      locale: resultLocaleOf(interaction.message, jobId, resolveLocale(interaction.guildLocale)),
    },
  );
  // The other process that took this very press answers it.
  if (liked.outcome === 'repeated') throw new RequestTakenError(jobId);
  if (liked.outcome === 'not_likeable') throw new Refusal('not_found', localText('like.gone'));
  const title = escapeMarkdown(describeJob(liked.job, context.t));
  await answerInPlace(interaction, { content: context.t(liked.liked ? 'like.liked' : 'like.unliked', { title, likes: liked.likes }) });
}

function requestString(job: JobRow, field: string): string | undefined {
  const value = job.request[field];
  return typeof value === 'string' && value.trim().length > 0 ? value : undefined;
}

/** The first song of the source's line: the song a reroll was made from, or the source itself. */
function firstOfLine(source: JobRow): { jobId: string; title: string } {
  const recorded = source.request.rerollOf;
  if (typeof recorded === 'object' && recorded !== null) {
    const { jobId, title } = recorded as Record<string, unknown>;
    if (typeof jobId === 'string' && typeof title === 'string') return { jobId, title };
  }
  return { jobId: source.id, title: describeJob(source) };
}

/**
 * What the song was asked for, to ask again: its prompt, lyrics and title as the member gave
 * them, and its voice, or its model (while still offered) and instrumental setting.
 *
 * @throws Refusal when the song's voice was deleted since.
 */
async function sameInputs(context: CommandContext, source: JobRow): Promise<SongFields> {
  const texts = { prompt: requestString(source, 'prompt'), lyrics: requestString(source, 'lyrics'), title: requestString(source, 'title') };
  if (source.kind === 'persona_song') {
    const voiceId = requestString(source, 'voiceId');
    const voice = voiceId === undefined ? undefined : await context.library.findVoice(source.guildId, voiceId);
    if (!voice) throw new Refusal('not_found', localText('reroll.voiceGone'));
    return { ...texts, voice: voice.id };
  }
  const model = requestString(source, 'model');
  return {
    ...texts,
    model: model !== undefined && context.settings.musicModels.includes(model) ? model : undefined,
    instrumental: source.request.instrumental === true ? true : undefined,
  };
}

async function reroll(interaction: GuildButton, jobId: string, context: CommandContext): Promise<void> {
  const source = isJobId(jobId) ? await context.pipeline.findJob(interaction.guildId, jobId) : undefined;
  if (!isLikeable(source, interaction.guildId)) throw new Refusal('not_found', localText('reroll.gone'));
  const fields = await sameInputs(context, source);
  // A double click is one reroll; the same press again (a second gateway) goes on, and the
  // pipeline finds its job made (the job's id comes from the press).
  const held = `reroll:${source.id}:${interaction.user.id}`;
  if (!(await context.pipeline.holdPress(held, interaction.id, REROLL_PRESS_MS))) throw new Refusal('cooldown', localText('reroll.already'));
  try {
    await requestSong(interaction, context, { ...fields, rerollOf: firstOfLine(source) });
  } catch (error) {
    // Refused: nothing was made, so the next press may try again at once.
    if (!(error instanceof RequestTakenError)) await context.pipeline.releasePress(held, interaction.id);
    throw error;
  }
}

export const socialButtons = {
  like: {
    acknowledge: 'ephemeral',
    execute: (interaction, id, context) => like(interaction, id.subject, context),
  },
  reroll: {
    acknowledge: 'public',
    execute: (interaction, id, context) => reroll(interaction, id.subject, context),
  },
} as const satisfies Record<'like' | 'reroll', ButtonHandler>;
