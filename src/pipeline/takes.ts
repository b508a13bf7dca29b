/**
 * A song task may give several clips ("takes"): every take is delivered, played, remixed and
 * made into files on its own. Takes are numbered from 1 in the service's order; a button for
 * take 1 carries no number, so buttons made before takes existed still mean the first.
 */
import type { StoredClip } from '../db/schema.js';
import type { JobRow } from './job-rows.js';

/** The most takes a result offers buttons for: the message's rows hold no more. */
export const MAX_TAKES = 2;

/** The clip of take `take` (from 1), if the result has it. */
export function clipOfTake(job: Pick<JobRow, 'result'>, take = 1): StoredClip | undefined {
  return job.result?.clips?.[take - 1];
}

/** The number of takes a result offers (its clips, at most {@link MAX_TAKES}). */
export function takeCount(job: Pick<JobRow, 'result'>): number {
  return Math.min(job.result?.clips?.length ?? 0, MAX_TAKES);
}

/**
 * The take a button's argument names: none is take 1; a number from 1 to {@link MAX_TAKES}
 * that one. Anything else (a forged id) is undefined, which the caller refuses.
 */
export function takeFromArg(arg: string | undefined): number | undefined {
  if (arg === undefined || arg === '') return 1;
  if (!/^[1-9]$/.test(arg)) return undefined;
  const take = Number(arg);
  return take <= MAX_TAKES ? take : undefined;
}

/** The argument a button for `take` carries: none for take 1. */
export function takeArg(take: number): string | undefined {
  return take === 1 ? undefined : String(take);
}
