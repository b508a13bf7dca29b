/**
 * A pack's consume: Discord is told the pack is used, then the row is marked. A first attempt
 * Discord does not take is queued for retry (consume-retries.ts); the sweep takes what is left.
 */
import { findEntitlement, markConsumed } from '../credits/index.js';
import type { StepDeps } from './purchase-deps.js';

export type ConsumeDeps = Pick<StepDeps, 'db' | 'api' | 'logger' | 'now' | 'consumeRetries'>;

/** Whether the pack is consumed now; with `retry`, a failed attempt is queued to be tried again. */
export async function consumePack(deps: ConsumeDeps, entitlementId: string, { retry = true }: { readonly retry?: boolean } = {}): Promise<boolean> {
  const { api, logger } = deps;
  try {
    await api.consume(entitlementId);
  } catch (error) {
    // Consumed already (by another process, or before a crash): Discord's record says so.
    const confirmed = await api.get(entitlementId).catch(() => undefined);
    if (!confirmed?.consumed) {
      logger.warn({ entitlementId, err: error }, 'consuming an entitlement failed; it will be retried');
      if (retry && deps.consumeRetries) {
        await deps.consumeRetries.retryConsume(entitlementId).catch((err: unknown) => logger.warn({ err, entitlementId }, 'could not queue the retry of a consume; the sweep takes it'));
      }
      return false;
    }
  }
  await markConsumed(deps.db, entitlementId, deps.now());
  logger.info({ entitlementId }, 'entitlement consumed');
  return true;
}

/** One attempt of a queued retry: a pack marked consumed already is not sent again; throws while Discord has not taken it. */
export async function consumePackAgain(deps: ConsumeDeps, entitlementId: string): Promise<void> {
  const pack = await findEntitlement(deps.db, entitlementId);
  if (!pack || pack.consumedAt) return;
  if (!(await consumePack(deps, entitlementId, { retry: false }))) throw new Error('Discord did not take the consume');
}
