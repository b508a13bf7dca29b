/**
 * The server's charts: its songs ranked by likes, plays (heard in voice for at least half their
 * length) or remixes, this week, this month or of all time, with each song's movement since
 * the period before. Each event moves its song's counts in `chart_counts` in the event's own
 * transaction; a chart reads the top of that index, never the events, so it costs the same on a
 * server with a million likes. Hidden and deleted songs leave the charts as they leave the library.
 * Why: docs/decisions/charts.md
 */
import { sql } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { jobRowsInOrder, type JobRow } from './job-rows.js';
import { LIBRARY_KINDS } from './library.js';

export const CHART_PERIODS = ['week', 'month', 'all'] as const;
export type ChartPeriod = (typeof CHART_PERIODS)[number];
export const CHART_METRICS = ['likes', 'plays', 'remixes'] as const;
export type ChartMetric = (typeof CHART_METRICS)[number];

/** How many songs a chart shows. */
export const CHART_SIZE = 10;
/** The all-time chart's songs read to find the all-time ranks at the start of the week. */
const ALL_TIME_LOOKBACK = 50;
/** The all-time period's start: one bucket since the epoch. */
const ALL_TIME = '1970-01-01';

const day = (at: Date): string => at.toISOString().slice(0, 10);

/** Where each period holding `at` starts (UTC): the week on its Monday, the month on its first. */
export function periodStarts(at: Date): Readonly<Record<ChartPeriod, string>> {
  const midnight = Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate());
  const monday = new Date(midnight - ((at.getUTCDay() + 6) % 7) * 86_400_000);
  return { week: day(monday), month: day(new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1))), all: ALL_TIME };
}

/** The start of the period before the one holding `at`; all time has none. */
export function previousPeriodStart(period: ChartPeriod, at: Date): string | undefined {
  const start = new Date(`${periodStarts(at)[period]}T00:00:00Z`);
  if (period === 'week') return day(new Date(start.getTime() - 7 * 86_400_000));
  if (period === 'month') return day(new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() - 1, 1)));
  return undefined;
}

export interface ChartEvent {
  readonly guildId: string;
  readonly jobId: string;
  readonly metric: ChartMetric;
  /** When the event happened: it counts in the week and month holding this. */
  readonly at: Date;
  /** +1, or -1 for a like taken back. */
  readonly delta: number;
}

/** Moves the song's counts in every period holding `event.at`. Run it in the event's transaction. */
export async function countChartEvent(db: Executor, event: ChartEvent): Promise<void> {
  const starts = periodStarts(event.at);
  await db.execute(sql`
    insert into chart_counts (guild_id, metric, period, period_start, job_id, count)
    select ${event.guildId}, ${event.metric}, p.period, p.start::date, ${event.jobId}::uuid, ${event.delta}::int
    from (values ('week', ${starts.week}), ('month', ${starts.month}), ('all', ${starts.all})) as p(period, start)
    on conflict (guild_id, metric, period, period_start, job_id) do update set count = chart_counts.count + excluded.count`);
}

export interface HeardPlay {
  /** The playback's own key: the same playback recorded twice is one play. */
  readonly playKey: string;
  readonly guildId: string;
  readonly jobId: string;
  readonly heardMs: number;
  readonly at: Date;
}

/** Records a song heard to at least half its length, once per playback: false when this playback was recorded already. */
export async function recordPlay(db: Executor, play: HeardPlay): Promise<boolean> {
  return db.transaction(async (tx) => {
    const { rows } = await tx.execute<{ play_key: string }>(sql`
      insert into song_plays (play_key, job_id, guild_id, heard_ms, played_at)
      values (${play.playKey}, ${play.jobId}, ${play.guildId}, ${Math.round(play.heardMs)}, ${play.at.toISOString()})
      on conflict (play_key) do nothing returning play_key`);
    if (rows.length === 0) return false;
    await countChartEvent(tx, { guildId: play.guildId, jobId: play.jobId, metric: 'plays', at: play.at, delta: 1 });
    return true;
  });
}

/**
 * A remix (a library song made from another, `parentJobId`) just succeeded: its source gains a
 * remix. Run it in the transition's transaction, which happens once per job.
 */
export async function countRemix(db: Executor, job: Pick<JobRow, 'kind' | 'guildId' | 'parentJobId'>, at: Date): Promise<void> {
  if (!job.parentJobId || !LIBRARY_KINDS.includes(job.kind)) return;
  await countChartEvent(db, { guildId: job.guildId, jobId: job.parentJobId, metric: 'remixes', at, delta: 1 });
}

