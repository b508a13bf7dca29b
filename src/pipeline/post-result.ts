/**
 * Posting a finished job to Discord, once. While the interaction token lives the deferred
 * reply is edited; after that, or when Discord says the token is gone, a channel message
 * mentions the requester. A 403 marks the delivery failed; the result stays retrievable.
 */
import { DownloadError, downloadCapped, type Downloaded } from '../audio/download.js';
import { whileLocked } from '../db/client.js';
import { guilds, type JobState } from '../db/schema.js';
import { eq } from 'drizzle-orm';
import { claimDelivery, progressLock, queuePositionOf, recordAttachedTakes, recordContestOpen, type JobRow } from './job-rows.js';
import { runningContest } from './contests.js';
import { LIBRARY_KINDS } from './library.js';
import { failDelivery, markDelivered, releaseDeliveryClaim } from './transitions.js';
import type { PipelineDeps } from './deps.js';
import { recordOutsideEffect } from './record-outside-effect.js';
import { inBackgroundSlot } from './front-first.js';
import {
  describeDiscordError,
  isGoneInteraction,
  nonceFor,
  isMissingAccess,
  type OutgoingFile,
  type OutgoingMessage,
} from '../discord-rest/discord-delivery.js';
import { asChannelMessage, renderProgress, renderResult, withoutFiles, type PriceOf } from './render.js';
import { costOfKind } from './accept-request.js';
import { english, translator } from '../i18n/index.js';
import { clipOfTake, takeCount } from './takes.js';
import { notifyRequester } from './notify-requester.js';

/** Discord's interaction tokens live 15 minutes; stop using one a minute early. */
export const INTERACTION_TOKEN_LIFETIME_MS = 15 * 60_000;
export const TOKEN_MARGIN_MS = 60_000;

export function interactionTokenUsable(job: Pick<JobRow, 'interactionToken' | 'applicationId' | 'interactionAt'>, now: Date): boolean {
  if (!job.interactionToken || !job.applicationId || !job.interactionAt) return false;
  return now.getTime() < job.interactionAt.getTime() + INTERACTION_TOKEN_LIFETIME_MS - TOKEN_MARGIN_MS;
}

export type DeliveryOutcome = 'delivered' | 'skipped' | 'failed';

/** Posts the job's result or failure. Throws on errors worth retrying (the queue retries). */
export async function deliverJob(deps: Pick<PipelineDeps, 'db' | 'discord' | 'logger' | 'metrics' | 'musicApi' | 'now' | 'settings'>, jobId: string): Promise<DeliveryOutcome> {
  const now = deps.now();
  const claimed = await claimDelivery(deps.db, jobId, now);
  if (!claimed) return 'skipped';
  // Posted anew (`/jobs show`), the result carries no files until they are attached again.
  const unattached = withoutFiles(claimed);
  if (unattached !== claimed) await recordAttachedTakes(deps.db, jobId, []);
  const job = await withContestOffer(deps, unattached, now);
  // Two renderings: the member's language for their reply, the guild's for the channel.
  const priceOf = (kind: JobRow['kind']) => costOfKind(deps, kind);
  const message = { reply: renderResult(job, translator(job.locale), priceOf), channel: renderResult(job, translator(job.guildLocale), priceOf) };
  const started = performance.now();
  const isPrivate = await guildIsPrivate(deps, job.guildId);

  let posted: { messageId: string; channel: boolean } | undefined;
  try {
    posted = isPrivate ? await postPrivately(deps, job, message, now) : await post(deps, job, message, now);
  } catch (err) {
    if (isMissingAccess(err)) {
      deps.logger.warn({ jobId, channelId: job.channelId, error: describeDiscordError(err) }, 'no access to the channel; result kept for /jobs show');
      await failDelivery(deps, jobId);
      deps.metrics.deliveries.inc({ outcome: 'missing_access' });
      deps.metrics.resultDeliveries.inc({ path: 'failed' });
      return 'failed';
    }
    await releaseDeliveryClaim(deps, jobId);
    deps.metrics.deliveries.inc({ outcome: 'retry' });
    deps.metrics.resultDeliveries.inc({ path: 'failed' });
    throw new Error(`delivery of job ${jobId} failed: ${JSON.stringify(describeDiscordError(err))}`);
  }

  // Posted: a failure to record it (Postgres gone) must not let the retry post it again.
  // Only for the state posted: a result that arrived meanwhile (`arrivedLate`) is posted in turn.
  const { messageId } = posted;
  await recordOutsideEffect(deps, { jobId, effect: 'delivery' }, () => markDelivered(deps, jobId, job.state, messageId));
  deps.metrics.deliveries.inc({ outcome: posted.channel ? 'channel_message' : 'interaction_reply' });
  deps.metrics.resultDeliveries.inc({ path: posted.channel ? 'channel' : 'edit' });
  deps.metrics.discordLatency.observe((performance.now() - started) / 1000);
  deps.logger.info({ jobId, state: job.state, viaChannel: posted.channel }, 'result delivered');

  if (job.state === 'succeeded' && deps.settings.attachAudio && !isPrivate) {
    await attachAudio(deps, job, priceOf, posted).catch((err: unknown) =>
      deps.logger.warn({ jobId, error: describeDiscordError(err) }, 'could not attach the audio file'),
    );
  }
  // In the background: the delivery is done whatever the direct message does.
  void notifyRequester(deps, job, isPrivate ? { private: true } : { messageId });
  return 'delivered';
}

