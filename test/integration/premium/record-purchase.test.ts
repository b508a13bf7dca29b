/** recordPurchase: an entitlement is one row; seen again, only a live subscription's start and end change. */
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { entitlements } from '../../../src/db/schema.js';
import { recordPurchase } from '../../../src/premium/record-purchase.js';
import { createTestDatabase } from '../../support/database.js';

const db = await createTestDatabase();
const plan = { id: '2200000000000000001', sku_id: '2200000000000000009', application_id: '2200000000000000000', user_id: 'subscriber', guild_id: 'server', type: 8, deleted: false, starts_at: '2031-07-01T00:00:00.000Z', ends_at: null };

async function rowOf(id: string) {
  return (await db.db.select().from(entitlements).where(eq(entitlements.id, id)))[0];
}

describe('recordPurchase', () => {
  it("records an entitlement once; seen again, a live subscription takes its new end and keeps what the bot decided", async () => {
    await recordPurchase(db, plan, { kind: 'subscription', credits: 300, defaultGuildId: null, deletedAt: null });
    expect(await rowOf(plan.id)).toMatchObject({ kind: 'subscription', credits: 300, guildId: 'server', userId: 'subscriber', type: 8, startsAt: new Date(plan.starts_at), endsAt: null });

    await recordPurchase(db, { ...plan, ends_at: '2031-08-01T00:00:00.000Z' }, { kind: 'subscription', credits: 500, defaultGuildId: null, deletedAt: null });
    expect(await rowOf(plan.id)).toMatchObject({ credits: 300, endsAt: new Date('2031-08-01T00:00:00.000Z') });
    expect(await db.db.select().from(entitlements)).toHaveLength(1);
  });

  it('keeps a refunded entitlement as it was', async () => {
    const refunded = { ...plan, id: '2200000000000000002' };
    const deletedAt = new Date('2031-07-02T00:00:00Z');
    await recordPurchase(db, refunded, { kind: 'subscription', credits: 300, defaultGuildId: null, deletedAt });
    await recordPurchase(db, { ...refunded, ends_at: '2031-09-01T00:00:00.000Z' }, { kind: 'subscription', credits: 300, defaultGuildId: null, deletedAt: null });
    expect(await rowOf(refunded.id)).toMatchObject({ deletedAt, endsAt: null });
  });

  it("keeps a pack's server out of its row until it is claimed, with its default server beside it", async () => {
    const pack = { ...plan, id: '2200000000000000003', type: 1, starts_at: null };
    await recordPurchase(db, pack, { kind: 'pack', credits: 100, defaultGuildId: 'offered', deletedAt: null });
    expect(await rowOf(pack.id)).toMatchObject({ kind: 'pack', guildId: null, defaultGuildId: 'offered', credits: 100, startsAt: null });
  });
});
