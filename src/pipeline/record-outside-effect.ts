/**
 * Writing down what already happened outside (a task the service accepted, a message Discord
 * posted). The write is retried with backoff while Postgres is away, since failing the attempt
 * would make the queue repeat the effect (a second task charged, a second message).
 */
import { DEFAULT_SETTINGS, type PipelineDeps } from './deps.js';

/** How long a worker keeps trying to record an effect before it gives up. */
export const RECORD_PATIENCE_MS = DEFAULT_SETTINGS.recordPatienceMs;
const FIRST_WAIT_MS = 250;
const LONGEST_WAIT_MS = 5_000;

export async function recordOutsideEffect<T>(
  deps: Pick<PipelineDeps, 'logger'>,
  context: { readonly jobId: string; readonly effect: string },
  write: () => Promise<T>,
  patienceMs = RECORD_PATIENCE_MS,
): Promise<T> {
  const giveUpAt = Date.now() + patienceMs;
  for (let attempt = 1; ; attempt += 1) {
    try {
      const written = await write();
      if (attempt > 1) deps.logger.info({ ...context, attempts: attempt }, 'outside effect recorded after retries');
      return written;
    } catch (err) {
      if (Date.now() >= giveUpAt) throw err;
      // The driver's own words ("connect ECONNREFUSED", "terminating connection …"), not the statement and its values.
      const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : String(err).slice(0, 200);
      if (attempt === 1) deps.logger.warn({ ...context, cause }, 'could not record an outside effect; retrying until the database answers');
      await new Promise((resolve) => setTimeout(resolve, Math.min(LONGEST_WAIT_MS, FIRST_WAIT_MS * 2 ** (attempt - 1))));
    }
  }
}
