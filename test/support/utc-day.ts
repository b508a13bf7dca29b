/**
 * For tests of the bot as it runs, which reads the real clock in Node (`new Date()` in the
 * commands) and in Postgres (`now()` on every ledger row) and takes no clock of a test's:
 * steps that must fall on one UTC day, and so in one UTC month (charging a job, then reading
 * what was spent today or this month, or the month an allowance was given for).
 */

const DAY_MS = 24 * 60 * 60_000;
/** Postgres's clock may be a little off Node's when it runs on another host. */
const CLOCK_MARGIN_MS = 2_000;

/** Returns once the current UTC day has at least `ms` left: at once, or, nearer midnight, just after it. */
export async function awayFromUtcMidnight(ms: number): Promise<void> {
  const left = DAY_MS - (Date.now() % DAY_MS);
  if (left >= ms + CLOCK_MARGIN_MS) return;
  await new Promise((resolve) => setTimeout(resolve, left + CLOCK_MARGIN_MS));
}
