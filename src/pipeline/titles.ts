/**
 * What a job is called wherever the bot names it (results, `/library`, `/jobs list`, menus and
 * choices): the member's title, else the service's, else what it was asked for. A remix
 * (the Remix button) says so, since it often carries its source's title.
 */
import type { JobKind, LedgerKind } from '../db/schema.js';
import { english, type MessageKey, type Translate } from '../i18n/index.js';
import { truncate } from '../text.js';
import type { JobRow } from './job-rows.js';

/**
 * What a title does not end with: the punctuation a title cut from a sentence keeps ("Rain on
 * the roof,"). `!` and `?` belong to a title ("Why?") and stay.
 */
export const TRAILING_PUNCTUATION = '.,;:…–—-';
const TRAILING = new RegExp(`[\\s${TRAILING_PUNCTUATION}]+$`, 'u');

/** A title as the bot shows it: spaces as one, no trailing punctuation (a title of punctuation alone stays as it is). */
export function cleanTitle(title: string): string {
  const spaced = title.replace(/\s+/g, ' ').trim();
  return spaced.replace(TRAILING, '') || spaced;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim().length > 0 ? cleanTitle(value) : undefined;
}

/** The job's name as given (the member's title wins over the service's, e.g. an upload's "Uploaded audio"), or undefined. */
export function givenTitle(job: Pick<JobRow, 'request' | 'result'>): string | undefined {
  const { request, result } = job;
  return text(request.title) ?? text(result?.clips?.[0]?.title) ?? text(result?.lyricsTitle) ?? text(request.name) ?? text(request.prompt) ?? text(request.lyrics);
}

/** The title the service gave lyrics, as shown (and as a song made of them starts with), or undefined. */
export function lyricsTitleOf(job: Pick<JobRow, 'result'>): string | undefined {
  return text(job.result?.lyricsTitle) ?? text(job.result?.clips?.[0]?.title);
}

/** Made with the Remix button from another song (even one deleted since). */
export function isRemix(job: Pick<JobRow, 'request' | 'remixOf'>): boolean {
  return job.remixOf !== null || (typeof job.request.remixOf === 'object' && job.request.remixOf !== null);
}

/**
 * `title` (a job's, as `givenTitle` found it) in at most `max` characters, marked as a remix
 * when the job is one: the mark is kept whole and the title cut to make room.
 */
export function titleForDisplay(job: Pick<JobRow, 'request' | 'remixOf'>, title: string, t: Translate, max: number): string {
  if (!isRemix(job)) return truncate(title, max);
  const room = max - t('result.remixTitle', { title: '' }).length;
  return t('result.remixTitle', { title: truncate(title, Math.max(room, 1)) });
}

export const KIND_WORDS = {
  song: 'jobs.kind.song',
  persona_song: 'jobs.kind.personaSong',
  lyrics: 'jobs.kind.lyrics',
  voice: 'jobs.kind.voice',
  video: 'jobs.kind.video',
  download: 'jobs.kind.download',
  upload: 'jobs.kind.upload',
} as const satisfies Record<JobKind, MessageKey>;

/** The member-facing word for each ledger movement: what happened to the credits, not how the ledger books it. */
export const LEDGER_KIND_WORDS = {
  grant: 'creditsAdmin.ledgerKind.grant',
  take: 'creditsAdmin.ledgerKind.take',
  adjust: 'creditsAdmin.ledgerKind.adjust',
  allowance: 'creditsAdmin.ledgerKind.allowance',
  reserve: 'creditsAdmin.ledgerKind.reserve',
  release: 'creditsAdmin.ledgerKind.release',
  refund: 'creditsAdmin.ledgerKind.refund',
  purchase: 'creditsAdmin.ledgerKind.purchase',
  subscription: 'creditsAdmin.ledgerKind.subscription',
  reversal: 'creditsAdmin.ledgerKind.reversal',
} as const satisfies Record<LedgerKind, MessageKey>;

/** What kind of request a job is, in words ("song", "persona song"), in `t`'s language. */
export function kindWord(t: Translate, kind: JobKind): string {
  return t(KIND_WORDS[kind]);
}

/**
 * A job's name in plain text, at most `max` characters (a menu label's 100 by default): its title
 * (see titles.ts), marked when it is a remix, or its kind (in `t`'s language). Escape it for markdown.
 */
export function describeJob(job: Pick<JobRow, 'kind' | 'request' | 'result' | 'remixOf'>, t: Translate = english, max = 100): string {
  const title = givenTitle(job);
  return title === undefined ? kindWord(t, job.kind) : titleForDisplay(job, title, t, max);
}
