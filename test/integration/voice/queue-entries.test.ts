/**
 * What the player takes next from a guild's queue: a song hidden by a moderator or deleted by its
 * requester after it was queued is dropped, and the one after it plays.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureGuild } from '../../../src/credits/index.js';
import { jobs } from '../../../src/db/schema.js';
import { removeResultRow } from '../../../src/pipeline/job-rows.js';
import { entryOf, nextEntry } from '../../../src/voice/library-entries.js';
import { createPlayerStore, type PlayerState } from '../../../src/voice/store.js';
import { createTestDatabase, testRedis, type TestDatabase } from '../../support/database.js';

const GUILD = '310000000000000001';
const { url, prefix } = testRedis();
const redis = new Redis(url, { maxRetriesPerRequest: null });
let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
  await ensureGuild(db.db, GUILD, { startingCredits: 0 });
});
afterAll(async () => {
  await redis.quit();
  await db?.close();
});

async function insertSong(title: string) {
  const [row] = await db.db
    .insert(jobs)
    .values({
      id: randomUUID(),
      guildId: GUILD,
      channelId: '310000000000000100',
      userId: '310000000000000011',
      kind: 'song',
      state: 'succeeded',
      request: { kind: 'song', prompt: title },
      result: { clips: [{ clipId: `clip-${title}`, title, audioUrl: `https://cdn.example/${randomBytes(4).toString('hex')}.mp3` }] },
      cost: 10,
      deliveryState: 'delivered',
      completedAt: new Date(),
    })
    .returning();
  return row!;
}

const idle: PlayerState = { voiceChannelId: '310000000000000200', textChannelId: '310000000000000100', guildLocale: 'en', nowPlayingMessageId: null, current: null, paused: false, radio: null, stay: false };

describe('the next song of the queue', () => {
  it('skips songs removed since they were queued', async () => {
    const store = createPlayerStore(redis, prefix);
    const [first, hidden, deleted, last] = await Promise.all(['First', 'Hidden', 'Deleted', 'Last'].map(insertSong));
    await store.enqueue(GUILD, ...[first!, hidden!, deleted!, last!].map((job) => entryOf(job, '310000000000000012')!));
    await removeResultRow(db.db, hidden!.id, { removal: 'hidden', by: '310000000000000013', at: new Date() });
    await removeResultRow(db.db, deleted!.id, { removal: 'deleted', by: '310000000000000011', at: new Date() });

    expect((await nextEntry(store, db.db, GUILD, idle))?.title).toBe('First');
    expect((await nextEntry(store, db.db, GUILD, idle))?.title).toBe('Last');
    expect(await nextEntry(store, db.db, GUILD, idle)).toBeUndefined();
  });
});
