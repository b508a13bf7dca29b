/**
 * The overview's charts for one server: credits spent per day by kind with what came in, over
 * 90 days (the 30-day chart is its tail), the members who spent most in the last 30 days, and
 * songs made per day. Each is one indexed read (docs/decisions/dashboard-charts.md).
 */
import { dailyFlows, usage, utcDay, utcDays, type DayFlows, type MemberUsage } from '../../credits/index.js';
import type { Executor } from '../../db/client.js';
import { songsPerDay } from '../../pipeline/job-rows.js';

/** The longest range charted, in days (today included); the short one is its last {@link SHORT_DAYS}. */
export const LONG_DAYS = 90;
export const SHORT_DAYS = 30;
/** Members shown in the top spenders. */
export const TOP_MEMBERS = 10;

export interface ChartData {
  /** {@link LONG_DAYS} days, oldest first, today last. */
  readonly flows: readonly DayFlows[];
  /** Songs made on each of the same days. */
  readonly songs: readonly number[];
  /** The biggest spenders of the last {@link SHORT_DAYS} days, biggest first ('' is jobs charged to no member). */
  readonly topMembers: readonly MemberUsage[];
}

export async function loadCharts(db: Executor, guildId: string, now: Date): Promise<ChartData> {
  const { end } = utcDay(now);
  const since = new Date(end.getTime() - LONG_DAYS * 86_400_000);
  const shortSince = new Date(end.getTime() - SHORT_DAYS * 86_400_000);
  const [flows, songs, spenders] = await Promise.all([
    dailyFlows(db, { guildId, since, until: end }),
    songsPerDay(db, { guildId, since, until: end }),
    usage(db, { guildId, since: shortSince }),
  ]);
  return {
    flows,
    songs: utcDays(since, end).map((day) => songs.get(day) ?? 0),
    topMembers: spenders.byMember.filter((member) => member.spent > 0).slice(0, TOP_MEMBERS),
  };
}
