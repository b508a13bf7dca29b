/**
 * Claiming a queued job for submission under the in-flight cap. Claims take turns
 * under the task type's lock inside Postgres; a process sends them a few at a time
 * (`CLAIMS_AT_ONCE`), so that a crowd of submissions waiting for that lock never holds the
 * whole pool. Seen from outside: exactly `cap` of many racing claims win, and a claim that fails
 * gives its turn to the next.
 */
import { randomUUID } from 'node:crypto';
import { eq, inArray } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/client.js';
import { jobs } from '../../../src/db/schema.js';
import { CLAIMS_AT_ONCE, claimSubmission, takeForSubmission } from '../../../src/pipeline/job-rows.js';
import { createTestDatabase } from '../../support/database.js';
import { guildWith } from '../credits/support.js';

const test = await createTestDatabase();
const db = test.db;

/** The database, counting how many statements it has in hand at once. */
function watched(database: Database) {
  const seen = { active: 0, most: 0 };
  const proxy = new Proxy(database, {
    get(target, property, receiver) {
      if (property !== 'execute') return Reflect.get(target, property, receiver) as unknown;
      return async (...args: Parameters<Database['execute']>) => {
        seen.active += 1;
        seen.most = Math.max(seen.most, seen.active);
        try {
          return await target.execute(...args);
        } finally {
          seen.active -= 1;
        }
      };
    },
  });
  return { db: proxy, seen };
}

async function queuedSongs(count: number): Promise<Array<{ id: string; kind: 'song' }>> {
  const guildId = await guildWith(db, 0);
  const rows = Array.from({ length: count }, () => ({
    id: randomUUID(),
    guildId,
    channelId: 'c',
    userId: 'u',
    kind: 'song' as const,
    request: { kind: 'song', prompt: 'claim me' },
    cost: 0,
    webhookSecret: 's',
  }));
  await db.insert(jobs).values(rows);
  return rows.map(({ id }) => ({ id, kind: 'song' }));
}

afterEach(async () => {
  await db.delete(jobs).where(inArray(jobs.state, ['queued', 'submitting', 'submitted']));
});

describe('claims under the in-flight cap', () => {
  it('let exactly `cap` of 24 racing claims win, sending at most CLAIMS_AT_ONCE to Postgres at a time', async () => {
    const songs = await queuedSongs(24);
    const { db: counting, seen } = watched(db);
    const outcomes = await Promise.all(songs.map((song) => claimSubmission(counting, song, 5)));
    expect(outcomes.filter((outcome) => outcome === 'claimed')).toHaveLength(5);
    expect(outcomes.filter((outcome) => outcome === 'cap_reached')).toHaveLength(19);
    expect(await db.$count(jobs, eq(jobs.state, 'submitting'))).toBe(5);
    // They did overlap, up to the limit and no further.
    expect(seen.most).toBe(CLAIMS_AT_ONCE);
  });

  it('passes the turn on when a claim fails, so the claims behind it still run', async () => {
    const songs = await queuedSongs(6);
    const broken = Array.from({ length: 2 * CLAIMS_AT_ONCE }, () => ({ id: 'not-a-uuid', kind: 'song' as const }));
    const results = await Promise.allSettled([...broken, ...songs].map((job) => claimSubmission(db, job, 100)));
    expect(results.slice(0, broken.length).every((result) => result.status === 'rejected')).toBe(true);
    expect(results.slice(broken.length).map((result) => (result.status === 'fulfilled' ? result.value : 'rejected'))).toEqual(Array(6).fill('claimed'));
  });

  it("a worker's read and claim are one: the row as read, and the claim only when it was queued", async () => {
    const [song, other] = await queuedSongs(2);
    const taken = await takeForSubmission(db, song!.id, 10);
    expect(taken).toMatchObject({ outcome: 'claimed', job: { id: song!.id, kind: 'song', state: 'queued', request: { prompt: 'claim me' } } });
    expect(taken!.job.createdAt).toBeInstanceOf(Date);
    expect(await db.$count(jobs, eq(jobs.state, 'submitting'))).toBe(1);
    // Not queued any more: its row, and no claim tried.
    expect(await takeForSubmission(db, song!.id, 10)).toMatchObject({ outcome: null, job: { state: 'submitting', submitAttempts: 1 } });
    // The task type's cap counts the first one.
    expect(await takeForSubmission(db, other!.id, 1)).toMatchObject({ outcome: 'cap_reached', job: { state: 'queued' } });
    expect(await takeForSubmission(db, randomUUID(), 10)).toBeUndefined();
  });

  it('answers not_queued for a job another claim already took', async () => {
    const [song] = await queuedSongs(1);
    expect(await claimSubmission(db, song!, 10)).toBe('claimed');
    expect(await claimSubmission(db, song!, 10)).toBe('not_queued');
  });
});
