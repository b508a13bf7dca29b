/** The server a bought pack goes to when its buyer picks none: where they were last offered it. */
import type { StepDeps } from './purchase-deps.js';
import { offeredGuild } from '../credits/index.js';

/** How long an offer names the server a bought pack goes to. */
export const OFFER_VALID_MS = 24 * 60 * 60_000;

/** The server the buyer was shown a Buy button in within {@link OFFER_VALID_MS} before `at`, if any. */
export async function defaultGuildFor(deps: Pick<StepDeps, 'db'>, userId: string | undefined, at: Date): Promise<string | null> {
  if (!userId) return null;
  return offeredGuild(deps.db, userId, new Date(at.getTime() - OFFER_VALID_MS));
}