/** A result in the member's language (for their reply) and in the guild's (for the channel). */
interface Rendered {
  readonly reply: OutgoingMessage;
  readonly channel: OutgoingMessage;
}

async function post(
  deps: Pick<PipelineDeps, 'discord' | 'logger'>,
  job: JobRow,
  message: Rendered,
  now: Date,
  files?: readonly OutgoingFile[],
): Promise<{ messageId: string; channel: boolean }> {
  if (interactionTokenUsable(job, now)) {
    try {
      const edited = await deps.discord.editOriginal(job.applicationId!, job.interactionToken!, message.reply, files);
      return { messageId: edited.id, channel: false };
    } catch (err) {
      if (!isGoneInteraction(err)) throw err;
      deps.logger.info({ jobId: job.id, error: describeDiscordError(err) }, 'interaction token no longer valid; posting in the channel');
    }
  }
  const sent = await deps.discord.postChannelMessage(
    job.channelId,
    { ...asChannelMessage(job, message.channel), nonce: deliveryNonce(job), enforce_nonce: true },
    files,
  );
  return { messageId: sent.id, channel: true };
}

async function guildIsPrivate(deps: Pick<PipelineDeps, 'db'>, guildId: string): Promise<boolean> {
  const [guild] = await deps.db.select({ visibility: guilds.visibility }).from(guilds).where(eq(guilds.id, guildId));
  return guild?.visibility === 'private';
}

/**
 * A guild that keeps results private: the member who asked sees the result in an ephemeral
 * follow-up while the interaction lives. After that only a notice goes to the channel, naming
 * the job so the member can see it with `/jobs show`; the result itself stays private.
 */
async function postPrivately(
  deps: Pick<PipelineDeps, 'discord' | 'logger'>,
  job: JobRow,
  message: Rendered,
  now: Date,
): Promise<{ messageId: string; channel: boolean }> {
  if (interactionTokenUsable(job, now)) {
    try {
      const sent = await deps.discord.followUp(job.applicationId!, job.interactionToken!, message.reply, { ephemeral: true });
      return { messageId: sent.id, channel: false };
    } catch (err) {
      if (!isGoneInteraction(err)) throw err;
    }
  }
  const notice = job.state === 'succeeded' ? 'notice.private.ready' : 'notice.private.finished';
  const sent = await deps.discord.postChannelMessage(job.channelId, {
    content: translator(job.guildLocale)(notice, { user: job.userId, id: job.id }),
    allowed_mentions: { parse: [], users: [job.userId] },
    nonce: deliveryNonce(job),
    enforce_nonce: true,
  });
  return { messageId: sent.id, channel: true };
}


/** A result that arrived after its refund notice was posted is a second message, with a nonce of its own. */
function deliveryNonce(job: JobRow): string {
  return nonceFor(job.state === 'succeeded' && job.error ? `${job.id}:late` : job.id);
}

/**
 * Where the audio fits the upload limit, the result carries it too, so it plays inside Discord:
 * every take, as far as their sizes together fit. The address is the service's: it is read within
 * the limit, and a redirect only on its scheme.
 */
async function attachAudio(
  deps: Pick<PipelineDeps, 'db' | 'discord' | 'now' | 'settings'>,
  job: JobRow,
  priceOf: PriceOf,
  posted: { messageId: string; channel: boolean },
): Promise<void> {
  if (!['song', 'persona_song'].includes(job.kind)) return;
  const takes = takeCount(job);
  const files: OutgoingFile[] = [];
  const attachedTakes: number[] = [];
  let room = deps.settings.attachmentLimitBytes;
  for (let take = 1; take <= takes; take += 1) {
    const clip = clipOfTake(job, take);
    const url = clip?.audioUrl;
    if (!url) continue;
    let audio: Downloaded;
    try {
      audio = await downloadCapped(url, { maxBytes: room, timeoutMs: 20_000, redirects: 'same-scheme' });
    } catch (error) {
      // Too large to attach: the result's link is enough.
      if (error instanceof DownloadError && error.reason === 'too_large') continue;
      throw error;
    }
    room -= audio.data.length;
    attachedTakes.push(take);
    const extension = new URL(url).pathname.split('.').pop() ?? 'm4a';
    const base = (clip.title ?? 'song').replace(/[^\p{L}\p{N}_-]+/gu, '_').slice(0, 60) || 'song';
    files.push({
      // Two takes of one title keep two names.
      name: takes > 1 ? `${base}_${english('result.take', { n: take }).replace(/\s+/g, '_')}.${extension}` : `${base}.${extension}`,
      data: audio.data,
      contentType: audio.contentType ?? 'application/octet-stream',
    });
  }
  if (files.length === 0) return;
  // The message with its files links those takes no more; recorded once Discord has the files,
  // so that later renderings (a like's edit, `/jobs show`) agree with it.
  const withFiles: JobRow = { ...job, result: { ...job.result, attachedTakes } };
  if (posted.channel) {
    const channel = renderResult(withFiles, translator(job.guildLocale), priceOf);
    await deps.discord.editChannelMessage(job.channelId, posted.messageId, { ...asChannelMessage(job, channel) }, files);
  } else if (interactionTokenUsable(job, deps.now())) {
    await deps.discord.editOriginal(job.applicationId!, job.interactionToken!, renderResult(withFiles, translator(job.locale), priceOf), files);
  } else {
    return;
  }
  await recordAttachedTakes(deps.db, job.id, attachedTakes);
}

