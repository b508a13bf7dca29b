/**
 * Finding a guild's jobs from what a member typed or picked: a full job id (what autocomplete
 * returns and results show) or its first characters, and naming them in lists and choices.
 */
import type { ApplicationCommandOptionChoiceData } from 'discord.js';
import { z } from 'zod';
import type { JobKind, JobState } from '../db/schema.js';
import { english, localText, type MessageKey, type Translate } from '../i18n/index.js';
import type { JobRow } from '../pipeline/job-rows.js';
import { givenTitle, titleForDisplay } from '../pipeline/titles.js';
import type { CommandContext } from './context.js';
import { Refusal } from './errors.js';
import { truncate } from '../text.js';

/** Results a music video can be made of: anything with an audio clip. */
export const VIDEO_SOURCE_KINDS: readonly JobKind[] = ['song', 'persona_song', 'upload'];
/** Results that can be downloaded re-encoded: generated songs. */
export const DOWNLOAD_SOURCE_KINDS: readonly JobKind[] = ['song', 'persona_song'];

const uuid = z.uuid();
const PREFIX = /^[0-9a-f-]{6,35}$/i;
/** How far back a typed prefix is looked for. */
const PREFIX_SEARCH_LIMIT = 200;

export const KIND_WORDS = {
  song: 'jobs.kind.song',
  persona_song: 'jobs.kind.personaSong',
  lyrics: 'jobs.kind.lyrics',
  voice: 'jobs.kind.voice',
  video: 'jobs.kind.video',
  download: 'jobs.kind.download',
  upload: 'jobs.kind.upload',
} as const satisfies Record<JobKind, MessageKey>;

const STATE_WORDS = {
  queued: 'jobs.state.queued',
  submitting: 'jobs.state.submitting',
  submitted: 'jobs.state.submitted',
  succeeded: 'jobs.state.succeeded',
  failed: 'jobs.state.failed',
  timed_out: 'jobs.state.timedOut',
  cancelled: 'jobs.state.cancelled',
} as const satisfies Record<JobState, MessageKey>;

/** What kind of request a job is, in words ("song", "persona song"), in `t`'s language. */
export function kindWord(t: Translate, kind: JobKind): string {
  return t(KIND_WORDS[kind]);
}

/** Where a job stands, in words ("waiting", "done"), in `t`'s language. */
export function stateWord(t: Translate, state: JobState): string {
  return t(STATE_WORDS[state]);
}

export function isJobId(value: string): boolean {
  return uuid.safeParse(value).success;
}

/** A job of this guild by id or id prefix, or undefined. */
export async function findGuildJob(
  context: CommandContext,
  guildId: string,
  typed: string,
  filter: { userId?: string } = {},
): Promise<JobRow | undefined> {
  const value = typed.trim().toLowerCase();
  if (isJobId(value)) {
    const job = await context.pipeline.findJob(guildId, value);
    return job && (filter.userId === undefined || job.userId === filter.userId) ? job : undefined;
  }
  if (!PREFIX.test(value)) return undefined;
  const recent = await context.pipeline.listJobs(guildId, { ...filter, limit: PREFIX_SEARCH_LIMIT });
  const matches = recent.filter((job) => job.id.startsWith(value));
  return matches.length === 1 ? matches[0] : undefined;
}

/** The service's clip id of a finished song or upload. */
export function clipIdOf(job: JobRow): string | undefined {
  const clipId = job.result?.clips?.[0]?.clipId;
  return clipId !== undefined && clipId.length > 0 ? clipId : undefined;
}

/**
 * A finished song of this guild to make a video or a download of.
 *
 * @throws Refusal `not_found` with a sentence for the member.
 */
export async function resolveSong(
  context: CommandContext,
  guildId: string,
  typed: string,
  kinds: readonly JobKind[],
): Promise<{ job: JobRow; clipId: string }> {
  const job = await findGuildJob(context, guildId, typed);
  const clipId = job && kinds.includes(job.kind) && job.state === 'succeeded' ? clipIdOf(job) : undefined;
  if (!job || !clipId) {
    throw new Refusal('not_found', localText('jobLookup.notASong'));
  }
  return { job, clipId };
}

/**
 * A job's name in plain text, at most `max` characters (a menu label's 100 by default): its title
 * (see titles.ts), marked when it is a remix, or its kind (in `t`'s language). Escape it for markdown.
 */
export function describeJob(job: JobRow, t: Translate = english, max = 100): string {
  const title = givenTitle(job);
  return title === undefined ? kindWord(t, job.kind) : titleForDisplay(job, title, t, max);
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
