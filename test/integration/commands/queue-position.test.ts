/**
 * A request that waits behind others is told where it stands: `/song` and `/lyrics` count the
 * jobs of their task type waiting in the queue in the same read as the guild's row (no query
 * of their own), and the private acknowledgement says the position. That count stops at
 * FIRST_ANSWER_COUNT_LIMIT, so a backlog costs each command the same: beyond, the position reads
 * "100+". The pipeline's own count (progress edits, /jobs show) goes on to QUEUE_COUNT_LIMIT.
 */
import { randomUUID } from 'node:crypto';
import { and, eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { jobs } from '../../../src/db/schema.js';
import { FIRST_ANSWER_COUNT_LIMIT, QUEUE_COUNT_LIMIT, queuePositionOf } from '../../../src/pipeline/job-rows.js';
import { privateAnswer, startBot, type BotHarness } from './harness.js';

let h: BotHarness;

beforeAll(async () => {
  h = await startBot({ startingCredits: 500 });
});
afterAll(async () => h?.close());

/** Jobs of `kind` that wait in the queue: rows only, with no queue entry, so no worker takes them. */
async function waiting(kind: 'song' | 'lyrics', count: number): Promise<() => Promise<void>> {
  await h.balance();
  // An earlier test's request of this kind may still wait for a worker (background work goes
  // after the members' commands): the count starts once the queue has none.
  await vi.waitFor(async () => expect(await h.db.db.$count(jobs, and(eq(jobs.kind, kind), eq(jobs.state, 'queued')))).toBe(0), { timeout: 15_000 });
  const ids = Array.from({ length: count }, () => randomUUID());
  await h.db.db.insert(jobs).values(
    ids.map((id) => ({ id, guildId: h.guild.id, channelId: 'elsewhere', userId: 'someone', kind, request: { kind, prompt: 'waiting' }, cost: 0, webhookSecret: 'x' })),
  );
  return async () => void (await h.db.db.delete(jobs).where(inArray(jobs.id, ids)));
}

describe('the queue position', () => {
  it('is told to a song that waits behind two others, and not to lyrics, whose queue is empty', async () => {
    const removeSongs = await waiting('song', 2);
    try {
      const song = await privateAnswer(h.run(h.members.alice, { name: 'song', options: { prompt: 'third in line' } }));
      expect(song.content).toContain('Position 3 in the queue.');
      const lyrics = await privateAnswer(h.run(h.members.bob, { name: 'lyrics', options: { prompt: 'first in line' } }));
      expect(lyrics.content).not.toContain('Position');
    } finally {
      await removeSongs();
    }
  }, 30_000);

  it('counts lyrics apart from songs', async () => {
    const removeLyrics = await waiting('lyrics', 1);
    try {
      const lyrics = await privateAnswer(h.run(h.members.manager, { name: 'lyrics', options: { prompt: 'second in line' } }));
      expect(lyrics.content).toContain('Position 2 in the queue.');
    } finally {
      await removeLyrics();
    }
  }, 30_000);

  it('stops counting at the limit: behind a backlog the answer says 100+, and the pipeline counts on to 1000', async () => {
    const removeSongs = await waiting('song', QUEUE_COUNT_LIMIT + 5);
    try {
      const song = await privateAnswer(h.run(h.members.alice, { name: 'song', options: { prompt: 'behind a backlog' } }));
      expect(song.content).toContain(`Position ${FIRST_ANSWER_COUNT_LIMIT}+ in the queue.`);
      // The pipeline's own count (progress edits, /jobs show) stops further on.
      const behindAll = { id: randomUUID(), kind: 'song' as const, state: 'queued' as const, createdAt: new Date(Date.now() + 60_000) };
      expect(await queuePositionOf(h.db.db, behindAll)).toBe(QUEUE_COUNT_LIMIT + 1);
    } finally {
      await removeSongs();
    }
  }, 30_000);
});
