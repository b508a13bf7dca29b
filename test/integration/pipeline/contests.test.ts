/**
 * Contest entries and votes on a real Postgres: an entry is made once however often it comes
 * and on however many connections, a member's limit holds when two of their entries come at
 * once, votes are other members' likes given during the contest, and a hidden song leaves it.
 */
import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDatabase, type DatabaseHandle } from '../../../src/db/client.js';
import { contests, guilds, jobs, songLikes } from '../../../src/db/schema.js';
import { enterContest, enterableSongs, standings, standingsNow, type ContestRow } from '../../../src/pipeline/contests.js';
import { toggleLike } from '../../../src/pipeline/likes.js';
import { createTestDatabase, type TestDatabase } from '../../support/database.js';

let db: TestDatabase;
/** Another process's connections to the same database. */
let other: DatabaseHandle;
const startedAt = new Date('2026-11-29T12:00:00Z');
const during = new Date('2026-11-29T13:00:00Z');
const endsAt = new Date('2026-11-30T12:00:00Z');
let press = 1_300_000_000_000_000_000n;

beforeAll(async () => {
  db = await createTestDatabase();
  other = connectDatabase(db.url);
});
afterAll(async () => other?.close());

/** A guild of its own with a running contest. */
async function contestGuild(maxEntries = 3): Promise<{ guildId: string; contest: ContestRow }> {
  const guildId = String(200_000_000_000_000_000n + BigInt(Math.floor(Math.random() * 1e9)));
  await db.db.insert(guilds).values({ id: guildId, balance: 0 });
  const [contest] = await db.db
    .insert(contests)
    .values({ id: randomUUID(), guildId, channelId: '1', theme: 'Rain', startedBy: 'mod', startedAt, endsAt, maxEntries })
    .returning();
  return { guildId, contest: contest! };
}

async function song(guildId: string, userId: string, overrides: Partial<typeof jobs.$inferInsert> = {}): Promise<string> {
  const id = randomUUID();
  await db.db.insert(jobs).values({ id, guildId, channelId: '1', userId, kind: 'song', request: { kind: 'song', prompt: 'x', title: `song ${id.slice(0, 4)}` }, state: 'succeeded', cost: 10, createdAt: during, ...overrides });
  return id;
}

async function like(guildId: string, jobId: string, userId: string, at: Date): Promise<void> {
  await db.db.insert(songLikes).values({ jobId, userId, guildId, likedAt: at, lastPress: (press += 1_000n) });
}

describe('contest entries', () => {
  it('enter a song once when the same entry comes on two connections at once', async () => {
    const { guildId } = await contestGuild();
    const jobId = await song(guildId, 'alice');
    const input = { guildId, userId: 'alice', jobId };
    const outcomes = await Promise.all([enterContest(db.db, input, during), enterContest(other.db, input, during)]);
    expect(outcomes.map((o) => o.outcome).sort()).toEqual(['already', 'entered']);
    expect(await enterableSongs(db.db, guildId, 'alice')).toEqual([]);
  });

  it('hold the member’s limit when two of their songs come at once', async () => {
    const { guildId } = await contestGuild(1);
    const [first, second] = [await song(guildId, 'alice'), await song(guildId, 'alice')];
    const outcomes = await Promise.all([
      enterContest(db.db, { guildId, userId: 'alice', jobId: first }, during),
      enterContest(other.db, { guildId, userId: 'alice', jobId: second }, during),
    ]);
    expect(outcomes.map((o) => o.outcome).sort()).toEqual(['entered', 'limit']);
  });

  it('refuse another member’s song, a song made before the start, a hidden one, and any after the deadline', async () => {
    const { guildId } = await contestGuild();
    const bobs = await song(guildId, 'bob');
    const old = await song(guildId, 'alice', { createdAt: new Date('2026-11-28T12:00:00Z') });
    const hidden = await song(guildId, 'alice', { removedAt: during, removal: 'hidden' });
    const fresh = await song(guildId, 'alice');
    const enter = (jobId: string, at = during) => enterContest(db.db, { guildId, userId: 'alice', jobId }, at).then((o) => o.outcome);
    expect([await enter(bobs), await enter(old), await enter(hidden)]).toEqual(['not_yours', 'too_early', 'not_yours']);
    expect(await enter(fresh, endsAt)).toBe('closed');
    expect((await enterableSongs(db.db, guildId, 'alice')).map((job) => job.id)).toEqual([fresh]);
  });
});

