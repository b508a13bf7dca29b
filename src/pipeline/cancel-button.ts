/**
 * The Cancel button of a request's private acknowledgement lives while its job waits in the
 * queue. The front and the worker race through one Redis key per job, and whichever comes second
 * removes the button. Why: docs/decisions/cancel-button.md
 */
import { describeDiscordError } from '../discord-rest/discord-delivery.js';
import { INTERACTION_TOKEN_LIFETIME_MS, interactionTokenUsable } from './post-result.js';
import type { PipelineDeps } from './deps.js';
import type { JobRow } from './job-rows.js';
import type { ReplyTarget } from './requests.js';

/** The key's value once the job has left the queue; before, the id of the message carrying the button. */
const TAKEN = 'taken';

function keyOf(deps: Pick<PipelineDeps, 'queues'>, jobId: string): string {
  return `${deps.queues.prefix}:cancel-button:${jobId}`;
}


/** How long the acknowledgement waits to learn whether the job was taken; past it (Redis away), it goes without Cancel. */
export const TAKEN_CHECK_MS = 500;

/** Whether a worker has taken the job; undefined when Redis did not say within {@link TAKEN_CHECK_MS}. */
export function isTaken(deps: Pick<PipelineDeps, 'logger' | 'queues' | 'redis'>, jobId: string): Promise<boolean | undefined> {
  return takenWithin(deps, keyOf(deps, jobId), TAKEN_CHECK_MS);
}

/**
 * Records the message that shows the job's Cancel button. Whichever of this and the worker's
 * mark comes second removes the button. Never throws.
 */
export async function cancelShown(deps: Pick<PipelineDeps, 'discord' | 'logger' | 'queues' | 'redis'>, jobId: string, reply: ReplyTarget, messageId: string): Promise<void> {
  try {
    const recorded = await deps.redis.set(keyOf(deps, jobId), messageId, 'PX', INTERACTION_TOKEN_LIFETIME_MS, 'NX');
    if (recorded !== 'OK') await removeButton(deps, jobId, reply.applicationId, reply.interactionToken, messageId);
  } catch (err) {
    deps.logger.debug({ jobId, err }, 'could not record the cancel button');
  }
}

/** Whether a worker has marked the job taken; undefined when Redis did not say within `ms`. */
async function takenWithin(deps: Pick<PipelineDeps, 'redis'>, key: string, ms: number): Promise<boolean | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
  try {
    const value = await Promise.race([deps.redis.get(key), late]);
    return value === undefined ? undefined : value === TAKEN;
  } catch {
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}

/** The job has left the queue (taken for submission, or cancelled): its Cancel button, if shown, goes. */
export async function withdrawCancel(deps: Pick<PipelineDeps, 'discord' | 'logger' | 'now' | 'queues' | 'redis'>, job: Pick<JobRow, 'id' | 'applicationId' | 'interactionToken' | 'interactionAt'>): Promise<void> {
  // Past the token's life nothing could be shown or removed any more.
  if (!interactionTokenUsable(job, deps.now())) return;
  const messageId = await deps.redis.set(keyOf(deps, job.id), TAKEN, 'PX', INTERACTION_TOKEN_LIFETIME_MS, 'GET');
  if (messageId === null || messageId === TAKEN) return;
  await removeButton(deps, job.id, job.applicationId!, job.interactionToken!, messageId);
}

/** The message stays as it reads; only its button goes. A message the member dismissed is left alone. */
async function removeButton(deps: Pick<PipelineDeps, 'discord' | 'logger'>, jobId: string, applicationId: string, token: string, messageId: string): Promise<void> {
  try {
    await deps.discord.editInteractionMessage(applicationId, token, messageId, { components: [] });
  } catch (err) {
    deps.logger.debug({ jobId, error: describeDiscordError(err) }, 'could not remove the cancel button');
  }
}