/** How a song moved since the period before: not in its top then, or up, down or the same. */
export type Movement = { readonly kind: 'new' } | { readonly kind: 'up' | 'down'; readonly by: number } | { readonly kind: 'same' };

export interface ChartEntry {
  /** From 1. */
  readonly rank: number;
  readonly count: number;
  readonly song: JobRow;
  readonly movement: Movement;
}

export interface ChartQuery {
  readonly guildId: string;
  readonly period: ChartPeriod;
  readonly metric: ChartMetric;
  readonly now: Date;
}

/** The song's movement from `before` (its rank then; undefined: not in that top) to `rank`. */
export function movementOf(rank: number, before: number | undefined): Movement {
  if (before === undefined) return { kind: 'new' };
  if (before === rank) return { kind: 'same' };
  return before > rank ? { kind: 'up', by: before - rank } : { kind: 'down', by: rank - before };
}

/** Ranks of songs by count (highest first, ties by job id), from 1. */
function ranked(rows: readonly { job_id: string; count: number }[]): Map<string, number> {
  const sorted = [...rows].sort((a, b) => b.count - a.count || (a.job_id < b.job_id ? -1 : a.job_id > b.job_id ? 1 : 0));
  return new Map(sorted.slice(0, CHART_SIZE).map((row, index) => [row.job_id, index + 1]));
}

/**
 * The shown songs with the most in one period, in order: one range of `chart_counts_top_idx`,
 * read in its order (`desc nulls last`, as the index is built) and stopped at `limit` shown songs.
 * `limit` is the code's own number and written into the statement: a generic plan that does not
 * know it guesses a tenth of the range and starts a parallel worker (5 ms) for ten rows.
 */
async function topOf(db: Executor, query: ChartQuery, periodStart: string, limit: number): Promise<{ job_id: string; count: number }[]> {
  const { rows } = await db.execute<{ job_id: string; count: number }>(sql`
    select c.job_id, c.count from chart_counts c join jobs j on j.id = c.job_id
    where c.guild_id = ${query.guildId} and c.metric = ${query.metric} and c.period = ${query.period} and c.period_start = ${periodStart}::date
      and c.count > 0 and j.state = 'succeeded' and j.removed_at is null
    order by c.count desc nulls last, c.job_id limit ${sql.raw(String(Math.trunc(limit)))}`);
  return rows;
}

/**
 * The ranks before this period: last week's or last month's top; for all time, the all-time
 * top as it stood when this week began (each song's count less this week's), read from the
 * all-time chart's first {@link ALL_TIME_LOOKBACK} songs.
 */
async function ranksBefore(db: Executor, query: ChartQuery): Promise<Map<string, number>> {
  const previous = previousPeriodStart(query.period, query.now);
  if (previous !== undefined) return ranked(await topOf(db, query, previous, CHART_SIZE));
  const top = await topOf(db, query, ALL_TIME, ALL_TIME_LOOKBACK);
  if (top.length === 0) return new Map();
  const { rows: recent } = await db.execute<{ job_id: string; count: number }>(sql`
    select job_id, count from chart_counts
    where guild_id = ${query.guildId} and metric = ${query.metric} and period = 'week' and period_start = ${periodStarts(query.now).week}::date
      and job_id = any(${`{${top.map((row) => row.job_id).join(',')}}`}::uuid[])`);
  const thisWeek = new Map(recent.map((row) => [row.job_id, row.count]));
  return ranked(top.map((row) => ({ job_id: row.job_id, count: row.count - (thisWeek.get(row.job_id) ?? 0) })).filter((row) => row.count > 0));
}

/** The server's top {@link CHART_SIZE} for the period and metric, with each song's movement. */
export async function readChart(db: Executor, query: ChartQuery): Promise<ChartEntry[]> {
  const top = await topOf(db, query, periodStarts(query.now)[query.period], CHART_SIZE);
  if (top.length === 0) return [];
  const [songs, before] = await Promise.all([jobRowsInOrder(db, top.map((row) => row.job_id)), ranksBefore(db, query)]);
  const byId = new Map(songs.map((song) => [song.id, song]));
  return top.flatMap((row, index) => {
    const song = byId.get(row.job_id);
    return song ? [{ rank: index + 1, count: row.count, song, movement: movementOf(index + 1, before.get(row.job_id)) }] : [];
  });
}
