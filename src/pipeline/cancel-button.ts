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
