/** The backstop for events that never came: every entitlement of the SKUs sold is listed and received, then the sweep runs. */
import { listEntitlements } from './list-entitlements.js';
import type { StepDeps } from './purchase-deps.js';
import { receiveEntitlement } from './receive-entitlement.js';
import { sweepEntitlements, type SweepResult } from './sweep-entitlements.js';

export async function reconcileEntitlements(deps: StepDeps): Promise<{ readonly listed: number; readonly sweep: SweepResult }> {
  const { logger } = deps;
  const seen = new Set<string>();
  for await (const page of listEntitlements(deps.api, { sku_ids: deps.catalog.skuIds.join(','), exclude_deleted: false }, logger)) {
    for (const entitlement of page) {
      if (seen.has(entitlement.id)) continue;
      seen.add(entitlement.id);
      await receiveEntitlement(deps, entitlement, 'listing').catch((err: unknown) => logger.error({ err, entitlementId: entitlement.id }, 'an entitlement from the listing failed'));
    }
  }
  const listed = seen.size;
  const sweep = await sweepEntitlements(deps);
  logger.info({ listed, ...sweep }, 'entitlements reconciled');
  return { listed, sweep };
}
