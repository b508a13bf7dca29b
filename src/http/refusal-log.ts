/**
 * Logging for requests refused on the public port: each at debug, and at info at most one line
 * a minute with the counts by reason since, so a scan or a flood costs the log a line a minute.
 * The counters (`musicbot_webhooks_total`, ...) keep the exact figures.
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
