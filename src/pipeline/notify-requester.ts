/**
 * "Tell me when it is done": once a long job's result or failure is posted, its requester gets a
 * direct message with a link to it, where they asked (`/notify`) or their server said so.
 */
import { createHash } from 'node:crypto';
import { wantsNotifyWhenDone } from '../guilds/member-settings.js';
import { translator } from '../i18n/index.js';
import { describeDiscordError } from '../discord-rest/discord-delivery.js';
import type { JobRow } from './job-rows.js';
import type { PipelineDeps } from './deps.js';
import { describeJob } from './titles.js';
import { escapeMarkdown } from '../text.js';

/** Discord's answer to a message the user does not take: DMs closed, the bot blocked, or no server shared. */
const CANNOT_SEND_TO_USER = 50007;

/** Where the result was posted: a message of the channel, or nothing the member can be linked to. */
export type PostedResult = { readonly messageId: string } | { readonly private: true };

/**
 * Sends the direct message when the job was long and its requester wants it. Never throws: a
 * refused or failed message is logged, and the result stays posted.
 */
export async function notifyRequester(deps: Pick<PipelineDeps, 'db' | 'discord' | 'logger' | 'now' | 'settings'>, job: JobRow, posted: PostedResult): Promise<void> {
  try {
    // A result that arrived after its refund was posted: the requester was told then.
    if (job.state === 'succeeded' && job.error) return;
    if (deps.now().getTime() - job.createdAt.getTime() < deps.settings.notifyAfterMs) return;
    if (!(await wantsNotifyWhenDone(deps.db, job.guildId, job.userId))) return;
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
    await deps.discord.sendDirectMessage(job.userId, { content, allowed_mentions: { parse: [] }, nonce: createHash('sha256').update(`notify:${job.id}`).digest('base64url').slice(0, 25), enforce_nonce: true });
  } catch (err) {
    const refused = (err as { code?: unknown }).code === CANNOT_SEND_TO_USER;
    deps.logger[refused ? 'info' : 'warn']({ jobId: job.id, error: describeDiscordError(err) }, refused ? 'the requester takes no direct message' : 'could not tell the requester');
  }
}
