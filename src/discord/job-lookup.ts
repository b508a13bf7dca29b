/**
 * Finding a guild's jobs from what a member typed or picked: a full job id (what autocomplete
 * returns and results show), its first characters, or its title; and naming them in lists
 * and choices.
 */
import type { ApplicationCommandOptionChoiceData } from 'discord.js';
import { z } from 'zod';
import type { JobKind, JobState } from '../db/schema.js';
import { localText, type LocalText, type MessageKey, type Translate } from '../i18n/index.js';
import type { CustomId } from '../discord-rest/custom-ids.js';
import { isShownResult, type GuildJobFilter, type JobRow } from '../pipeline/job-rows.js';
import { linkedFile, type SongFile } from '../pipeline/render.js';
import { clipOfTake } from '../pipeline/takes.js';
import { downloadLinkOf, httpUrl } from '../pipeline/result-needs.js';
import { describeJob, kindWord } from '../pipeline/titles.js';
import type { CommandContext } from './context.js';
import { Refusal } from './errors.js';
import { discordTimestamp, escapeMarkdown, truncate } from '../text.js';

/** Results a music video can be made of: anything with an audio clip. */
export const VIDEO_SOURCE_KINDS: readonly JobKind[] = ['song', 'persona_song', 'upload'];
/** Results that can be downloaded re-encoded: generated songs. */
export const DOWNLOAD_SOURCE_KINDS: readonly JobKind[] = ['song', 'persona_song'];

const uuid = z.uuid();
const PREFIX = /^[0-9a-f-]{6,35}$/i;
/** How far back a typed prefix is looked for. */
const PREFIX_SEARCH_LIMIT = 200;

const STATE_WORDS = {
  queued: 'jobs.state.queued',
  submitting: 'jobs.state.submitting',
  submitted: 'jobs.state.submitted',
  succeeded: 'jobs.state.succeeded',
  failed: 'jobs.state.failed',
  timed_out: 'jobs.state.timedOut',
  cancelled: 'jobs.state.cancelled',
} as const satisfies Record<JobState, MessageKey>;

/** Where a job stands, in words ("waiting", "done"), in `t`'s language. */
export function stateWord(t: Translate, state: JobState): string {
  return t(STATE_WORDS[state]);
}

export function isJobId(value: string): boolean {
  return uuid.safeParse(value).success;
}

/** How a lookup by a typed name asks which job was meant: the menu's custom id, and the words. */
export interface JobQuestion {
  /** The select menu's custom id: its handler continues the command with the picked job id. */
  readonly menu: CustomId;
  /** The refusal when nothing matches, naming what was looked for and how to pick. */
  readonly notFound: LocalText;
}

/**
 * The one job of this guild a member means by what they typed in an autocomplete option: its
 * id (what a picked choice sends) or the start of it, or its name as lists show it (a title
 * first, then a prompt, in any case). A full id is taken as it is, whatever its kind; the rest
 * is looked for among the jobs `filter` allows.
 *
 * @throws Refusal `ambiguous`, with a menu of the candidates, when several jobs have that
 *   name or id start, or none has it but some have names containing it; `not_found` when
 *   nothing is like it. Nothing is spent before the member picks.
 */
export async function pickGuildJob(
  context: CommandContext,
  guildId: string,
  typed: string,
  filter: GuildJobFilter,
  question: JobQuestion,
): Promise<JobRow> {
  const value = typed.replaceAll('\u0000', '').trim();
  const id = value.toLowerCase();
  if (isJobId(id)) {
    const job = await context.pipeline.findJob(guildId, id);
    if (job && (filter.userId === undefined || job.userId === filter.userId)) return job;
    throw new Refusal('not_found', question.notFound);
  }
  const fits = (job: JobRow) =>
    (filter.kinds === undefined || filter.kinds.includes(job.kind)) && (!filter.succeededOnly || isShownResult(job));
  let candidates: JobRow[] = [];
  let exact = true;
  if (PREFIX.test(id)) {
    const recent = await context.pipeline.listJobs(guildId, { userId: filter.userId, limit: PREFIX_SEARCH_LIMIT });
    candidates = recent.filter((job) => job.id.startsWith(id) && fits(job));
  }
  // A title typed whole wins over a prompt that is the same words, and over titles that contain it.
  if (candidates.length === 0) candidates = await context.jobs.findJobsNamed(guildId, value, 'title', filter);
  if (candidates.length === 0) candidates = await context.jobs.findJobsNamed(guildId, value, 'exact', filter);
  if (candidates.length === 0) {
    exact = false;
    // A name copied from a list may end cut short ("A very long title…").
    candidates = await context.jobs.findJobsNamed(guildId, value.replace(/…$/, ''), 'contains', filter);
  }
  if (exact && candidates.length === 1) return candidates[0]!;
  if (candidates.length === 0) throw new Refusal('not_found', question.notFound);
  const t = context.t;
  const name = truncate(value.replace(/\s+/g, ' '), 100);
  const list = listLines(candidates.map((job) => `• **${escapeMarkdown(describeJob(job, t))}** · ${kindWord(t, job.kind)} · <@${job.userId}> · ${discordTimestamp(job.createdAt, 'f')} · \`${job.id}\``));
  throw new Refusal(
    'ambiguous',
    localText(exact ? 'jobLookup.ambiguous' : 'jobLookup.didYouMean', { name: escapeMarkdown(name), list }),
    {
      customId: question.menu,
      placeholder: localText('jobLookup.pick'),
      options: candidates.map((job) => ({
        label: describeJob(job, t),
        description: [kindWord(t, job.kind), stateWord(t, job.state), shortDate(t.locale, job.createdAt), job.id.slice(0, 8)].join(' · '),
        value: job.id,
      })),
    },
  );
}

