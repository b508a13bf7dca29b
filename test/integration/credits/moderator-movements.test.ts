import { describe, expect, it } from 'vitest';
import { adjust, CreditsError, grant, take } from '../../../src/credits/index.js';
import { createTestDatabase } from '../../support/database.js';
import { balanceOf, expectConsistent, guildWith, ledgerOf, newGuildId } from './support.js';
import { english } from '../../../src/i18n/index.js';

const db = await createTestDatabase();

describe('grant, take and adjust', () => {
  it('move credits once per idempotency key and record who did it and why', async () => {
    const guildId = await guildWith(db.db, 0);

    const granted = await grant(db.db, { guildId, amount: 100, actorId: 'mod-1', reason: 'monthly donation', key: 'i-1' });
    expect(granted).toMatchObject({ balance: 100, replayed: false });
    const again = await grant(db.db, { guildId, amount: 100, actorId: 'mod-1', reason: 'monthly donation', key: 'i-1' });
    expect(again).toMatchObject({ balance: 100, replayed: true });
    expect(again.entry.id).toBe(granted.entry.id);

    expect(await take(db.db, { guildId, amount: 30, actorId: 'mod-2', key: 'i-2' })).toMatchObject({ balance: 70 });
    expect(await take(db.db, { guildId, amount: 30, actorId: 'mod-2', key: 'i-2' })).toMatchObject({
      balance: 70,
      replayed: true,
    });

    expect(await adjust(db.db, { guildId, amount: -5, actorId: 'owner', reason: 'correction', key: 'i-3' })).toMatchObject({
      balance: 65,
    });
    expect(await adjust(db.db, { guildId, amount: -5, actorId: 'owner', reason: 'correction', key: 'i-3' })).toMatchObject({
      balance: 65,
      replayed: true,
    });
    expect(await adjust(db.db, { guildId, amount: 12, actorId: 'owner', key: 'i-4' })).toMatchObject({ balance: 77 });

    const rows = (await ledgerOf(db.db, guildId)).map((row) => [row.key, row.kind, row.amount, row.balanceAfter, row.actorId, row.reason]);
    expect(rows).toEqual([
      ['manual:i-1', 'grant', 100, 100, 'mod-1', 'monthly donation'],
      ['manual:i-2', 'take', -30, 70, 'mod-2', null],
      ['manual:i-3', 'adjust', -5, 65, 'owner', 'correction'],
      ['manual:i-4', 'adjust', 12, 77, 'owner', null],
    ]);
    await expectConsistent(db.db, guildId);
  });

  it('moves once when the same interaction is retried concurrently', async () => {
    const guildId = await guildWith(db.db, 0);
    const results = await Promise.all(
      Array.from({ length: 6 }, () => grant(db.db, { guildId, amount: 40, actorId: 'mod', key: 'i-race' })),
    );
    expect(results.filter((result) => !result.replayed)).toHaveLength(1);
    expect(await balanceOf(db.db, guildId)).toBe(40);
    await expectConsistent(db.db, guildId);
  });

  it('refuses to take or adjust below zero, with a user-safe message, and records nothing', async () => {
    const guildId = await guildWith(db.db, 20);
    const refused = await take(db.db, { guildId, amount: 50, actorId: 'mod', key: 'i-big' }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(CreditsError);
    expect(refused).toMatchObject({
      reason: 'insufficient_credits',
      details: { balance: 20, requested: 50 },
    });
    expect(english.text((refused as CreditsError).userText)).toBe('Cannot take 50 credits: the balance is 20.');
    await expect(adjust(db.db, { guildId, amount: -21, actorId: 'mod', key: 'i-adj' })).rejects.toMatchObject({
      reason: 'insufficient_credits',
    });
    // The refused key was not consumed: the same interaction may take what is there.
    expect(await take(db.db, { guildId, amount: 20, actorId: 'mod', key: 'i-big' })).toMatchObject({ balance: 0 });
    expect(await ledgerOf(db.db, guildId)).toHaveLength(2);
    await expectConsistent(db.db, guildId);
  });

  it('rejects a key reused for a different movement, invalid amounts and unknown guilds', async () => {
    const guildId = await guildWith(db.db, 100);
    await grant(db.db, { guildId, amount: 10, actorId: 'mod', key: 'i-once' });
    await expect(take(db.db, { guildId, amount: 10, actorId: 'mod', key: 'i-once' })).rejects.toMatchObject({
      reason: 'key_conflict',
    });
    await expect(grant(db.db, { guildId, amount: 0, actorId: 'mod', key: 'i-zero' })).rejects.toMatchObject({
      reason: 'invalid_amount',
    });
    await expect(take(db.db, { guildId, amount: -3, actorId: 'mod', key: 'i-neg' })).rejects.toMatchObject({
      reason: 'invalid_amount',
    });
    await expect(adjust(db.db, { guildId, amount: 0, actorId: 'mod', key: 'i-nil' })).rejects.toMatchObject({
      reason: 'invalid_amount',
    });
    await expect(grant(db.db, { guildId: newGuildId(), amount: 5, actorId: 'mod', key: 'i-nowhere' })).rejects.toMatchObject({
      reason: 'unknown_guild',
    });
    expect(await balanceOf(db.db, guildId)).toBe(110);
    await expectConsistent(db.db, guildId);
  });
});
