import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  CreditsError,
  ensureGuild,
  getBalance,
  ledgerKeys,
  reserveForJob,
  returnJobCredits,
  setFrozen,
} from '../../../src/credits/index.js';
import { connectDatabase } from '../../../src/db/client.js';
import { jobs } from '../../../src/db/schema.js';
import { createTestDatabase } from '../../support/database.js';
import { balanceOf, expectConsistent, guildWith, ledgerOf, newGuildId } from './support.js';

const db = await createTestDatabase();

describe('reserveForJob and returnJobCredits', () => {
  it('charges a job once and gives it back once', async () => {
    const guildId = await guildWith(db.db, 100);
    const jobId = randomUUID();

    const reserved = await reserveForJob(db.db, { guildId, jobId, userId: 'user-1', amount: 30 });
    expect(reserved).toEqual({ ok: true, balance: 70, replayed: false });

    const returned = await returnJobCredits(db.db, { jobId, kind: 'refund', reason: 'upstream failed' });
    expect(returned).toEqual({ returned: 30, balance: 100 });

    const rows = await ledgerOf(db.db, guildId);
    expect(rows.map((row) => [row.key, row.kind, row.amount, row.balanceAfter, row.userId, row.jobId])).toEqual([
      [ledgerKeys.startingCredits(guildId), 'grant', 100, 100, null, null],
      [`job:${jobId}:debit`, 'reserve', -30, 70, 'user-1', jobId],
      [`job:${jobId}:credit`, 'refund', 30, 100, 'user-1', jobId],
    ]);
    expect(rows[2]?.reason).toBe('upstream failed');
    await expectConsistent(db.db, guildId);
  });

  it('credits a job back once when both release and refund are attempted, in sequence or at once', async () => {
    const guildId = await guildWith(db.db, 50);
    const sequential = randomUUID();
    const parallel = randomUUID();
    await reserveForJob(db.db, { guildId, jobId: sequential, userId: 'u', amount: 10 });
    await reserveForJob(db.db, { guildId, jobId: parallel, userId: 'u', amount: 10 });
    expect(await balanceOf(db.db, guildId)).toBe(30);

    const first = await returnJobCredits(db.db, { jobId: sequential, kind: 'release', reason: 'rejected at submission' });
    const second = await returnJobCredits(db.db, { jobId: sequential, kind: 'refund', reason: 'deadline passed' });
    expect(first).toEqual({ returned: 10, balance: 40 });
    expect(second).toEqual({ returned: 0, balance: 40 });

    const racing = await Promise.all([
      returnJobCredits(db.db, { jobId: parallel, kind: 'release', reason: 'a' }),
      returnJobCredits(db.db, { jobId: parallel, kind: 'refund', reason: 'b' }),
      returnJobCredits(db.db, { jobId: parallel, kind: 'refund', reason: 'c' }),
    ]);
    expect(racing.map((result) => result.returned).sort()).toEqual([0, 0, 10]);

    expect(await balanceOf(db.db, guildId)).toBe(50);
    const credits = (await ledgerOf(db.db, guildId)).filter((row) => row.kind === 'release' || row.kind === 'refund');
    expect(credits.map((row) => [row.jobId, row.amount])).toEqual(
      expect.arrayContaining([
        [sequential, 10],
        [parallel, 10],
      ]),
    );
    expect(credits).toHaveLength(2);
    expect(credits.find((row) => row.jobId === sequential)?.kind).toBe('release');
    await expectConsistent(db.db, guildId);
  });

  it('returns nothing for a job that was never charged', async () => {
    const guildId = await guildWith(db.db, 5);
    expect(await returnJobCredits(db.db, { jobId: randomUUID(), kind: 'refund', reason: 'x' })).toEqual({
      returned: 0,
      balance: null,
    });
    expect(await ledgerOf(db.db, guildId)).toHaveLength(1);
  });

  it('charges a retried reservation of the same job once, also when the retries race', async () => {
    const guildId = await guildWith(db.db, 100);
    const jobId = randomUUID();
    const input = { guildId, jobId, userId: 'u', amount: 25 };

    expect(await reserveForJob(db.db, input)).toEqual({ ok: true, balance: 75, replayed: false });
    expect(await reserveForJob(db.db, input)).toEqual({ ok: true, balance: 75, replayed: true });

    const racingJob = randomUUID();
    const racing = await Promise.all(
      Array.from({ length: 8 }, () => reserveForJob(db.db, { ...input, jobId: racingJob })),
    );
    expect(racing.every((result) => result.ok)).toBe(true);
    expect(racing.filter((result) => result.ok && !result.replayed)).toHaveLength(1);

    expect(await balanceOf(db.db, guildId)).toBe(50);
    const debits = (await ledgerOf(db.db, guildId)).filter((row) => row.kind === 'reserve');
    expect(debits.map((row) => row.jobId).sort()).toEqual([jobId, racingJob].sort());
    await expectConsistent(db.db, guildId);
  });

  it("charges a job once when retries race inside callers' transactions, and each caller's transaction goes on", async () => {
    const guildId = await guildWith(db.db, 100);
    const jobId = randomUUID();
    const wide = connectDatabase(db.url, { max: 8 });
    try {
      const results = await Promise.all(
        Array.from({ length: 8 }, () =>
          wide.db.transaction(async (tx) => {
            const reserved = await reserveForJob(tx, { guildId, jobId, userId: 'u', amount: 30 });
            // The losers' transactions are not aborted: they can still read and write.
            return { reserved, balance: await getBalance(tx, guildId) };
          }),
        ),
      );
      expect(results.filter(({ reserved }) => reserved.ok && !reserved.replayed)).toHaveLength(1);
      expect(results.every(({ reserved, balance }) => reserved.ok && reserved.balance === 70 && balance === 70)).toBe(true);
    } finally {
      await wide.close();
    }
    expect(await balanceOf(db.db, guildId)).toBe(70);
    await expectConsistent(db.db, guildId);
  });

  it('refuses a retried job id with a different amount instead of pretending it was charged', async () => {
    const guildId = await guildWith(db.db, 100);
    const jobId = randomUUID();
    await reserveForJob(db.db, { guildId, jobId, userId: 'u', amount: 10 });
    await expect(reserveForJob(db.db, { guildId, jobId, userId: 'u', amount: 20 })).rejects.toMatchObject({
      name: 'CreditsError',
      reason: 'key_conflict',
    });
    expect(await balanceOf(db.db, guildId)).toBe(90);
  });

  it('accepts exactly as many of 100 concurrent reservations as the balance pays for', async () => {
    const guildId = await guildWith(db.db, 100);
    // Each reservation in its own transaction on its own connection, all at once.
    const wide = connectDatabase(db.url, { max: 100 });
    try {
      const results = await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          wide.db.transaction((tx) =>
            reserveForJob(tx, { guildId, jobId: randomUUID(), userId: `user-${i % 7}`, amount: 10 }),
          ),
        ),
      );
      const accepted = results.filter((result) => result.ok);
      const refused = results.filter((result) => !result.ok);
      expect(accepted).toHaveLength(10);
      expect(refused).toHaveLength(90);
      expect(refused.every((result) => !result.ok && result.reason === 'insufficient_credits')).toBe(true);
      expect(results.every((result) => result.balance >= 0)).toBe(true);
    } finally {
      await wide.close();
    }

    expect(await balanceOf(db.db, guildId)).toBe(0);
    const debits = (await ledgerOf(db.db, guildId)).filter((row) => row.kind === 'reserve');
    // Serialised on the guild's row: each accepted charge saw the one before it.
    expect(debits.map((row) => row.balanceAfter).sort((a, b) => a - b)).toEqual([0, 10, 20, 30, 40, 50, 60, 70, 80, 90]);
    await expectConsistent(db.db, guildId);
  });

  it('takes concurrent reservations whose transactions first wrote a row referencing the guild, as a request does', async () => {
    const guildId = await guildWith(db.db, 200);
    const wide = connectDatabase(db.url, { max: 40 });
    try {
      const results = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          wide.db.transaction(async (tx) => {
            // The job row's foreign key holds a key-share lock on the guild until commit.
            const jobId = randomUUID();
            await tx.insert(jobs).values({ id: jobId, guildId, channelId: 'c', userId: `user-${i}`, kind: 'song', request: {}, cost: 10, webhookSecret: 's' });
            return reserveForJob(tx, { guildId, jobId, userId: `user-${i}`, amount: 10 });
          }),
        ),
      );
      expect(results.filter((result) => result.ok)).toHaveLength(20);
    } finally {
      await wide.close();
    }
    expect(await balanceOf(db.db, guildId)).toBe(0);
    await expectConsistent(db.db, guildId);
  });

  it('refuses a frozen guild and an unknown one, and refuses more than the balance', async () => {
    const guildId = await guildWith(db.db, 100);
    await setFrozen(db.db, { guildId, frozen: true, actorId: 'mod' });
    expect(await reserveForJob(db.db, { guildId, jobId: randomUUID(), userId: 'u', amount: 10 })).toEqual({
      ok: false,
      reason: 'frozen',
      balance: 100,
    });
    await setFrozen(db.db, { guildId, frozen: false, actorId: 'mod' });
    expect(await reserveForJob(db.db, { guildId, jobId: randomUUID(), userId: 'u', amount: 101 })).toEqual({
      ok: false,
      reason: 'insufficient_credits',
      balance: 100,
    });
    expect(await reserveForJob(db.db, { guildId: newGuildId(), jobId: randomUUID(), userId: 'u', amount: 1 })).toEqual({
      ok: false,
      reason: 'unknown_guild',
      balance: 0,
    });
    expect(await ledgerOf(db.db, guildId)).toHaveLength(1);
    expect(await getBalance(db.db, guildId)).toBe(100);
  });

  it('still refunds a job after its guild was frozen', async () => {
    const guildId = await guildWith(db.db, 20);
    const jobId = randomUUID();
    await reserveForJob(db.db, { guildId, jobId, userId: 'u', amount: 20 });
    await setFrozen(db.db, { guildId, frozen: true, actorId: 'mod' });
    expect(await returnJobCredits(db.db, { jobId, kind: 'refund', reason: 'timed out' })).toEqual({
      returned: 20,
      balance: 20,
    });
  });

  it("joins the caller's transaction: rolling it back undoes the charge", async () => {
    const guildId = await guildWith(db.db, 40);
    const jobId = randomUUID();
    await expect(
      db.db.transaction(async (tx) => {
        const reserved = await reserveForJob(tx, { guildId, jobId, userId: 'u', amount: 15 });
        expect(reserved).toMatchObject({ ok: true, balance: 25 });
        throw new Error('the caller failed to record its job');
      }),
    ).rejects.toThrow('the caller failed');
    expect(await balanceOf(db.db, guildId)).toBe(40);
    expect(await ledgerOf(db.db, guildId)).toHaveLength(1);

    const committed = await db.db.transaction(async (tx) => {
      await reserveForJob(tx, { guildId, jobId, userId: 'u', amount: 15 });
      return returnJobCredits(tx, { jobId, kind: 'release', reason: 'rejected' });
    });
    expect(committed).toEqual({ returned: 15, balance: 40 });
    await expectConsistent(db.db, guildId);
  });

  it('rejects invalid input with a typed error', async () => {
    const guildId = await guildWith(db.db, 10);
    await expect(reserveForJob(db.db, { guildId, jobId: 'not-a-uuid', userId: 'u', amount: 1 })).rejects.toBeInstanceOf(
      CreditsError,
    );
    await expect(
      reserveForJob(db.db, { guildId, jobId: randomUUID(), userId: 'u', amount: -5 }),
    ).rejects.toMatchObject({ reason: 'invalid_amount' });
    await expect(
      reserveForJob(db.db, { guildId, jobId: randomUUID(), userId: 'u', amount: 1.5 }),
    ).rejects.toMatchObject({ reason: 'invalid_amount' });
    expect(await balanceOf(db.db, guildId)).toBe(10);
  });

  it('ensureGuild grants starting credits only when it creates the guild', async () => {
    const guildId = newGuildId();
    expect(await ensureGuild(db.db, guildId, { startingCredits: 30 })).toEqual({ created: true, balance: 30 });
    expect(await ensureGuild(db.db, guildId, { startingCredits: 30 })).toEqual({ created: false, balance: 30 });
    const racing = newGuildId();
    const results = await Promise.all(
      Array.from({ length: 5 }, () => ensureGuild(db.db, racing, { startingCredits: 7 })),
    );
    expect(results.filter((result) => result.created)).toHaveLength(1);
    expect(await ledgerOf(db.db, guildId)).toHaveLength(1);
    expect(await balanceOf(db.db, racing)).toBe(7);
    const noCredits = newGuildId();
    expect(await ensureGuild(db.db, noCredits)).toEqual({ created: true, balance: 0 });
    expect(await ledgerOf(db.db, noCredits)).toEqual([]);
    await expectConsistent(db.db, racing);
  });
});