/**
 * Runs a paid pick from a "which one?" menu once: a second pick from the same message (the menu
 * stays on the member's private answer) is refused, and nothing is charged for it. A pick that
 * is itself refused frees the menu again.
 */
export async function oncePerMenu(context: CommandContext, messageId: string, pick: () => Promise<void>): Promise<void> {
  const choices = context.pendingChoices;
  if (!choices) return pick();
  if (!(await choices.claim(messageId))) throw new Refusal('not_allowed', localText('jobLookup.pickMade'));
  try {
    await pick();
  } catch (error) {
    await choices.release(messageId).catch(() => {});
    throw error;
  }
}

export function listLines(lines: readonly string[], room = 1500): string {
  const kept: string[] = [];
  let length = 0;
  for (const line of lines) {
    if (length + line.length + 1 > room) {
      kept.push('…');
      break;
    }
    kept.push(line);
    length += line.length + 1;
  }
  return kept.join('\n');
}

/** A date for a select menu's description, where Discord's `<t:…>` is not rendered: the day and UTC time. */
export function shortDate(locale: string, date: Date): string {
  return `${new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' }).format(date)} UTC`;
}

/** The service's clip id of a finished song's or upload's take (from 1). */
export function clipIdOf(job: JobRow, take = 1): string | undefined {
  const clipId = clipOfTake(job, take)?.clipId;
  return clipId !== undefined && clipId.length > 0 ? clipId : undefined;
}

/**
 * A finished song of this guild to make a video or a download of, by id or by title (see
 * {@link pickGuildJob}); `menu` is the custom id of the select menu that continues the command
 * when the member is asked which song.
 *
 * @throws Refusal `not_found` with a sentence for the member, `ambiguous` with a menu.
 */
export async function resolveSong(
  context: CommandContext,
  guildId: string,
  typed: string,
  kinds: readonly JobKind[],
  menu: CustomId,
  take = 1,
): Promise<{ job: JobRow; clipId: string }> {
  const job = await pickGuildJob(context, guildId, typed, { kinds, succeededOnly: true }, {
    menu,
    notFound: isJobId(typed.trim().toLowerCase())
      ? localText('jobLookup.notASong')
      : localText('jobLookup.noSongNamed', { name: escapeMarkdown(truncate(typed.trim(), 100)) }),
  });
  const clipId = kinds.includes(job.kind) && isShownResult(job) ? clipIdOf(job, take) : undefined;
  if (!clipId) throw new Refusal('not_found', localText('jobLookup.notASong'));
  return { job, clipId };
}

/** Autocomplete choices: the guild's recent jobs of these kinds, matching what was typed, described in the member's language. */
export async function jobChoices(
  context: CommandContext,
  guildId: string,
  typed: string,
  options: { kinds?: readonly JobKind[]; succeededOnly?: boolean; userId?: string },
): Promise<ApplicationCommandOptionChoiceData[]> {
  const jobs = await context.pipeline.listJobs(guildId, {
    succeededOnly: options.succeededOnly,
    userId: options.userId,
    limit: 100,
  });
  const needle = typed.trim().toLowerCase();
  return jobs
    .filter((job) => !options.kinds || options.kinds.includes(job.kind))
    .filter((job) => needle === '' || job.id.startsWith(needle) || describeJob(job, context.t).toLowerCase().includes(needle))
    .slice(0, 25)
    .map((job) => ({
      name: truncate(
        [describeJob(job, context.t, 60), kindWord(context.t, job.kind), stateWord(context.t, job.state), job.id.slice(0, 8)].join(' · '),
        100,
      ),
      value: job.id,
    }));
}

/**
 * What a member asking for a file of a song (its video, an MP3, a WAV) is told instead of paying
 * for it again: the link the song comes with, the link of the file made already, or that it is
 * being made. Undefined when the file has to be made.
 */
export async function fileAlreadyThere(context: CommandContext, song: JobRow, clipId: string, file: SongFile, take = 1): Promise<string | undefined> {
  const { t } = context;
  const linked = linkedFile(song, file, take);
  if (linked) return file === 'video' ? t('songButtons.hasVideo', { url: linked }) : t('songButtons.hasFile', { format: file.toUpperCase(), url: linked });
  const made = await context.jobs.jobMakingFile(file === 'video' ? { sourceJobId: song.id, clipId, kind: 'video' } : { sourceJobId: song.id, clipId, kind: 'download', format: file });
  if (!made) return undefined;
  const clip = made.result?.clips?.[0];
  const url = made.state !== 'succeeded' ? undefined : file === 'video' ? httpUrl(clip?.videoUrl) : downloadLinkOf(clip, file);
  if (file === 'video') return url ? t('songButtons.videoMade', { url }) : t('songButtons.videoBeingMade');
  const format = file.toUpperCase();
  return url ? t('songButtons.fileMade', { format, url }) : t('songButtons.fileBeingMade', { format });
}
