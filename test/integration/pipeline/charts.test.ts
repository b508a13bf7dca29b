/**
 * The charts on a real Postgres: likes move the summaries in their own transaction (a like
 * taken back leaves the week it was made in), plays count once per playback however often and
 * from however many connections they are recorded, a remix counts for its source when it
 * succeeds, hidden songs leave the charts, and each song's movement compares with the period before.
 */
import { randomUUID } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { connectDatabase } from '../../../src/db/client.js';
import { guilds, jobs } from '../../../src/db/schema.js';
import { countRemix, readChart, recordPlay, type ChartMetric, type ChartPeriod } from '../../../src/pipeline/charts.js';
import { toggleLike } from '../../../src/pipeline/likes.js';
import { createTestDatabase, type TestDatabase } from '../../support/database.js';

let db: TestDatabase;
/** A Sunday: its week began on Monday 2026-11-23. */
const now = new Date('2026-11-29T12:00:00Z');
const lastWeek = new Date('2026-11-18T12:00:00Z');
let press = 1_400_000_000_000_000_000n;
const nextPress = () => String((press += 1_000n));

beforeAll(async () => {
  db = await createTestDatabase();
});

async function newGuild(): Promise<string> {
  const id = String(300_000_000_000_000_000n + BigInt(Math.floor(Math.random() * 1e12)));
  await db.db.insert(guilds).values({ id, balance: 0 });
  return id;
}

async function song(guildId: string, title: string, overrides: Partial<typeof jobs.$inferInsert> = {}): Promise<string> {
  const id = randomUUID();
  await db.db.insert(jobs).values({ id, guildId, channelId: '1', userId: `maker-${title}`, kind: 'song', request: { kind: 'song', prompt: 'x', title }, state: 'succeeded', cost: 10, ...overrides });
  return id;
}

async function like(guildId: string, jobId: string, userId: string, at = now): Promise<void> {
  const outcome = await toggleLike(db.db, { guildId, jobId, userId, pressId: nextPress() }, at);
  expect(outcome.outcome).toBe('toggled');
}

const chart = async (guildId: string, period: ChartPeriod = 'week', metric: ChartMetric = 'likes', at = now) =>
  (await readChart(db.db, { guildId, period, metric, now: at })).map((entry) => [entry.song.request['title'], entry.count, entry.movement]);

