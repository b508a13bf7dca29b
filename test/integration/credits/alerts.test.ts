import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  CreditsError,
  getGuildCredits,
  grant,
  reserveForJob,
  setLowBalanceAlert,
  takeLowBalanceAlert,
} from '../../../src/credits/index.js';
import { createTestDatabase } from '../../support/database.js';
import { guildWith } from './support.js';

const db = await createTestDatabase();

describe('low-balance alert', () => {
  it('is handed out once below the threshold, and again only after the balance rose to it', async () => {
    const guildId = await guildWith(db.db, 100);
    const spend = (amount: number) => reserveForJob(db.db, { guildId, jobId: randomUUID(), userId: 'u', amount });
    expect(await takeLowBalanceAlert(db.db, guildId)).toBeNull();

    await setLowBalanceAlert(db.db, { guildId, channelId: 'chan-1', below: 50, actorId: 'mod' });
    expect(await takeLowBalanceAlert(db.db, guildId)).toBeNull();
    await spend(50);
    // At the threshold is not below it.
    expect(await takeLowBalanceAlert(db.db, guildId)).toBeNull();

    await spend(10);
    const racing = await Promise.all(Array.from({ length: 5 }, () => takeLowBalanceAlert(db.db, guildId)));
    expect(racing.filter((alert) => alert !== null)).toEqual([{ channelId: 'chan-1', balance: 40, below: 50, allowance: 0, subscribed: false }]);
    await spend(10);
    expect(await takeLowBalanceAlert(db.db, guildId)).toBeNull();

    // Rising to the threshold re-arms it, even with nobody asking while it was there.
    await grant(db.db, { guildId, amount: 20, actorId: 'mod', key: `i-${randomUUID()}` });
    await spend(1);
    expect(await takeLowBalanceAlert(db.db, guildId)).toEqual({ channelId: 'chan-1', balance: 49, below: 50, allowance: 0, subscribed: false });
    expect(await takeLowBalanceAlert(db.db, guildId)).toBeNull();
  });

  it('re-arms when asked while the balance is back up, and on a new setting', async () => {
    const guildId = await guildWith(db.db, 10);
    await setLowBalanceAlert(db.db, { guildId, channelId: 'chan-2', below: 20, actorId: 'mod' });
    expect(await takeLowBalanceAlert(db.db, guildId)).toMatchObject({ balance: 10 });
    expect(await takeLowBalanceAlert(db.db, guildId)).toBeNull();

    // The threshold is lowered under the balance: the next ask clears the sent mark.
    await setLowBalanceAlert(db.db, { guildId, channelId: 'chan-2', below: 5, actorId: 'mod' });
    expect(await takeLowBalanceAlert(db.db, guildId)).toBeNull();
    await setLowBalanceAlert(db.db, { guildId, channelId: 'chan-3', below: 15, actorId: 'mod' });
    expect(await takeLowBalanceAlert(db.db, guildId)).toEqual({ channelId: 'chan-3', balance: 10, below: 15, allowance: 0, subscribed: false });

    await setLowBalanceAlert(db.db, { guildId, channelId: null, below: null, actorId: 'mod' });
    expect(await takeLowBalanceAlert(db.db, guildId)).toBeNull();
    expect((await getGuildCredits(db.db, guildId))?.lowBalanceAlert).toBeNull();
    await expect(
      setLowBalanceAlert(db.db, { guildId, channelId: 'chan', below: null, actorId: 'mod' }),
    ).rejects.toBeInstanceOf(CreditsError);
  });
});
