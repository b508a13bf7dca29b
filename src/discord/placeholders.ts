/**
 * The public "thinking…" reply of a request that will never get a result (it was cancelled
 * before submission): removed, so nothing public stays waiting. Uses the job's own
 * interaction token while it lives; never logs it.
 */
import { API } from '@discordjs/core/http-only';
import type { REST } from '@discordjs/rest';
import type { Logger } from '../logger.js';
import { INTERACTION_TOKEN_LIFETIME_MS } from '../pipeline/post-result.js';
import type { JobRow } from '../pipeline/job-rows.js';
import { loggableError } from '../logger.js';

export async function removePlaceholder(
  rest: REST,
  job: Pick<JobRow, 'applicationId' | 'interactionToken' | 'interactionAt'>,
  logger: Logger,
  now = new Date(),
): Promise<void> {
  const { applicationId, interactionToken, interactionAt } = job;
  if (!applicationId || !interactionToken || !interactionAt) return;
  if (now.getTime() - interactionAt.getTime() >= INTERACTION_TOKEN_LIFETIME_MS) return;
  await new API(rest).interactions
    .deleteReply(applicationId, interactionToken)
    .catch((error: unknown) =>
      logger.debug({ err: loggableError(error, [interactionToken]) }, 'placeholder reply already gone'),
    );
}
