/**
 * The library query against real Postgres: keyset pages that neither skip nor repeat a song
 * (ties on created_at included), the filters, and a search that the trigram index serves.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { desc } from 'drizzle-orm';
import type pg from 'pg';
import { PgDialect } from 'drizzle-orm/pg-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureGuild } from '../../../src/credits/index.js';
import { connectDatabase } from '../../../src/db/client.js';
import { jobs, type JobKind, type JobState } from '../../../src/db/schema.js';
import { indexSearch, LIBRARY_COUNT_CAP, libraryPage, SEARCH_WINDOW, type LibraryCursor, type LibraryFilter } from '../../../src/pipeline/library.js';
import { createTestDatabase, type TestDatabase } from '../../support/database.js';
import { observeStatements } from '../../support/sent-statements.js';

let db: TestDatabase;
const GUILD = '300000000000000001';
const OTHER_GUILD = '300000000000000002';
const ALICE = '300000000000000011';
const BOB = '300000000000000012';

interface Song {
  guildId?: string;
  userId?: string;
  kind?: JobKind;
  state?: JobState;
  createdAt: Date;
  title?: string;
  prompt?: string;
  lyrics?: string;
  clipLyrics?: string;
}

/** A row as the pipeline leaves a finished song. */
async function insertSong(song: Song): Promise<string> {
  const id = randomUUID();
  await db.db.insert(jobs).values({
    id,
    guildId: song.guildId ?? GUILD,
    channelId: '300000000000000100',
    userId: song.userId ?? ALICE,
    kind: song.kind ?? 'song',
    state: song.state ?? 'succeeded',
    request: { kind: song.kind ?? 'song', prompt: song.prompt ?? 'a tune', ...(song.title && { title: song.title }), ...(song.lyrics && { lyrics: song.lyrics }) },
    result: { clips: [{ clipId: `clip-${id}`, title: song.title ?? 'A tune', lyrics: song.clipLyrics ?? song.lyrics ?? '', audioUrl: `https://cdn.example/${id}.mp3` }] },
    cost: 10,
    webhookSecret: randomBytes(8).toString('hex'),
    deliveryState: 'delivered',
    createdAt: song.createdAt,
    completedAt: song.createdAt,
  });
  return id;
}

/** The plan Postgres makes for `statement` on a connection of `pool`, after `settings` (each a `set local`), in a transaction rolled back. */
async function planOf(pool: pg.Pool, statement: { sql: string; params: unknown[] }, settings: readonly string[]): Promise<string> {
  const client = await pool.connect();
  try {
    await client.query('begin');
    for (const setting of settings) await client.query(setting);
    const plan = await client.query<{ 'QUERY PLAN': string }>(`explain ${statement.sql}`, statement.params);
    return plan.rows.map((row) => row['QUERY PLAN']).join('\n');
  } finally {
    await client.query('rollback');
    client.release();
  }
}

/** Every page from the newest, following Older to the end. */
async function walkOlder(filter: LibraryFilter): Promise<string[][]> {
  const pages: string[][] = [];
  let cursor: LibraryCursor | undefined;
  for (;;) {
    const page = await libraryPage(db.db, filter, cursor);
    pages.push(page.songs.map((job) => job.id));
    if (!page.hasOlder) return pages;
    cursor = { direction: 'older', jobId: page.songs.at(-1)!.id };
  }
}

beforeAll(async () => {
  db = await createTestDatabase();
  await ensureGuild(db.db, GUILD, { startingCredits: 0 });
  await ensureGuild(db.db, OTHER_GUILD, { startingCredits: 0 });
});