describe('the likes chart', () => {
  it('ranks the songs by likes this week, and a like taken back leaves it', async () => {
    const guildId = await newGuild();
    const [a, b] = [await song(guildId, 'A'), await song(guildId, 'B')];
    await like(guildId, a, 'u1');
    await like(guildId, b, 'u1');
    await like(guildId, b, 'u2');
    expect(await chart(guildId)).toEqual([
      ['B', 2, { kind: 'new' }],
      ['A', 1, { kind: 'new' }],
    ]);
    await like(guildId, b, 'u1');
    await like(guildId, b, 'u2');
    expect(await chart(guildId)).toEqual([['A', 1, { kind: 'new' }]]);
  });

  it('takes a like made last week back from last week, not from this one', async () => {
    const guildId = await newGuild();
    const a = await song(guildId, 'A');
    await like(guildId, a, 'u1', lastWeek);
    await like(guildId, a, 'u2', now);
    expect(await chart(guildId)).toEqual([['A', 1, { kind: 'same' }]]);
    expect(await chart(guildId, 'week', 'likes', lastWeek)).toEqual([['A', 1, { kind: 'new' }]]);
    await like(guildId, a, 'u1', now);
    expect(await chart(guildId, 'week', 'likes', lastWeek)).toEqual([]);
    expect(await chart(guildId)).toEqual([['A', 1, { kind: 'new' }]]);
    expect(await chart(guildId, 'all')).toEqual([['A', 1, { kind: 'new' }]]);
  });

  it('shows each song’s movement since last week, and for all time since this week began', async () => {
    const guildId = await newGuild();
    const [a, b, c] = [await song(guildId, 'A'), await song(guildId, 'B'), await song(guildId, 'C')];
    // Last week: A 3, B 2, C 1.
    for (const user of ['u1', 'u2', 'u3']) await like(guildId, a, user, lastWeek);
    for (const user of ['u1', 'u2']) await like(guildId, b, user, lastWeek);
    await like(guildId, c, 'u1', lastWeek);
    // This week: C 3, A 1; B none.
    for (const user of ['u4', 'u5', 'u6']) await like(guildId, c, user);
    await like(guildId, a, 'u4');
    expect(await chart(guildId)).toEqual([
      ['C', 3, { kind: 'up', by: 2 }],
      ['A', 1, { kind: 'down', by: 1 }],
    ]);
    // All time: C 4, A 4, B 2; before this week A 3, B 2, C 1. Ties by job id.
    const all = await chart(guildId, 'all');
    const cFirst = c < a;
    expect(all).toEqual([
      ...(cFirst ? [['C', 4, { kind: 'up', by: 2 }], ['A', 4, { kind: 'down', by: 1 }]] : [['A', 4, { kind: 'same' }], ['C', 4, { kind: 'up', by: 1 }]]),
      ['B', 2, { kind: 'down', by: 1 }],
    ]);
  });

  it('leaves out a hidden or deleted song, and puts nothing of another guild in', async () => {
    const guildId = await newGuild();
    const other = await newGuild();
    const [a, b] = [await song(guildId, 'A'), await song(guildId, 'B')];
    await like(guildId, a, 'u1');
    await like(guildId, b, 'u1');
    await like(other, await song(other, 'Elsewhere'), 'u1');
    await db.db.update(jobs).set({ removedAt: now, removal: 'hidden', removedBy: 'mod' }).where(eq(jobs.id, a));
    expect(await chart(guildId)).toEqual([['B', 1, { kind: 'new' }]]);
  });
});

describe('the plays chart', () => {
  it('counts a playback once, however often and from however many connections it is recorded', async () => {
    const guildId = await newGuild();
    const [a, b] = [await song(guildId, 'A'), await song(guildId, 'B')];
    const other = connectDatabase(db.url);
    try {
      const once = { playKey: randomUUID(), guildId, jobId: a, heardMs: 60_000, at: now };
      const recorded = await Promise.all([recordPlay(db.db, once), recordPlay(other.db, once), recordPlay(db.db, once)]);
      expect(recorded.filter(Boolean)).toHaveLength(1);
      await recordPlay(db.db, { ...once, playKey: randomUUID() });
      await recordPlay(db.db, { ...once, playKey: randomUUID(), jobId: b });
    } finally {
      await other.close();
    }
    expect(await chart(guildId, 'week', 'plays')).toEqual([
      ['A', 2, { kind: 'new' }],
      ['B', 1, { kind: 'new' }],
    ]);
    expect(await chart(guildId, 'month', 'plays')).toHaveLength(2);
  });
});

describe('the remixes chart', () => {
  it('counts a finished remix for the song it was made from', async () => {
    const guildId = await newGuild();
    const source = await song(guildId, 'Source');
    await countRemix(db.db, { kind: 'song', guildId, parentJobId: source }, now);
    await countRemix(db.db, { kind: 'video', guildId, parentJobId: source }, now);
    expect(await chart(guildId, 'week', 'remixes')).toEqual([['Source', 1, { kind: 'new' }]]);
  });
});

describe('the summaries', () => {
  it('stay equal to the likes they sum', async () => {
    const guildId = await newGuild();
    const songs = [await song(guildId, 'A'), await song(guildId, 'B')];
    for (let i = 0; i < 30; i += 1) await like(guildId, songs[i % 2]!, `u${i % 7}`, i % 3 === 0 ? lastWeek : now);
    const { rows } = await db.db.execute<{ job_id: string; summed: number; counted: number }>(sql`
      select c.job_id, c.count as summed, (select count(*)::int from song_likes l where l.job_id = c.job_id and l.liked_at is not null) as counted
      from chart_counts c where c.guild_id = ${guildId} and c.metric = 'likes' and c.period = 'all'`);
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(row.summed).toBe(row.counted);
  });
});
