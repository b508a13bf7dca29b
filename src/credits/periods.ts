/** Calendar periods in UTC, the clock every credit rule uses whatever the server's time zone. */

/** `YYYY-MM` of `now` in UTC. Such strings sort in time order. */
export function utcMonth(now: Date): string {
  return now.toISOString().slice(0, 7);
}

/** The UTC day containing `now`: `[start, end)`. */
export function utcDay(now: Date): { start: Date; end: Date } {
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  return { start, end: new Date(start.getTime() + 24 * 60 * 60 * 1000) };
}

/** The first instant of the UTC month containing `now`. */
export function utcMonthStart(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
}

/**
 * When a monthly allowance next tops a balance up: the start of the next UTC month (this
 * month's was applied at the guild's first use in it, or by the hourly sweep).
 */
export function nextAllowanceTopUp(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
}
