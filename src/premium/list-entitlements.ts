import type { EntitlementRecord, EntitlementsApi } from '../discord-rest/entitlements-api.js';
import type { Logger } from '../logger.js';

const LIST_PAGE = 100;

/**
 * Every entitlement the query matches, a page at a time, whatever order Discord answers in (it
 * documents none for `before` and `after`). The first page, without a cursor, is the newest or
 * the oldest; from there `before` the smallest id seen walks down and `after` the largest walks
 * up, each until a page comes back empty. Why this covers every order: docs/decisions/entitlement-listing.md
 */
export async function* listEntitlements(
  api: Pick<EntitlementsApi, 'list'>,
  query: Omit<Parameters<EntitlementsApi['list']>[0], 'before' | 'after' | 'limit'>,
  logger: Logger,
): AsyncGenerator<EntitlementRecord[]> {
  const first = await api.list({ ...query, limit: LIST_PAGE });
  if (first.length === 0) return;
  yield first;
  const ids = (page: readonly EntitlementRecord[]) => page.map((entitlement) => BigInt(entitlement.id));
  let lowest = ids(first).reduce((a, b) => (b < a ? b : a));
  let highest = ids(first).reduce((a, b) => (b > a ? b : a));
  for (const direction of ['before', 'after'] as const) {
    for (;;) {
      const cursor = direction === 'before' ? lowest : highest;
      const page = await api.list({ ...query, limit: LIST_PAGE, [direction]: String(cursor) });
      // Only ids beyond the cursor move it: a page without one (a cursor ignored) ends this side.
      const beyond = ids(page).filter((id) => (direction === 'before' ? id < cursor : id > cursor));
      if (page.length > 0) yield page;
      if (beyond.length === 0) {
        if (page.length > 0) logger.warn({ direction, cursor: String(cursor) }, 'the entitlement listing answered a page outside its cursor; that side ends here');
        break;
      }
      if (direction === 'before') lowest = beyond.reduce((a, b) => (b < a ? b : a));
      else highest = beyond.reduce((a, b) => (b > a ? b : a));
    }
  }
}
