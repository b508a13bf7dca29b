/**
 * The guild's library: its finished songs, newest first, a page at a time, optionally one
 * member's and matching the words of a search. Pages are keyset pages on (created_at, id),
 * so a song finishing while someone pages never shifts or repeats a row.
 *
 * What a page costs must not grow with the guild's history (docs/decisions/year-of-history.md):
 * a search first reads the newest songs in the library index's order and stops at the page,
 * and only when that window is short of a page does it ask the trigram index for the rest;
 * totals are counted up to {@link LIBRARY_COUNT_CAP}, and not at all for a search.
 */
import type { Executor } from '../db/client.js';
import type { JobKind } from '../db/schema.js';
import {
  countLibraryCapped,
  countLibraryIndexSearch,
  countLibraryNewer,
  isShownResult,
  countLibrarySearchWindow,
  jobRowsInOrder,
  LIBRARY_COUNT_CAP,
  libraryIndexSearch,
  libraryRowsBeyond,
  librarySearchWindow,
  librarySearchWindowEnd,
  SEARCH_WINDOW,
  searchWords,
  type JobRow,
  type LibraryDirection,
  type LibraryFilter,
} from './job-rows.js';

export { indexSearch, LIBRARY_COUNT_CAP, SEARCH_WINDOW, type LibraryFilter } from './job-rows.js';

/** What the library lists and what can be remixed: generated songs (the index's predicate says the same). */
export const LIBRARY_KINDS: readonly JobKind[] = ['song', 'persona_song'];

/** A song a member of `guildId` may remix: a finished library song of that guild still shown, never another guild's. */
export function isRemixSource(job: JobRow | null | undefined, guildId: string): job is JobRow {
  return job != null && job.guildId === guildId && LIBRARY_KINDS.includes(job.kind) && isShownResult(job);
}

export const LIBRARY_PAGE_SIZE = 10;

/** Where a page starts: the songs older, or newer, than the song with this job id. */
export interface LibraryCursor {
  readonly direction: LibraryDirection;
  readonly jobId: string;
}

export interface LibraryPage {
  /** Newest first. */
  readonly songs: JobRow[];
  /**
   * Songs matching the filter: exact, or at least this many when `totalCapped`
   * ({@link LIBRARY_COUNT_CAP}); undefined when not counted (a search with older pages).
   */
  readonly total: number | undefined;
  readonly totalCapped: boolean;
  /** How many matching songs are newer than this page's first one. */
  readonly before: number;
  readonly hasNewer: boolean;
  readonly hasOlder: boolean;
}

/** The ids of up to `limit` songs matching a search beyond `from`, in `direction`'s order. */
async function searchIds(db: Executor, filter: LibraryFilter, direction: LibraryDirection, from: string | undefined, limit: number): Promise<string[]> {
  const ids = await librarySearchWindow(db, filter, direction, from, limit);
  if (ids.length >= limit) return ids;
  const end = await librarySearchWindowEnd(db, filter, direction, from);
  if (end === undefined) return ids;
  // One more than needed: a song finishing between these statements moves the newest window by one, so its last row may come again.
  const rest = await libraryIndexSearch(db, filter, direction, end, limit - ids.length + 1);
  return ids.concat(rest.filter((id) => !ids.includes(id))).slice(0, limit);
}

/** How many songs match a search beyond `from` (newer than a page's first song, say), read as {@link searchIds} reads. */
async function countSearch(db: Executor, filter: LibraryFilter, direction: LibraryDirection, from: string): Promise<number> {
  const { hits, seen } = await countLibrarySearchWindow(db, filter, direction, from);
  if (seen < SEARCH_WINDOW) return hits;
  const end = await librarySearchWindowEnd(db, filter, direction, from);
  if (end === undefined) return hits;
  return hits + (await countLibraryIndexSearch(db, filter, direction, end));
}

/** One page of the library: the newest songs, or those older or newer than a cursor. */
export async function libraryPage(db: Executor, filter: LibraryFilter, cursor?: LibraryCursor, limit = LIBRARY_PAGE_SIZE): Promise<LibraryPage> {
  const direction: LibraryDirection = cursor?.direction ?? 'older';
  const search = searchWords(filter.query).length > 0;
  // One more than the page: whether there is more beyond it.
  const read = search
    ? await jobRowsInOrder(db, await searchIds(db, filter, direction, cursor?.jobId, limit + 1))
    : await libraryRowsBeyond(db, filter, direction, cursor?.jobId, limit + 1);
  const more = read.length > limit;
  const inOrder = read.slice(0, limit);
  // A "newer" page is read oldest first, from the cursor up.
  const songs = direction === 'newer' ? inOrder.reverse() : inOrder;
  const first = songs[0];
  // Newer than the first song: none on the newest page, nor on a "newer" page with nothing beyond.
  const before = !first || !cursor || (direction === 'newer' && !more)
    ? 0
    : search
      ? await countSearch(db, filter, 'newer', first.id)
      : await countLibraryNewer(db, filter, first.id);
  // Older than the last song: what was read says so, or (a "newer" page) the cursor's own song.
  const hasOlder = direction === 'older' ? more : songs.length > 0;
  let total: number | undefined;
  let totalCapped = false;
  if (!hasOlder) total = before + songs.length;
  else if (!search) {
    const counted = Math.max(await countLibraryCapped(db, filter), before + songs.length + 1);
    totalCapped = counted > LIBRARY_COUNT_CAP;
    total = totalCapped ? LIBRARY_COUNT_CAP : counted;
  }
  return { songs, total, totalCapped, before, hasNewer: before > 0, hasOlder };
}
