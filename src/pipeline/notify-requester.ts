/**
 * "Tell me when it is done": once a long job's result or failure is posted, its requester gets a
 * direct message with a link to it, where they asked (`/notify`) or their server said so.
 */
import { and, eq, sql } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { guilds, memberSettings } from '../db/schema.js';
import { translator } from '../i18n/index.js';
import { describeDiscordError, isCannotSendToUser, nonceFor } from '../discord-rest/discord-delivery.js';
import type { JobRow } from './job-rows.js';
import type { PipelineDeps } from './deps.js';
import { describeJob } from './titles.js';
import { escapeMarkdown } from '../text.js';

/** Where the result was posted: a message of the channel, or nothing the member can be linked to. */
export type PostedResult = { readonly messageId: string } | { readonly private: true };

/**
 * Sends the direct message when the job was long and its requester wants it. Never throws: a
 * refused or failed message is logged, and the result stays posted.
 */
export async function notifyRequester(deps: Pick<PipelineDeps, 'db' | 'discord' | 'logger' | 'now' | 'settings'>, job: JobRow, posted: PostedResult): Promise<void> {
  try {
    // A result that arrived after its refund was posted: the requester was told then.
    const skip = job.state === 'succeeded' && job.error ? 'told already' : deps.now().getTime() - job.createdAt.getTime() < deps.settings.notifyAfterMs ? 'short' : undefined;
    if (skip !== undefined || !(await wantsNotifyWhenDone(deps.db, job.guildId, job.userId))) {
      deps.logger.debug({ jobId: job.id, reason: skip ?? 'not asked' }, 'requester not told');
      return;
    }
    const t = translator(job.locale);
    const title = escapeMarkdown(describeJob(job, t));
    const content =
      'private' in posted
        ? t('notify.dm.private', { title, id: job.id, channel: job.channelId })
        : t(job.state === 'succeeded' ? 'notify.dm.ready' : 'notify.dm.failed', {
            title,
            channel: job.channelId,
            link: `https://discord.com/channels/${job.guildId}/${job.channelId}/${posted.messageId}`,
          });
    // The nonce keeps a post that the REST client retries to one message.
    await deps.discord.sendDirectMessage(job.userId, { content, allowed_mentions: { parse: [] }, nonce: nonceFor(`notify:${job.id}`), enforce_nonce: true });
    deps.logger.info({ jobId: job.id }, 'requester told');
  } catch (err) {
    const refused = isCannotSendToUser(err);
    deps.logger[refused ? 'info' : 'warn']({ jobId: job.id, error: describeDiscordError(err) }, refused ? 'the requester takes no direct message' : 'could not tell the requester');
  }
}

/** Whether the member is told when a long job ends: their own choice, else the server's default. One read. */
export async function wantsNotifyWhenDone(db: Executor, guildId: string, userId: string): Promise<boolean> {
  const [row] = await db
    .select({ wants: sql<boolean>`coalesce(${memberSettings.notifyWhenDone}, ${guilds.notifyWhenDone})` })
    .from(guilds)
    .leftJoin(memberSettings, and(eq(memberSettings.guildId, guilds.id), eq(memberSettings.userId, userId)))
    .where(eq(guilds.id, guildId));
  return row?.wants === true;
}
