/** A library song as a queue entry, the radio's pick of the library (or of the charts), and what plays next. */
import type { Executor } from '../db/client.js';
import { describeJob } from '../pipeline/titles.js';
import { english } from '../i18n/index.js';
import type { StoredClip } from '../db/schema.js';
import { clipOfTake } from '../pipeline/takes.js';
import { getJob, isShownResult, type JobRow } from '../pipeline/job-rows.js';
import { libraryPage, type LibraryFilter } from '../pipeline/library.js';
import { shuffled } from './rules.js';
import { readChart } from '../pipeline/charts.js';
import type { PlayerState, PlayerStore, QueueEntry, RadioSettings } from './store.js';

/** At most this many songs of the library are queued by one radio round; the next round reshuffles. */
export const RADIO_ROUND = 100;

/**
 * The entry for a finished song still shown, with a stored audio address; undefined for anything
 * else. `take` (from 1) plays that take; without it, the first take with audio.
 */
export function entryOf(job: JobRow, requestedBy: string, take?: number): QueueEntry | undefined {
  const playable = (clip: StoredClip | undefined) => typeof clip?.audioUrl === 'string' && /^https?:\/\//.test(clip.audioUrl);
  const clip = take === undefined ? job.result?.clips?.find(playable) : clipOfTake(job, take);
  if (!isShownResult(job) || !clip?.audioUrl || !playable(clip)) return undefined;
  const title = describeJob(job, english, take !== undefined && take > 1 ? 88 : 100);
  return {
    jobId: job.id,
    clipId: clip.clipId ?? '',
    title: take !== undefined && take > 1 ? `${title} (${english('result.take', { n: take })})` : title,
    makerId: job.userId,
    mediaUrl: clip.audioUrl,
    durationSeconds: typeof clip.durationSeconds === 'number' && clip.durationSeconds > 0 ? clip.durationSeconds : null,
    requestedBy,
  };
}

/** Whether the queued song is still one the library shows (one primary-key read). */
export async function stillShown(db: Executor, jobId: string): Promise<boolean> {
  const job = await getJob(db, jobId);
  return job !== undefined && isShownResult(job);
}

/**
 * The radio's next round, as entries requested by `requestedBy`: the newest {@link RADIO_ROUND}
 * songs the filter matches, shuffled; for a chart radio, the chart's songs (by likes), in the
 * chart's order for the `first` round and shuffled after.
 */
export async function radioRound(db: Executor, radio: RadioSettings & { readonly guildId: string }, requestedBy: string, first: boolean, random: () => number = Math.random): Promise<QueueEntry[]> {
  const playable = (jobs: readonly JobRow[]) => jobs.map((job) => entryOf(job, requestedBy)).filter((entry): entry is QueueEntry => entry !== undefined);
  if (radio.chart) {
    const chart = playable((await readChart(db, { guildId: radio.guildId, period: radio.chart, metric: 'likes', now: new Date() })).map((entry) => entry.song));
    return first ? chart : shuffled(chart, random);
  }
  const filter: LibraryFilter = { guildId: radio.guildId, userId: radio.userId ?? undefined, query: radio.query ?? undefined };
  const page = await libraryPage(db, filter, undefined, RADIO_ROUND);
  return shuffled(playable(page.songs), random);
}

/**
 * The next entry to play: the queue's first still shown (a song hidden or deleted since it was
 * queued is dropped), or, for a radio with an empty queue, the first of a new round it adds.
 */
export async function nextEntry(store: PlayerStore, db: Executor, guildId: string, state: PlayerState): Promise<QueueEntry | undefined> {
  let next = await store.next(guildId);
  while (next && !(await stillShown(db, next.jobId))) next = await store.next(guildId);
  if (next || !state.radio) return next;
  const round = await radioRound(db, { ...state.radio, guildId }, state.current?.requestedBy ?? '', false);
  if (round.length === 0) return undefined;
  await store.enqueue(guildId, ...round);
  return store.next(guildId);
}
