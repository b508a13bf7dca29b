/**
 * Finding a guild's jobs by the name a member sees in lists and choices: the service's title,
 * the requested title or name, or the prompt. For an autocomplete option typed instead of
 * picked (`/video song:Rainy Night`).
 */
import { or, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { JOB_NAME_TEXTS, findGuildJobs, type GuildJobFilter, type JobRow } from './job-rows.js';

/** At most this many jobs are returned: what a select menu can offer. */
export const MAX_NAMED_JOBS = 25;

/** A stored name as compared: lower case, trimmed (stored texts have their inner spaces as written). */
const normalized = (value: SQL) => sql`lower(btrim(${value}))`;

/** A typed name as compared: lower case, trimmed, runs of spaces made one. */
export function normalizeName(typed: string): string {
  return typed.replaceAll('\u0000', '').trim().replace(/\s+/g, ' ').toLowerCase();
}

/**
 * The guild's jobs one of whose names is `typed` (`exact`, in any case and spacing) or contains
 * it (`contains`), newest first, at most {@link MAX_NAMED_JOBS}.
 */
export async function findJobsNamed(
  db: Executor,
  guildId: string,
  typed: string,
  how: 'exact' | 'contains',
  filter: GuildJobFilter = {},
): Promise<JobRow[]> {
  const name = normalizeName(typed);
  if (name === '') return [];
  const test = (value: SQL) =>
    how === 'exact' ? sql`${normalized(value)} = ${name}` : sql`${normalized(value)} like ${`%${escapeLike(name)}%`}`;
  return findGuildJobs(db, guildId, filter, or(...JOB_NAME_TEXTS.map(test)), MAX_NAMED_JOBS);
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (char) => `\\${char}`);
}