describe('contest standings', () => {
  it('count other members’ likes during the contest as votes, and leave out a song hidden since', async () => {
    const { guildId, contest } = await contestGuild();
    const [alices, bobs, carols] = [await song(guildId, 'alice'), await song(guildId, 'bob'), await song(guildId, 'carol')];
    for (const [jobId, userId] of [[alices, 'alice'], [bobs, 'bob'], [carols, 'carol']] as const) {
      expect((await enterContest(db.db, { guildId, userId, jobId }, during)).outcome).toBe('entered');
    }
    // Alice likes her own entry (no vote), Dave likes it during the contest (a vote).
    await like(guildId, alices, 'alice', during);
    await like(guildId, alices, 'dave', during);
    // Bob's: two votes during, one like after the end and one before the start that count for nothing.
    await like(guildId, bobs, 'dave', during);
    await like(guildId, bobs, 'erin', during);
    await like(guildId, bobs, 'frank', new Date(endsAt.getTime() + 1_000));
    await like(guildId, bobs, 'gina', new Date(startedAt.getTime() - 1_000));
    // Carol's would lead, but a moderator hid it.
    for (const userId of ['h1', 'h2', 'h3']) await like(guildId, carols, userId, during);

    const votes = async () => {
      const { entries, top } = await standings(db.db, contest, endsAt);
      return { entries, top: top.map(({ job, votes }) => [job.userId, votes]) };
    };
    expect(await votes()).toEqual({ entries: 3, top: [['carol', 3], ['bob', 2], ['alice', 1]] });
    await db.db.update(jobs).set({ removedAt: during, removal: 'hidden' }).where(eq(jobs.id, carols));
    expect(await votes()).toEqual({ entries: 2, top: [['bob', 2], ['alice', 1]] });
  });

  it('before the deadline, read from the songs’ like counts, are the votes counted from the likes', async () => {
    const { guildId, contest } = await contestGuild();
    const [alices, bobs, carols] = [await song(guildId, 'alice'), await song(guildId, 'bob'), await song(guildId, 'carol')];
    for (const [jobId, userId] of [[alices, 'alice'], [bobs, 'bob'], [carols, 'carol']] as const) {
      expect((await enterContest(db.db, { guildId, userId, jobId }, during)).outcome).toBe('entered');
    }
    // As members press Like: Alice likes her own entry, Dave likes it and takes it back, Erin and Frank like Bob's.
    const presses: Array<[string, string]> = [[alices, 'alice'], [alices, 'dave'], [bobs, 'erin'], [bobs, 'frank'], [alices, 'dave'], [carols, 'erin']];
    for (const [jobId, userId] of presses) expect((await toggleLike(db.db, { guildId, jobId, userId, pressId: String((press += 1_000n)) }, during)).outcome).toBe('toggled');
    const later = new Date(during.getTime() + 60_000);
    const votes = async (read: typeof standings) => {
      const { entries, top } = await read(db.db, contest, later);
      return { entries, top: top.map(({ job, votes }) => [job.userId, votes]) };
    };
    const expected = { entries: 3, top: [['bob', 2], ['carol', 1], ['alice', 0]] };
    expect(await votes(standings)).toEqual(expected);
    expect(await votes(standingsNow)).toEqual(expected);
    // Past the deadline, before its end was taken: a like given after it is no vote.
    await toggleLike(db.db, { guildId, jobId: alices, userId: 'gina', pressId: String((press += 1_000n)) }, new Date(endsAt.getTime() + 1_000));
    const { top } = await standingsNow(db.db, contest, new Date(endsAt.getTime() + 2_000));
    expect(top.map(({ job, votes }) => [job.userId, votes])).toEqual([['bob', 2], ['carol', 1], ['alice', 0]]);
  });
});
