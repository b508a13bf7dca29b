/**
 * What the bot stops keeping once it cannot be used (the `retention` maintenance pass):
 * interaction tokens after 15 minutes, webhook secrets of finished jobs after the poll deadline
 * (of timed-out ones, once their task can no longer bring a result), webhook records after
 * WEBHOOK_EVENTS_RETENTION_DAYS, and after MODERATION_RETENTION_DAYS what removed results said
 * (their prompt, lyrics and titles) and why members reported results: the records of who and
 * when stay. Results, library, ledger and audit stay.
 * Each statement touches at most `batch` rows; the rest waits for the next pass.
 */
import { sql } from 'drizzle-orm';
import type { PipelineDeps } from './deps.js';
import { INTERACTION_TOKEN_LIFETIME_MS } from './post-result.js';
import { lateGraceMs } from './transitions.js';
import { clearRemovedTexts } from './job-rows.js';
import { clearRemovedVoiceNames, clearReportReasons } from './reports.js';

export interface RetentionReport {
  readonly interactionTokens: number;
  readonly webhookSecrets: number;
  readonly webhookEvents: number;
  readonly removedTexts: number;
  readonly reportReasons: number;
}

const DAY_MS = 24 * 60 * 60_000;

export async function applyRetention(deps: Pick<PipelineDeps, 'db' | 'logger' | 'settings' | 'now'>, batch = 5_000): Promise<RetentionReport> {
  const now = deps.now().getTime();
  const tokensBefore = new Date(now - INTERACTION_TOKEN_LIFETIME_MS).toISOString();
  const secretsBefore = new Date(now - deps.settings.pollDeadlineMs).toISOString();
  const eventsBefore = new Date(now - deps.settings.webhookEventsRetentionDays * DAY_MS).toISOString();

  const tokens = await deps.db.execute(sql`
    update jobs set interaction_token = null
    where id in (select id from jobs where interaction_token is not null and interaction_at < ${tokensBefore} limit ${batch})`);
  // A timed-out job may still get its result (a late webhook, or a poll in the grace): from a
  // task made when it was refunded, run to its deadline, or from a deadline set when its task id
  // was recorded late; and the grace after either.
  const refundedBefore = new Date(now - deps.settings.pollDeadlineMs - lateGraceMs(deps.settings)).toISOString();
  const deadlineBefore = new Date(now - lateGraceMs(deps.settings)).toISOString();
  const secrets = await deps.db.execute(sql`
    update jobs set webhook_secret = null
    where id in (
      select id from jobs
      where webhook_secret is not null and (
        (state in ('succeeded', 'failed', 'cancelled') and completed_at < ${secretsBefore})
        or (state = 'timed_out' and completed_at < ${refundedBefore} and (deadline_at is null or deadline_at < ${deadlineBefore})))
      limit ${batch})`);
  const events = await deps.db.execute(sql`
    delete from webhook_events
    where id in (select id from webhook_events where received_at < ${eventsBefore} limit ${batch})`);

  const moderationBefore = new Date(now - deps.settings.moderationRetentionDays * DAY_MS);
  const removedTexts = (await clearRemovedTexts(deps.db, moderationBefore, batch)) + (await clearRemovedVoiceNames(deps.db, moderationBefore, batch));
  const reportReasons = await clearReportReasons(deps.db, moderationBefore, batch);

  const report = { interactionTokens: tokens.rowCount ?? 0, webhookSecrets: secrets.rowCount ?? 0, webhookEvents: events.rowCount ?? 0, removedTexts, reportReasons };
  if (Object.values(report).some((n) => n > 0)) deps.logger.info(report, 'retention: cleared what can no longer be used');
  return report;
}
