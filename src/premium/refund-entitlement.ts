/** Discord refunded an entitlement: its credits go back through the ledger, once (credits/purchase-credits.ts). */
import { reverseEntitlement, type ReversalOutcome } from '../credits/index.js';
import type { Logger } from '../logger.js';
import type { StepDeps } from './purchase-deps.js';

/** Takes back what the entitlement gave, as far as the balance allows; a second call reverses nothing. */
export async function refundEntitlement(deps: Pick<StepDeps, 'db' | 'now' | 'logger'>, entitlementId: string, log: Logger = deps.logger): Promise<ReversalOutcome> {
  const outcome = await reverseEntitlement(deps.db, { entitlementId, now: deps.now() });
  if (outcome.status === 'reversed') {
    log[outcome.unrecovered > 0 ? 'warn' : 'info'](
      { guildId: outcome.guildId, taken: outcome.taken, unrecovered: outcome.unrecovered },
      outcome.unrecovered > 0 ? 'refund: the balance could not give everything back; recorded for the owners' : 'refund: credits taken back',
    );
  }
  return outcome;
}
