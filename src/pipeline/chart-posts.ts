/**
 * The weekly chart posts, from a periodic pass (the `charts` maintenance task): every server
 * whose post is due gets this week's top songs by likes in its channel, once a week, however
 * many worker processes run the pass. The post is claimed first (a row per server and ISO week
 * in the server's zone); only the process that inserted the row sends, with a nonce, so a
 * retried send is one message too.
 * Why: docs/decisions/charts.md
 */
import { and, eq, lte, sql } from 'drizzle-orm';
import { chartPosts, chartPostSettings } from '../db/schema.js';
import { describeDiscordError, nonceFor } from '../discord-rest/discord-delivery.js';
import { translator } from '../i18n/index.js';
import { isoWeekOf, nextPostAt } from './chart-schedule.js';
import { chartText } from './chart-text.js';
import { readChart } from './charts.js';
import type { PipelineDeps } from './deps.js';

/** A claim older than this without a message was left by a process that stopped: its week is given up. */
const CLAIM_ABANDONED_MS = 10 * 60_000;
/** At most this many servers are posted for in one pass; the rest are due at the next. */
const POSTS_PER_PASS = 50;

type PostDeps = Pick<PipelineDeps, 'db' | 'discord' | 'logger' | 'now'>;
type Due = typeof chartPostSettings.$inferSelect;

/** A channel the bot may not post in, or that is gone: trying again next week is all there is to do. */
function isPermanentRefusal(error: unknown): boolean {
  const status = (error as { status?: unknown } | undefined)?.status;
  return status === 403 || status === 404;
}

/** Posts every due weekly chart; returns how many this process posted. */
export async function postDueCharts(deps: PostDeps): Promise<number> {
  const now = deps.now();
  const due = await deps.db.select().from(chartPostSettings).where(lte(chartPostSettings.nextAt, now)).orderBy(chartPostSettings.nextAt).limit(POSTS_PER_PASS);
  let posted = 0;
  for (const settings of due) {
    try {
      if (await postOne(deps, settings, now)) posted += 1;
    } catch (error) {
      deps.logger.error({ guildId: settings.guildId, err: error }, 'weekly chart post failed');
    }
  }
  deps.logger.debug({ due: due.length, posted }, 'weekly chart posts checked');
  return posted;
}

/** The server's post for the week its due time falls in: sent by the process whose claim is new. */
async function postOne(deps: PostDeps, settings: Due, now: Date): Promise<boolean> {
  const week = isoWeekOf(settings.nextAt, settings.timeZone);
  const [claim] = await deps.db
    .insert(chartPosts)
    .values({ guildId: settings.guildId, week, channelId: settings.channelId, claimedAt: now })
    .onConflictDoNothing()
    .returning();
  if (!claim) {
    await moveOn(deps, settings, now, sql`exists (select 1 from chart_posts where guild_id = ${settings.guildId} and week = ${week}
      and (message_id is not null or claimed_at < ${new Date(now.getTime() - CLAIM_ABANDONED_MS).toISOString()}::timestamptz))`);
    return false;
  }
  const t = translator(settings.locale);
  const entries = await readChart(deps.db, { guildId: settings.guildId, period: 'week', metric: 'likes', now });
  const content = `${chartText(entries, { period: 'week', metric: 'likes' }, t)}\n${t('charts.weeklyMore')}`;
  try {
    const message = await deps.discord.postChannelMessage(settings.channelId, {
      content,
      allowed_mentions: { parse: [] },
      nonce: nonceFor(`charts:${settings.guildId}:${week}`),
      enforce_nonce: true,
    });
    await deps.db.update(chartPosts).set({ messageId: message.id }).where(and(eq(chartPosts.guildId, settings.guildId), eq(chartPosts.week, week)));
    deps.logger.info({ guildId: settings.guildId, week, messageId: message.id }, 'weekly chart posted');
  } catch (error) {
    if (!isPermanentRefusal(error)) {
      // Let go of the week: the next pass tries again (the nonce keeps a send that did go through single).
      await deps.db.delete(chartPosts).where(and(eq(chartPosts.guildId, settings.guildId), eq(chartPosts.week, week)));
      throw error;
    }
    deps.logger.warn({ guildId: settings.guildId, week, error: describeDiscordError(error) }, 'weekly chart not posted: the channel refuses the bot');
  }
  await moveOn(deps, settings, now);
  return true;
}

/** The next post's time, set only where nobody moved it meanwhile (and where `when` holds). */
async function moveOn(deps: PostDeps, settings: Due, now: Date, when = sql`true`): Promise<void> {
  await deps.db
    .update(chartPostSettings)
    .set({ nextAt: nextPostAt(settings, now) })
    .where(and(eq(chartPostSettings.guildId, settings.guildId), eq(chartPostSettings.nextAt, settings.nextAt), when));
}
