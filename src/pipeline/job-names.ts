/**
 * Finding a guild's jobs by the name a member sees in lists and choices: the service's title,
 * the requested title or name, or the prompt. For an autocomplete option typed instead of
 * picked (`/video song:Rainy Night`).
 */
import { or, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { JOB_NAME_TEXTS, JOB_TITLE_TEXTS, findGuildJobs, type GuildJobFilter, type JobRow } from './job-rows.js';
import { TRAILING_PUNCTUATION } from './titles.js';

/** At most this many jobs are returned: what a select menu can offer. */
export const MAX_NAMED_JOBS = 25;

/** What a name's end loses before it is compared: spaces and the punctuation titles are shown without (titles.ts). */
const TRAILING = ` ${TRAILING_PUNCTUATION}`;

/** A stored name as compared: lower case, trimmed, without trailing punctuation (stored texts have their inner spaces as written). */
const normalized = (value: SQL) => sql`rtrim(lower(btrim(${value})), ${TRAILING})`;

/** A typed name as compared: lower case, trimmed, runs of spaces made one, without trailing punctuation. */
export function normalizeName(typed: string): string {
  const name = typed.replaceAll('\u0000', '').trim().replace(/\s+/g, ' ').toLowerCase();
  let end = name.length;
  while (end > 0 && TRAILING.includes(name[end - 1]!)) end -= 1;
  return name.slice(0, end);
}

/**
 * The guild's jobs, newest first, at most {@link MAX_NAMED_JOBS}: those one of whose titles is
 * `typed` (`title`, in any case and spacing, trailing punctuation aside), one of whose names
 * (the prompt too) is (`exact`), or one of whose names contains it (`contains`).
 */
export async function findJobsNamed(
  db: Executor,
  guildId: string,
  typed: string,
  how: 'title' | 'exact' | 'contains',
  filter: GuildJobFilter = {},
): Promise<JobRow[]> {
  const name = normalizeName(typed);
  if (name === '') return [];
  const test = (value: SQL) =>
    how === 'contains' ? sql`${normalized(value)} like ${`%${escapeLike(name)}%`}` : sql`${normalized(value)} = ${name}`;
  return findGuildJobs(db, guildId, filter, or(...(how === 'title' ? JOB_TITLE_TEXTS : JOB_NAME_TEXTS).map(test)), MAX_NAMED_JOBS);
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (char) => `\\${char}`);
}
