/**
 * The guild's library: its finished songs, newest first, a page at a time, optionally one
 * member's and matching the words of a search. Pages are keyset pages on (created_at, id),
 * so a song finishing while someone pages never shifts or repeats a row.
 */
import { and, asc, count, desc, eq, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { jobs, libraryRows, librarySearchText, type JobKind } from '../db/schema.js';
import type { JobRow } from './job-rows.js';

/** What the library lists and what can be remixed: generated songs (the index's predicate says the same). */
export const LIBRARY_KINDS: readonly JobKind[] = ['song', 'persona_song'];

export const LIBRARY_PAGE_SIZE = 10;
/** More words than this in a search are ignored: each one is another condition on the index. */
const MAX_WORDS = 8;

export interface LibraryFilter {
  readonly guildId: string;
  /** Only this member's songs. */
  readonly userId?: string | undefined;
  /** Every word must appear in the title, prompt or lyrics, in any case. */
  readonly query?: string | undefined;
}

/** Where a page starts: the songs older, or newer, than the song with this job id. */
export interface LibraryCursor {
  readonly direction: 'older' | 'newer';
  readonly jobId: string;
}

export interface LibraryPage {
  /** Newest first. */
  readonly songs: JobRow[];
  /** Songs matching the filter, on every page. */
  readonly total: number;
  /** How many matching songs are newer than this page's first one. */
  readonly before: number;
  readonly hasNewer: boolean;
  readonly hasOlder: boolean;
}

/** The words of a search, at most {@link MAX_WORDS}. */
export function searchWords(query: string | undefined): string[] {
  return (query ?? '').split(/\s+/).filter((word) => word.length > 0).slice(0, MAX_WORDS);
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (match) => `\\${match}`);
}

function matching(filter: LibraryFilter): SQL | undefined {
  return and(
    eq(jobs.guildId, filter.guildId),
    libraryRows(jobs),
    filter.userId === undefined ? undefined : eq(jobs.userId, filter.userId),
    ...searchWords(filter.query).map((word) => sql`(${librarySearchText(jobs)}) ilike ${`%${escapeLike(word)}%`}`),
  );
}

/** (created_at, id) of the guild's job `jobId` compared with the row's: `<` for older rows. */
function beyond(guildId: string, jobId: string, operator: '<' | '>'): SQL {
  return sql`(${jobs.createdAt}, ${jobs.id}) ${sql.raw(operator)} (select c.created_at, c.id from jobs c where c.id = ${jobId} and c.guild_id = ${guildId})`;
}

/** The select of one page's rows; exported so a test can EXPLAIN exactly what runs. */
export function libraryPageQuery(db: Executor, filter: LibraryFilter, cursor?: LibraryCursor, limit = LIBRARY_PAGE_SIZE) {
  const newer = cursor?.direction === 'newer';
  return db
    .select()
    .from(jobs)
    .where(and(matching(filter), cursor ? beyond(filter.guildId, cursor.jobId, newer ? '>' : '<') : undefined))
    .orderBy(...(newer ? [asc(jobs.createdAt), asc(jobs.id)] : [desc(jobs.createdAt), desc(jobs.id)]))
    .limit(limit);
}

/** One page of the library: the newest songs, or those older or newer than a cursor. */
export async function libraryPage(db: Executor, filter: LibraryFilter, cursor?: LibraryCursor, limit = LIBRARY_PAGE_SIZE): Promise<LibraryPage> {
  const rows = await libraryPageQuery(db, filter, cursor, limit);
  // A "newer" page is read oldest first, from the cursor up.
  const songs = cursor?.direction === 'newer' ? rows.reverse() : rows;
  const first = songs[0];
  const [[all], [newer]] = await Promise.all([
    db.select({ n: count() }).from(jobs).where(matching(filter)),
    first
      ? db.select({ n: count() }).from(jobs).where(and(matching(filter), beyond(filter.guildId, first.id, '>')))
      : Promise.resolve([{ n: 0 }]),
  ]);
  const total = all?.n ?? 0;
  const before = newer?.n ?? 0;
  return { songs, total, before, hasNewer: before > 0, hasOlder: before + songs.length < total };
}
