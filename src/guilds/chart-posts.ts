/**
 * Where and when a server's weekly chart is posted (`/settings charts`): a channel, a weekday
 * and an hour in the server's time zone. Each change is written to the audit log; the next
 * post's time is kept in UTC for the periodic pass (src/pipeline/chart-posts.ts).
 */
import { eq } from 'drizzle-orm';
import type { Database } from '../db/client.js';
import { auditLog, chartPostSettings } from '../db/schema.js';
import { localText } from '../i18n/index.js';
import { nextPostAt, timeZoneNamed } from '../pipeline/chart-schedule.js';
import { escapeMarkdown, truncate } from '../text.js';
import { SettingsError } from './settings-error.js';

export type ChartPostSettings = typeof chartPostSettings.$inferSelect;

/** Sunday unless a server says otherwise, at 18:00, in UTC. */
export const CHART_POST_DEFAULTS = { weekday: 0, hour: 18, timeZone: 'UTC' } as const;

/** What a moderator set; left out: as it was, or the default. `off`: no more posts. */
export interface ChartPostChange {
  readonly guildId: string;
  readonly actorId: string;
  readonly channelId?: string;
  readonly weekday?: number;
  readonly hour?: number;
  readonly timeZone?: string;
  readonly off?: boolean;
  /** The server's language: the posts are written in it. */
  readonly locale: string | null;
  readonly now: Date;
}

/** The server's weekly post, or undefined when it has none. */
export async function chartPostOf(db: Database, guildId: string): Promise<ChartPostSettings | undefined> {
  const [row] = await db.select().from(chartPostSettings).where(eq(chartPostSettings.guildId, guildId));
  return row;
}

/**
 * Sets (or with `off`, ends) the server's weekly post; returns it as it is now (undefined: off).
 * A time zone `Intl` does not know, or a first setting without a channel, is refused.
 */
export async function setChartPost(db: Database, change: ChartPostChange): Promise<ChartPostSettings | undefined> {
  const timeZone = change.timeZone === undefined ? undefined : timeZoneNamed(change.timeZone);
  if (change.timeZone !== undefined && timeZone === undefined) throw new SettingsError(localText('settings.charts.badTimeZone', { zone: escapeMarkdown(truncate(change.timeZone, 60)) }));
  if (change.hour !== undefined && (!Number.isInteger(change.hour) || change.hour < 0 || change.hour > 23)) throw new RangeError('an hour is 0 to 23');
  return db.transaction(async (tx) => {
    const [before] = await tx.select().from(chartPostSettings).where(eq(chartPostSettings.guildId, change.guildId)).for('update');
    let after: ChartPostSettings | undefined;
    if (change.off === true) {
      await tx.delete(chartPostSettings).where(eq(chartPostSettings.guildId, change.guildId));
    } else {
      const channelId = change.channelId ?? before?.channelId;
      if (channelId === undefined) throw new SettingsError(localText('settings.charts.needChannel'));
      const schedule = {
        weekday: change.weekday ?? before?.weekday ?? CHART_POST_DEFAULTS.weekday,
        hour: change.hour ?? before?.hour ?? CHART_POST_DEFAULTS.hour,
        timeZone: timeZone ?? before?.timeZone ?? CHART_POST_DEFAULTS.timeZone,
      };
      const values = { guildId: change.guildId, channelId, ...schedule, locale: change.locale, nextAt: nextPostAt(schedule, change.now), updatedAt: change.now };
      [after] = await tx.insert(chartPostSettings).values(values).onConflictDoUpdate({ target: chartPostSettings.guildId, set: values }).returning();
    }
    const describe = (row: ChartPostSettings | undefined) => (row ? { channelId: row.channelId, weekday: row.weekday, hour: row.hour, timeZone: row.timeZone } : null);
    await tx.insert(auditLog).values({ guildId: change.guildId, actorId: change.actorId, action: 'settings.charts', details: { before: describe(before), after: describe(after) } });
    return after;
  });
}