describe('libraryPage', () => {
  it('pages 23 songs newest first, 10 at a time, and back, ties on created_at included', async () => {
    await db.truncateAll();
    await ensureGuild(db.db, GUILD, { startingCredits: 0 });
    await ensureGuild(db.db, OTHER_GUILD, { startingCredits: 0 });
    const base = Date.parse('2026-03-01T12:00:00Z');
    const ids: string[] = [];
    // Songs 9 to 12 finish in the same millisecond: only the id orders them.
    for (let i = 0; i < 23; i += 1) ids.push(await insertSong({ createdAt: new Date(base + (i >= 9 && i <= 12 ? 9 : i) * 1000), userId: i % 2 ? BOB : ALICE }));
    // Not in the library: another guild's song, a failed song, lyrics.
    await insertSong({ guildId: OTHER_GUILD, createdAt: new Date(base + 99_000) });
    await insertSong({ state: 'failed', createdAt: new Date(base + 99_000) });
    await insertSong({ kind: 'lyrics', createdAt: new Date(base + 99_000) });

    const rows = await db.db.select({ id: jobs.id, createdAt: jobs.createdAt }).from(jobs);
    const expected = rows
      .filter((row) => ids.includes(row.id))
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : -1))
      .map((row) => row.id);

    const pages = await walkOlder({ guildId: GUILD });
    expect(pages.map((page) => page.length)).toEqual([10, 10, 3]);
    expect(pages.flat()).toEqual(expected);

    const last = await libraryPage(db.db, { guildId: GUILD }, { direction: 'older', jobId: pages[1]!.at(-1)! });
    expect(last).toMatchObject({ total: 23, before: 20, hasNewer: true, hasOlder: false });
    const back = await libraryPage(db.db, { guildId: GUILD }, { direction: 'newer', jobId: last.songs[0]!.id });
    expect(back.songs.map((job) => job.id)).toEqual(pages[1]);
    expect(back).toMatchObject({ total: 23, before: 10, hasNewer: true, hasOlder: true });
    const first = await libraryPage(db.db, { guildId: GUILD }, { direction: 'newer', jobId: back.songs[0]!.id });
    expect(first.songs.map((job) => job.id)).toEqual(pages[0]);
    expect(first).toMatchObject({ before: 0, hasNewer: false, hasOlder: true });

    const bobs = await walkOlder({ guildId: GUILD, userId: BOB });
    expect(bobs.flat()).toEqual(expected.filter((id) => ids.indexOf(id) % 2 === 1));
    // A cursor from another guild names no position here.
    const foreign = await insertSong({ guildId: OTHER_GUILD, createdAt: new Date(base) });
    expect((await libraryPage(db.db, { guildId: GUILD }, { direction: 'older', jobId: foreign })).songs).toEqual([]);
  });

  it('finds every word of a search in the title, the prompt or the lyrics, in any case, and nothing else', async () => {
    await db.truncateAll();
    await ensureGuild(db.db, GUILD, { startingCredits: 0 });
    const at = (s: number) => new Date(Date.parse('2026-03-02T00:00:00Z') + s * 1000);
    const title = await insertSong({ createdAt: at(1), title: 'Harbor Lights' });
    const prompt = await insertSong({ createdAt: at(2), prompt: 'a waltz on the ACCORDION' });
    const lyrics = await insertSong({ createdAt: at(3), lyrics: 'the lighthouse keeper sleeps' });
    const sung = await insertSong({ createdAt: at(4), clipLyrics: 'what the service wrote: señora de la mañana' });
    await insertSong({ createdAt: at(5), title: '100% pure', prompt: 'percent signs' });

    const search = async (query: string) => (await libraryPage(db.db, { guildId: GUILD, query })).songs.map((job) => job.id);
    expect(await search('harbor')).toEqual([title]);
    expect(await search('accordion')).toEqual([prompt]);
    expect(await search('Lighthouse')).toEqual([lyrics]);
    // Letters beyond ASCII are found as typed (their case folding follows the database's LC_CTYPE).
    expect(await search('mañana')).toEqual([sung]);
    expect(await search('light')).toEqual([lyrics, title]);
    expect(await search('keeper   lighthouse')).toEqual([lyrics]);
    expect(await search('lighthouse harbor')).toEqual([]);
    // LIKE's wildcards are searched for as written.
    expect(await search('0%')).toHaveLength(1);
    expect(await search('_')).toEqual([]);
  });

  it('in a busy guild, finds a rare word beyond the newest songs through the trigram index, pages a search across that window, and caps the count', async () => {
    await db.truncateAll();
    await ensureGuild(db.db, GUILD, { startingCredits: 0 });
    // A busy guild: 20,000 finished songs, every 97th of them a "marker" (about 206, a few in
    // each window of the newest songs, most beyond it), each "filler".
    await db.pool.query(
      `insert into jobs (guild_id, channel_id, user_id, kind, state, request, result, cost, webhook_secret, delivery_state, created_at)
       select $1, '300000000000000100', case when n % 2 = 0 then $2 else $3 end, 'song', 'succeeded',
              jsonb_build_object('kind', 'song', 'prompt', 'filler ' || n || ' ' || md5(n::text) || case when n % 97 = 0 then ' marker' else '' end),
              jsonb_build_object('clips', jsonb_build_array(jsonb_build_object('title', 'Filler ' || n, 'lyrics', md5((n * 7)::text)))),
              10, md5(n::text), 'delivered', timestamptz '2024-01-01' + (n / 3) * interval '1 minute'
       from generate_series(1, 20000) as n`,
      [GUILD, ALICE, BOB],
    );
    // The only song with this word, older than all the others.
    const zephyr = await insertSong({ createdAt: new Date('2023-06-01T00:00:00Z'), lyrics: 'one quixotic zephyr' });
    await db.pool.query('analyze jobs');

    // Beyond the newest songs, the search is the trigram index's bitmap, whatever the planner thinks of the words.
    const newestSongs = await db.db.select({ id: jobs.id }).from(jobs).orderBy(desc(jobs.createdAt), desc(jobs.id)).limit(SEARCH_WINDOW);
    const step = new PgDialect().sqlToQuery(indexSearch({ guildId: GUILD, query: 'zephyr' }, 'older', newestSongs.at(-1)!.id, 11));
    // This guild is the whole table, so a sequential scan reads no more than the guild's index would: not so in a deployment.
    expect(await planOf(db.pool, step, ['set local enable_seqscan = off'])).toMatch(/Bitmap Index Scan on jobs_library_search_idx/);

    const rare = await libraryPage(db.db, { guildId: GUILD, query: 'Zephyr' });
    expect(rare).toMatchObject({ total: 1, totalCapped: false, before: 0, hasNewer: false, hasOlder: false });
    expect(rare.songs.map((job) => job.id)).toEqual([zephyr]);
    expect((await libraryPage(db.db, { guildId: GUILD, query: 'nowhere to be found' })).songs).toEqual([]);

    // A common word fills its page from the newest songs, and has no total.
    const common = await libraryPage(db.db, { guildId: GUILD, query: 'filler' });
    expect(common).toMatchObject({ total: undefined, before: 0, hasNewer: false, hasOlder: true });
    expect(common.songs).toHaveLength(10);

    // A search whose matches lie across the window: every page Older, then back Newer, exactly as the plain query orders them.
    const expected = (
      await db.pool.query<{ id: string }>(
        `select id from jobs where guild_id = $1 and request ->> 'prompt' like '%marker%' order by created_at desc, id desc`,
        [GUILD],
      )
    ).rows.map((row) => row.id);
    expect(expected.length).toBeGreaterThan(200);
    const pages = await walkOlder({ guildId: GUILD, query: 'MARKER' });
    expect(pages.flat()).toEqual(expected);
    const last = await libraryPage(db.db, { guildId: GUILD, query: 'marker' }, { direction: 'older', jobId: pages.at(-2)!.at(-1)! });
    expect(last).toMatchObject({ total: expected.length, before: (pages.length - 1) * 10, hasNewer: true, hasOlder: false });
    const back = await libraryPage(db.db, { guildId: GUILD, query: 'marker' }, { direction: 'newer', jobId: last.songs[0]!.id });
    expect(back.songs.map((job) => job.id)).toEqual(pages.at(-2));
    expect(back).toMatchObject({ total: undefined, before: (pages.length - 2) * 10, hasNewer: true, hasOlder: true });

    // Without a search, the total is counted up to the cap; the last page knows it exactly.
    expect(await libraryPage(db.db, { guildId: GUILD })).toMatchObject({ total: LIBRARY_COUNT_CAP, totalCapped: true, hasOlder: true });
    expect(await libraryPage(db.db, { guildId: GUILD, userId: BOB })).toMatchObject({ total: LIBRARY_COUNT_CAP, totalCapped: true });
    const oldest = await libraryPage(db.db, { guildId: GUILD }, { direction: 'newer', jobId: zephyr });
    expect(oldest).toMatchObject({ before: 20_001 - 11, total: LIBRARY_COUNT_CAP, totalCapped: true, hasOlder: true });
    const end = await libraryPage(db.db, { guildId: GUILD }, { direction: 'older', jobId: oldest.songs.at(-1)!.id });
    expect(end).toMatchObject({ songs: [expect.objectContaining({ id: zephyr })], before: 20_000, total: 20_001, totalCapped: false, hasOlder: false });

    // Beside 3,000 small guilds, a plan made without the guild's value assumes an average guild's
    // few songs: the index's search is planned for its values, in a transaction of its own.
    await db.pool.query(`insert into guilds (id) select '4' || lpad(g::text, 17, '0') from generate_series(1, 3000) as g`);
    await db.pool.query(
      `insert into jobs (guild_id, channel_id, user_id, kind, state, request, result, cost, webhook_secret, delivery_state, created_at)
       select '4' || lpad(g::text, 17, '0'), '300000000000000100', $1, 'song', 'succeeded', jsonb_build_object('kind', 'song', 'prompt', 'small ' || g || ' ' || k),
              jsonb_build_object('clips', jsonb_build_array(jsonb_build_object('title', 'Small ' || g))), 10, md5(g::text || k), 'delivered', timestamptz '2024-01-01' + k * interval '1 minute'
       from generate_series(1, 3000) as g, generate_series(1, 3) as k`,
      [ALICE],
    );
    await db.pool.query('analyze jobs');
    const recorded = connectDatabase(db.url, { max: 1 });
    const sent: string[] = [];
    observeStatements(recorded.pool, ({ text }) => sent.push(text));
    try {
      expect((await libraryPage(recorded.db, { guildId: GUILD, query: 'Zephyr' })).songs.map((job) => job.id)).toEqual([zephyr]);
      const search = sent.findIndex((text) => /offset 0\) as "jobs"/.test(text));
      expect(search).toBeGreaterThan(0);
      expect(sent.slice(0, search).reverse().find((text) => /plan_cache_mode|^begin|^savepoint/i.test(text))).toMatch(/set local plan_cache_mode = force_custom_plan/);
      // Planned for its values, the search is the index's bitmap.
      expect(await planOf(recorded.pool, step, ['set local plan_cache_mode = force_custom_plan'])).toMatch(/Bitmap Index Scan on jobs_library_search_idx/);
    } finally {
      await recorded.close();
    }
  }, 120_000);
});
