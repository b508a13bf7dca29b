/** defaultGuildFor: a bought pack's server is where its buyer was last offered it, within a day. */
import { describe, expect, it } from 'vitest';
import { recordOffer } from '../../../src/credits/index.js';
import { defaultGuildFor, OFFER_VALID_MS } from '../../../src/premium/default-guild.js';
import { createTestDatabase } from '../../support/database.js';

const db = await createTestDatabase();

describe('defaultGuildFor', () => {
  it('is the server of the latest offer while it is valid, and none after, or without a buyer', async () => {
    const shownAt = new Date('2031-06-01T10:00:00Z');
    await recordOffer(db.db, { userId: 'buyer', guildId: 'first', at: new Date(shownAt.getTime() - 60_000) });
    await recordOffer(db.db, { userId: 'buyer', guildId: 'latest', at: shownAt });

    expect(await defaultGuildFor(db, 'buyer', new Date(shownAt.getTime() + OFFER_VALID_MS))).toBe('latest');
    expect(await defaultGuildFor(db, 'buyer', new Date(shownAt.getTime() + OFFER_VALID_MS + 1))).toBeNull();
    expect(await defaultGuildFor(db, 'someone else', shownAt)).toBeNull();
    expect(await defaultGuildFor(db, undefined, shownAt)).toBeNull();
  });
});
