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
import { and, asc, count, desc, eq, inArray, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { jobs, libraryRows, librarySearchText, type JobKind } from '../db/schema.js';
import type { JobRow } from './job-rows.js';

/** What the library lists and what can be remixed: generated songs (the index's predicate says the same). */
export const LIBRARY_KINDS: readonly JobKind[] = ['song', 'persona_song'];

/** A song a member of `guildId` may remix: a finished library song of that guild, never another guild's. */
export function isRemixSource(job: JobRow | null | undefined, guildId: string): job is JobRow {
  return job != null && job.guildId === guildId && LIBRARY_KINDS.includes(job.kind) && job.state === 'succeeded';
}

export const LIBRARY_PAGE_SIZE = 10;
/** Totals are counted up to this; a larger library shows as "1,000+". */
export const LIBRARY_COUNT_CAP = 1000;
/**
 * How many of the newest songs (from the cursor) a search reads in index order before it
 * turns to the trigram index: a word in one song of this many fills a page from here.
 */
export const SEARCH_WINDOW = 300;
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

/** The words of a search, at most {@link MAX_WORDS}. */
export function searchWords(query: string | undefined): string[] {
  return (query ?? '').split(/\s+/).filter((word) => word.length > 0).slice(0, MAX_WORDS);
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (match) => `\\${match}`);
}

/** The guild's library rows, one member's if the filter says so: what the two library indexes hold. */
function inLibrary(filter: LibraryFilter): SQL | undefined {
  return and(eq(jobs.guildId, filter.guildId), libraryRows(jobs), filter.userId === undefined ? undefined : eq(jobs.userId, filter.userId));
}

/** Every word of the search, on the expression the trigram index holds; undefined without words. */
function searched(filter: LibraryFilter): SQL | undefined {
  return and(...searchWords(filter.query).map((word) => sql`(${librarySearchText(jobs)}) ilike ${`%${escapeLike(word)}%`}`));
}

function matching(filter: LibraryFilter): SQL | undefined {
  return and(inLibrary(filter), searched(filter));
}

/** (created_at, id) of the guild's job `jobId` compared with the row's: `<` for older rows. */
function beyond(guildId: string, jobId: string, operator: '<' | '>'): SQL {
  return sql`(${jobs.createdAt}, ${jobs.id}) ${sql.raw(operator)} (select c.created_at, c.id from jobs c where c.id = ${jobId} and c.guild_id = ${guildId})`;
}

type Direction = 'older' | 'newer';

const operatorOf = (direction: Direction) => (direction === 'newer' ? '>' : '<');
const orderOf = (direction: Direction) => (direction === 'newer' ? sql`asc` : sql`desc`);

/**
 * The select of one page's rows in one statement: the library index read in order, `limit`
 * entries. What a page without a search runs; with one, it would search every row it walks
 * until the page is full (a rare word: the guild's whole library), so searches go by
 * {@link windowSearch} and {@link indexSearch}.
 */
export function libraryPageQuery(db: Executor, filter: LibraryFilter, cursor?: LibraryCursor, limit = LIBRARY_PAGE_SIZE) {
  const newer = cursor?.direction === 'newer';
  return db
    .select()
    .from(jobs)
    .where(and(matching(filter), cursor ? beyond(filter.guildId, cursor.jobId, newer ? '>' : '<') : undefined))
    .orderBy(...(newer ? [asc(jobs.createdAt), asc(jobs.id)] : [desc(jobs.createdAt), desc(jobs.id)]))
    .limit(limit);
}

/**
 * A search's first step: the {@link SEARCH_WINDOW} library rows next beyond `from` (none: the
 * newest), in order, read through the library index (a subquery with a LIMIT, which Postgres
 * neither flattens nor pushes the search into), then the search on those rows, stopping at `limit`.
 */
function windowSearch(filter: LibraryFilter, direction: Direction, from: string | undefined, limit: number): SQL {
  const order = orderOf(direction);
  const start = from === undefined ? undefined : beyond(filter.guildId, from, operatorOf(direction));
  return sql`select ${jobs.id} from (select * from ${jobs} where ${and(inLibrary(filter), start)}
      order by ${jobs.createdAt} ${order}, ${jobs.id} ${order} limit ${SEARCH_WINDOW}) as ${jobs}
    where ${searched(filter)} order by ${jobs.createdAt} ${order}, ${jobs.id} ${order} limit ${limit}`;
}

/**
 * The library row {@link SEARCH_WINDOW} rows beyond `from`: the window's last row, where the
 * trigram index takes over. Undefined when the window holds every row beyond `from`.
 */
async function windowEnd(db: Executor, filter: LibraryFilter, direction: Direction, from: string | undefined): Promise<string | undefined> {
  const order = orderOf(direction);
  const start = from === undefined ? undefined : beyond(filter.guildId, from, operatorOf(direction));
  const { rows } = await db.execute<{ id: string }>(
    sql`select ${jobs.id} from ${jobs} where ${and(inLibrary(filter), start)} order by ${jobs.createdAt} ${order}, ${jobs.id} ${order} offset ${SEARCH_WINDOW - 1} limit 1`,
  );
  return rows[0]?.id;
}

/**
 * A search's second step: the guild's songs matching it, found through the trigram index, then
 * those beyond the window's last row, ordered. `offset 0` keeps the search alone in a subquery
 * planned without the order or the bound, so its plan is the index's bitmap, not a walk of the
 * guild's songs. Exported so a test can EXPLAIN exactly what runs.
 */
