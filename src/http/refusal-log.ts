/**
 * Logging for requests refused on the public port, where anyone can send them: each refusal at
 * debug, and at info at most one line a minute, with how many were refused since, by reason.
 * A scan or a flood then costs the log a line a minute, not a line a request; the counters
 * (`musicbot_webhooks_total`, ...) keep the exact figures.
 */
import type { Logger } from '../logger.js';

export type RefusalLog = (fields: Record<string, unknown> & { readonly reason: string }, message: string) => void;

export function createRefusalLog(logger: Logger, options: { readonly everyMs?: number; readonly now?: () => number } = {}): RefusalLog {
  const everyMs = options.everyMs ?? 60_000;
  const now = options.now ?? Date.now;
  let counts = new Map<string, number>();
  let lastSummaryAt: number | undefined;
  return (fields, message) => {
    logger.debug(fields, message);
    counts.set(fields.reason, (counts.get(fields.reason) ?? 0) + 1);
    const at = now();
    if (lastSummaryAt !== undefined && at - lastSummaryAt < everyMs) return;
    logger.info({ refused: Object.fromEntries(counts), sinceMs: lastSummaryAt === undefined ? undefined : at - lastSummaryAt }, 'requests refused on the public port');
    counts = new Map();
    lastSummaryAt = at;
  };
}
