/**
 * A submission refused because the music service account cannot pay (402 `insufficient_credits`,
 * or the older 403). Logged at error every time; the owners are told once per
 * `ACCOUNT_REFUSAL_ALERT_WINDOW_MS`, and the member hears the owners know only when they do.
 */
import type { JobError } from '../db/schema.js';
import { english } from '../i18n/index.js';
import type { MusicApiError } from '../music-api/index.js';
import { ownersReachable, tellOwners } from './account.js';
import type { PipelineDeps } from './deps.js';
import type { JobRow } from './job-rows.js';

/** How long one alert about refusals stands for the refusals after it. */
export const ACCOUNT_REFUSAL_ALERT_WINDOW_MS = 60 * 60_000;

/** The job error kind of a refusal the owners know of; its text is `failure.accountCannotPay`. */
export const ACCOUNT_REFUSED = 'account_refused';

/** The error to record on a job whose submission failed for good with `error`. */
export function submissionFailure(
  deps: Pick<PipelineDeps, 'redis' | 'queues' | 'discord' | 'logger' | 'settings'>,
  job: Pick<JobRow, 'id' | 'kind' | 'guildId'>,
  error: MusicApiError,
): Promise<Omit<JobError, 'creditsReturned'>> | Omit<JobError, 'creditsReturned'> {
  if (error.kind === 'insufficient_credits') return reportAccountRefusal(deps, job, error);
  return { kind: error.kind, message: english.text(error.userText) };
}

/**
 * Logs the refusal, tells the owners if no alert went out within the window, and returns the
 * error to record on the job. Never throws: the job fails and its credits are released either way.
 */
export async function reportAccountRefusal(
  deps: Pick<PipelineDeps, 'redis' | 'queues' | 'discord' | 'logger' | 'settings'>,
  job: Pick<JobRow, 'id' | 'kind' | 'guildId'>,
  error: MusicApiError,
): Promise<Omit<JobError, 'creditsReturned'>> {
  deps.logger.error(
    { jobId: job.id, guildId: job.guildId, kind: job.kind, error: error.toJSON() },
    'the music service account cannot pay: too few credits, or a plan that does not allow this operation',
  );
  const ownersKnow = await alertOnce(deps, `${error.method} ${error.path}`).catch((err: unknown) => {
    deps.logger.error({ err, jobId: job.id }, 'could not tell the owners of the account refusal');
    return false;
  });
  return ownersKnow
    ? { kind: ACCOUNT_REFUSED, message: english('failure.accountCannotPay') }
    : { kind: error.kind, message: english.text(error.userText) };
}

/**
 * True when the owners were told: by this call, or by an alert within the window (which any
 * worker sharing Redis may have sent). A send that reached nobody frees the window again.
 */
async function alertOnce(deps: Pick<PipelineDeps, 'redis' | 'queues' | 'discord' | 'logger' | 'settings'>, operation: string): Promise<boolean> {
  if (!ownersReachable(deps.settings)) return false;
  const key = `${deps.queues.prefix}:alert:account-refused`;
  const claimed = (await deps.redis.set(key, String(Date.now()), 'PX', ACCOUNT_REFUSAL_ALERT_WINDOW_MS, 'NX')) === 'OK';
  if (!claimed) return true;
  const minutes = Math.round(ACCOUNT_REFUSAL_ALERT_WINDOW_MS / 60_000);
  const reached = await tellOwners(deps, english('alert.accountRefused', { operation, minutes }), { alert: 'music account refused', operation });
  if (!reached) await deps.redis.del(key);
  return reached;
}