export function indexSearch(filter: LibraryFilter, direction: Direction, from: string, limit: number): SQL {
  const order = orderOf(direction);
  return sql`select ${jobs.id} from (${found(filter)}) as ${jobs}
    where ${beyond(filter.guildId, from, operatorOf(direction))}
    order by ${jobs.createdAt} ${order}, ${jobs.id} ${order} limit ${limit}`;
}

/** The guild's songs matching a search, (id, created_at), in no order. */
function found(filter: LibraryFilter): SQL {
  return sql`select ${jobs.id}, ${jobs.createdAt} from ${jobs} where ${matching(filter)} offset 0`;
}

/** The ids of up to `limit` songs matching a search beyond `from`, in `direction`'s order. */
async function searchIds(db: Executor, filter: LibraryFilter, direction: Direction, from: string | undefined, limit: number): Promise<string[]> {
  const { rows } = await db.execute<{ id: string }>(windowSearch(filter, direction, from, limit));
  const ids = rows.map((row) => row.id);
  if (ids.length >= limit) return ids;
  const end = await windowEnd(db, filter, direction, from);
  if (end === undefined) return ids;
  // One more than needed: a song finishing between these statements moves the newest window by one, so its last row may come again.
  const rest = await db.execute<{ id: string }>(indexSearch(filter, direction, end, limit - ids.length + 1));
  return ids.concat(rest.rows.map((row) => row.id).filter((id) => !ids.includes(id))).slice(0, limit);
}

/** How many songs match a search beyond `from` (newer than a page's first song, say), read as {@link searchIds} reads. */
async function countSearch(db: Executor, filter: LibraryFilter, direction: Direction, from: string): Promise<number> {
  const order = orderOf(direction);
  const { rows } = await db.execute<{ hits: number; seen: number }>(
    sql`select (count(*) filter (where ${searched(filter)}))::int as hits, count(*)::int as seen
      from (select * from ${jobs} where ${and(inLibrary(filter), beyond(filter.guildId, from, operatorOf(direction)))}
        order by ${jobs.createdAt} ${order}, ${jobs.id} ${order} limit ${SEARCH_WINDOW}) as ${jobs}`,
  );
  const hits = rows[0]?.hits ?? 0;
  if ((rows[0]?.seen ?? 0) < SEARCH_WINDOW) return hits;
  const end = await windowEnd(db, filter, direction, from);
  if (end === undefined) return hits;
  const rest = await db.execute<{ n: number }>(
    sql`select count(*)::int as n from (${found(filter)}) as ${jobs} where ${beyond(filter.guildId, end, operatorOf(direction))}`,
  );
  return hits + (rest.rows[0]?.n ?? 0);
}

/** The rows of these ids, in the ids' order. */
async function rowsOf(db: Executor, ids: readonly string[]): Promise<JobRow[]> {
  if (ids.length === 0) return [];
  const rows = await db.select().from(jobs).where(inArray(jobs.id, [...ids]));
  const byId = new Map(rows.map((row) => [row.id, row]));
  return ids.map((id) => byId.get(id)).filter((row): row is JobRow => row !== undefined);
}

/** Library rows (no search) newer than `jobId`: index-only, as many as the page is deep. */
async function countNewer(db: Executor, filter: LibraryFilter, jobId: string): Promise<number> {
  const [row] = await db.select({ n: count() }).from(jobs).where(and(inLibrary(filter), beyond(filter.guildId, jobId, '>')));
  return row?.n ?? 0;
}

/** The library's songs (no search), counted up to {@link LIBRARY_COUNT_CAP} + 1. */
async function countCapped(db: Executor, filter: LibraryFilter): Promise<number> {
  const { rows } = await db.execute<{ n: number }>(
    sql`select count(*)::int as n from (select 1 from ${jobs} where ${inLibrary(filter)} limit ${LIBRARY_COUNT_CAP + 1}) as capped`,
  );
  return rows[0]?.n ?? 0;
}

/** One page of the library: the newest songs, or those older or newer than a cursor. */
export async function libraryPage(db: Executor, filter: LibraryFilter, cursor?: LibraryCursor, limit = LIBRARY_PAGE_SIZE): Promise<LibraryPage> {
  const direction: Direction = cursor?.direction ?? 'older';
  const search = searchWords(filter.query).length > 0;
  // One more than the page: whether there is more beyond it.
  const read = search
    ? await rowsOf(db, await searchIds(db, filter, direction, cursor?.jobId, limit + 1))
    : await libraryPageQuery(db, filter, cursor, limit + 1);
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
      : await countNewer(db, filter, first.id);
  // Older than the last song: what was read says so, or (a "newer" page) the cursor's own song.
  const hasOlder = direction === 'older' ? more : songs.length > 0;
  let total: number | undefined;
  let totalCapped = false;
  if (!hasOlder) total = before + songs.length;
  else if (!search) {
    const counted = Math.max(await countCapped(db, filter), before + songs.length + 1);
    totalCapped = counted > LIBRARY_COUNT_CAP;
    total = totalCapped ? LIBRARY_COUNT_CAP : counted;
  }
  return { songs, total, totalCapped, before, hasNewer: before > 0, hasOlder };
}
