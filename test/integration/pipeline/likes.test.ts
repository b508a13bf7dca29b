/**
 * Likes on a real Postgres: a press toggles a member's like once, however many connections
 * (processes) apply it together; the song's count always equals its likes; a press older than
 * the last one applied changes nothing; a hidden song is not liked.
 */
import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDatabase, type DatabaseHandle } from '../../../src/db/client.js';
import { guilds, jobs } from '../../../src/db/schema.js';
import { countLikes, toggleLike, type LikePress } from '../../../src/pipeline/likes.js';
import { createTestDatabase, type TestDatabase } from '../../support/database.js';

let db: TestDatabase;
/** Another process's connections to the same database. */
let other: DatabaseHandle;
const guildId = '200000000000000001';
const now = new Date('2026-11-29T12:00:00Z');
/** Interaction ids as Discord makes them: snowflakes, growing with time. */
let press = 1_300_000_000_000_000_000n;
const nextPress = () => String((press += 1_000n));

beforeAll(async () => {
  db = await createTestDatabase();
  other = connectDatabase(db.url);
  await db.db.insert(guilds).values({ id: guildId, balance: 0 });
});
afterAll(async () => other?.close());

async function song(overrides: Partial<typeof jobs.$inferInsert> = {}): Promise<string> {
  const id = randomUUID();
  await db.db.insert(jobs).values({ id, guildId, channelId: '1', userId: '2', kind: 'song', request: { kind: 'song', prompt: 'x' }, state: 'succeeded', cost: 10, ...overrides });
  return id;
}

async function likeCount(jobId: string): Promise<number> {
  const [row] = await db.db.select({ n: jobs.likeCount }).from(jobs).where(eq(jobs.id, jobId));
  return row!.n;
}

describe('toggleLike', () => {
  it('likes once per member and takes the like back on the next press', async () => {
    const jobId = await song();
    const of = (userId: string): LikePress => ({ guildId, jobId, userId, pressId: nextPress() });
    expect(await toggleLike(db.db, of('alice'), now)).toMatchObject({ outcome: 'toggled', liked: true, likes: 1 });
    expect(await toggleLike(db.db, of('bob'), now)).toMatchObject({ outcome: 'toggled', liked: true, likes: 2 });
    expect(await toggleLike(db.db, of('alice'), now)).toMatchObject({ outcome: 'toggled', liked: false, likes: 1 });
    expect(await toggleLike(db.db, of('alice'), now)).toMatchObject({ outcome: 'toggled', liked: true, likes: 2 });
    expect([await likeCount(jobId), await countLikes(db.db, jobId)]).toEqual([2, 2]);
  });

  it('applies one press once when two connections apply it together, and a repeat later changes nothing', async () => {
    const jobId = await song();
    const one: LikePress = { guildId, jobId, userId: 'carol', pressId: nextPress() };
    const outcomes = await Promise.all([toggleLike(db.db, one, now), toggleLike(other.db, one, now)]);
    expect(outcomes.map((o) => o.outcome).sort()).toEqual(['repeated', 'toggled']);
    expect(await toggleLike(other.db, one, now)).toEqual({ outcome: 'repeated' });
    expect([await likeCount(jobId), await countLikes(db.db, jobId)]).toEqual([1, 1]);
  });

  it('counts every member of a crowd pressing at once on two connections, each once', async () => {
    const jobId = await song();
    const presses = Array.from({ length: 40 }, (_, n): LikePress => ({ guildId, jobId, userId: `member-${n}`, pressId: nextPress() }));
    // Every press sent on both connections at the same time, as two gateways would.
    const outcomes = await Promise.all(presses.flatMap((p) => [toggleLike(db.db, p, now), toggleLike(other.db, p, now)]));
    expect(outcomes.filter((o) => o.outcome === 'toggled')).toHaveLength(40);
    expect(outcomes.filter((o) => o.outcome === 'repeated')).toHaveLength(40);
    expect([await likeCount(jobId), await countLikes(db.db, jobId)]).toEqual([40, 40]);
  });

  it('leaves a newer press standing when an older one arrives after it', async () => {
    const jobId = await song();
    const older = nextPress();
    const newer = nextPress();
    expect(await toggleLike(db.db, { guildId, jobId, userId: 'dave', pressId: newer }, now)).toMatchObject({ outcome: 'toggled', liked: true });
    expect(await toggleLike(db.db, { guildId, jobId, userId: 'dave', pressId: older }, now)).toMatchObject({ outcome: 'outdated', liked: true, likes: 1 });
    expect(await likeCount(jobId)).toBe(1);
  });

  it('likes no hidden song, no song of another guild, and nothing but songs', async () => {
    const hidden = await song({ removedAt: now, removal: 'hidden', removedBy: 'a moderator' });
    const lyrics = await song({ kind: 'lyrics', request: { kind: 'lyrics', prompt: 'x' } });
    const running = await song({ state: 'submitted' });
    const shown = await song();
    for (const jobId of [hidden, lyrics, running]) {
      expect(await toggleLike(db.db, { guildId, jobId, userId: 'erin', pressId: nextPress() }, now)).toEqual({ outcome: 'not_likeable' });
    }
    expect(await toggleLike(db.db, { guildId: '200000000000000009', jobId: shown, userId: 'erin', pressId: nextPress() }, now)).toEqual({ outcome: 'not_likeable' });
    expect(await toggleLike(db.db, { guildId, jobId: randomUUID(), userId: 'erin', pressId: nextPress() }, now)).toEqual({ outcome: 'not_likeable' });
    for (const jobId of [hidden, lyrics, running, shown]) expect(await countLikes(db.db, jobId)).toBe(0);
  });
});