/**
 * A song made while its server's contest runs is posted with Enter contest; recorded on the
 * job, so that later renderings (a like's edit, `/jobs show`) keep the button.
 */
async function withContestOffer(deps: Pick<PipelineDeps, 'db'>, job: JobRow, now: Date): Promise<JobRow> {
  if (job.state !== 'succeeded' || !LIBRARY_KINDS.includes(job.kind) || job.result?.contestOpen === true || job.removedAt !== null) return job;
  const contest = await runningContest(deps.db, job.guildId);
  if (!contest || now >= contest.endsAt || job.createdAt < contest.startedAt) return job;
  await recordContestOpen(deps.db, job.id);
  return { ...job, result: { ...job.result, contestOpen: true } };
}

/** Progress edits under way in the background, per pipeline. */
const backgroundEdits = new WeakMap<object, { inFlight: number }>();
/** Beyond this many, a background progress edit is dropped: the next one, or the result, shows the newer state. */
export const MAX_BACKGROUND_PROGRESS_EDITS = 8;

/**
 * Shows the job's progress without waiting for it (after a submission, so that the next
 * submission need not wait for Discord). At most {@link MAX_BACKGROUND_PROGRESS_EDITS} run
 * at once; beyond that the edit is dropped and counted, as progress edits are the first to
 * give way.
 */
export function showProgressSoon(deps: PipelineDeps, job: JobRow): void {
  let gate = backgroundEdits.get(deps);
  if (!gate) backgroundEdits.set(deps, (gate = { inFlight: 0 }));
  if (gate.inFlight >= MAX_BACKGROUND_PROGRESS_EDITS) {
    deps.metrics.progressEdits.inc({ outcome: 'dropped' });
    return;
  }
  gate.inFlight += 1;
  const counter = gate;
  void inBackgroundSlot(deps.frontFirst, () => showProgress(deps, job, true))
    .catch((err: unknown) => deps.logger.debug({ jobId: job.id, err }, 'progress edit failed'))
    .finally(() => {
      counter.inFlight -= 1;
    });
}

/**
 * Shows a waiting or running job's state, position and expected time in its reply, at most
 * once per `progressEditIntervalMs` (a Redis key with a time to live is the throttle).
 */
export async function showProgress(deps: Pick<PipelineDeps, 'db' | 'discord' | 'logger' | 'metrics' | 'now' | 'queues' | 'redis' | 'settings'>, job: JobRow, force = false): Promise<void> {
  const now = deps.now();
  if (!interactionTokenUsable(job, now)) return;
  const key = `${deps.queues.prefix}:progress:${job.id}`;
  const allowed = force
    ? true
    : (await deps.redis.set(key, '1', 'PX', deps.settings.progressEditIntervalMs, 'NX')) === 'OK';
  if (!allowed) return;
  const position = await queuePositionOf(deps.db, job);
  const expectedSeconds = deps.settings.expectedSeconds[job.kind];
  const base = job.submittedAt ?? now;
  const expectedAt = new Date(Math.max(base.getTime() + expectedSeconds * 1000, now.getTime() + 5_000));
  try {
    // The row lock orders this edit before any completion of the job: a result is never
    // overwritten by a progress edit that started earlier. The edit never waits for a rate
    // limit (editProgress drops it instead), so the lock is held for one request at most.
    const outcome = await whileLocked(deps.db, progressLock(job.id), async (rows): Promise<'shown' | 'dropped' | 'ended'> => {
      const fresh = rows[0] as { state: JobState; deliveryState: string; visibility: string } | undefined;
      if (!fresh || fresh.deliveryState !== 'pending' || !['queued', 'submitting', 'submitted'].includes(fresh.state)) return 'ended';
      // A private guild's reply was removed; there is nothing public to show progress in.
      if (fresh.visibility === 'private') return 'ended';
      const shown = await deps.discord.editProgress(
        job.applicationId!,
        job.interactionToken!,
        renderProgress({ ...job, state: fresh.state }, { position, expectedAt }, translator(job.locale)),
      );
      return shown ? 'shown' : 'dropped';
    });
    if (outcome === 'ended') return;
    deps.metrics.progressEdits.inc({ outcome });
    if (outcome === 'dropped') deps.logger.debug({ jobId: job.id }, 'progress edit dropped: the reply is rate limited');
  } catch (err) {
    deps.metrics.progressEdits.inc({ outcome: 'failed' });
    deps.logger.debug({ jobId: job.id, error: describeDiscordError(err) }, 'progress edit failed');
  }
}
