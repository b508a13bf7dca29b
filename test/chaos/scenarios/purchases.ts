/**
 * Credit packs bought through Discord while everything goes wrong around them: the entitlement
 * event comes once, twice, late or never; a second gateway hears every event and command; the
 * gateway is killed mid-way; and some packs are refunded. Songs are made meanwhile. Then a month
 * turns on two servers with an owners' allowance, one subscribed twice, while events, listings
 * and first uses race and members spend. The audit counts the purchases: every pack sold put its
 * credits in once, every refund took back what the balance allowed (the rest recorded), with 0
 * drift; it counts the allowance credits per server and month (none above the largest
 * allowance), and sets the owners' sales report against the ledger.
 */
import { randomUUID } from 'node:crypto';
import { drizzle } from 'drizzle-orm/node-postgres';
import type { EntitlementDelivery } from '@music-bot/discord-emulator';
import { ButtonStyle, ComponentType, type APIButtonComponent, type APIMessageComponent } from 'discord-api-types/v10';
import { populateGuilds, waitFor, type Place } from '@music-bot/test-world';
import { ensureGuild, getBalance, setMonthlyAllowance, take, utcMonth } from '../../../src/credits/index.js';
import * as schema from '../../../src/db/schema.js';
import { auditAllowances, auditSalesReport } from '../sales-audit.js';
import { auditFigures, type Scenario } from '../scenario.js';
import { CHAOS_PACK, CHAOS_PLANS, type ChaosWorld } from '../world.js';

const DELIVERIES: readonly EntitlementDelivery[] = ['normal', 'twice', 'never', { delayMs: 1_500 }];

export const purchases: Scenario = {
  name: 'purchases',
  title: 'credit packs bought while events come twice, late or never, beside a twin gateway, with the gateway killed and some refunded',
  async run(world, { jobs, quick }) {
    const crashesBefore = world.crashes().length;
    const prefix = 'chaos purchases';
    const count = Math.min(jobs, quick ? 6 : 40);
    const twin = await world.spawnExtra('gateway');
    const bought: string[] = [];
    let unanswered = 0;
    try {
      for (let i = 0; i < count; i += 1) {
        const place = world.places[i % world.places.length]!;
        world.song(place, `${prefix} ${i}`);
        if (i === Math.floor(count / 2)) {
          // The twin answers meanwhile; the events of its shard reach both.
          await world.processes.gateway.kill();
          await world.processes.gateway.start();
        }
        const handle = world.emulator.runCommand({ ...place, name: 'credits' });
        const answer = await handle
          .waitForResponse(30_000)
          .then(() => waitFor('the answer to /credits', () => handle.original()?.components?.length ? handle.original() : undefined, { timeoutMs: 15_000 }))
          .catch(() => undefined);
        if (!answer) {
          unanswered += 1;
          continue;
        }
        const buttons = (answer.components as APIMessageComponent[]).flatMap((row) => ('components' in row ? (row.components as APIMessageComponent[]) : []));
        const buy = buttons.find((button): button is APIButtonComponent => button.type === ComponentType.Button && button.style === ButtonStyle.Premium && button.sku_id === CHAOS_PACK.skuId);
        if (!buy) throw new Error('/credits shows no Buy button for the pack');
        // Where the pack goes: the bot notes the offer beside its answer.
        await waitFor('the offer to be noted', async () => {
          const { rows } = await world.db.query<{ guild_id: string }>('select guild_id from premium_offers where user_id = $1', [place.userId]);
          return rows[0]?.guild_id === place.guildId;
        }, { timeoutMs: 10_000 });
        const entitlement = world.emulator.clickPremiumButton({ messageId: answer.id, skuId: CHAOS_PACK.skuId, userId: place.userId, delivery: DELIVERIES[i % DELIVERIES.length]! });
        bought.push(entitlement.id);
        // Every third pack is refunded, some at once (perhaps before the bot took it), some later.
        if (i % 3 === 1) world.emulator.refund(entitlement.id, { delivery: i % 2 === 0 ? 'normal' : 'never' });
      }
      await turnTheMonth(world);
      const audit = await world.settleAndAudit({ prefix, timeoutMs: quick ? 60_000 : 180_000 });
      const figures = auditFigures(audit, world, crashesBefore);
      const allowances = await auditAllowances(world.db);
      const sales = await auditSalesReport(world.db);
      return {
        ...figures,
        zero: { ...figures.zero, unanswered, notSold: count - bought.length, allowanceOver: allowances.over, salesReportOff: sales.off },
        info: { ...figures.info, purchases: audit.purchases, refunds: audit.purchaseRefunds, allowanceMonths: allowances.serverMonths, allowanceCredits: allowances.credits },
        details: [...figures.details, ...allowances.details, ...sales.details],
      };
    } finally {
      await twin.stop();
    }
  },
};

/**
 * A month turns on two new servers that start with nothing and an owners' allowance: each is
 * set as the first instant of a month finds it (last month applied). On one, a subscription of
 * 300 comes by an event heard by both gateways and a second one of 200 by the listing alone; on
 * the other, a member's first use applies the owners' 250 and a subscription of 200 comes by its
 * event. Then members spend everything, the listing runs twice more and the smaller
 * subscription's event comes again: nothing more may come that month.
 */
async function turnTheMonth(world: ChaosWorld): Promise<void> {
  const db = drizzle(world.db, { schema });
  const now = new Date();
  const month = utcMonth(now);
  const lastMonth = utcMonth(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 0)));
  const [twoPlans, ownersFirst] = [0, 1].map((i) => populateGuilds(world.emulator, 1, 1, `Chaos month ${i}`)[0]!) as [Place, Place];
  for (const [place, allowance] of [[twoPlans, 100], [ownersFirst, 250]] as const) {
    await ensureGuild(db, place.guildId);
    await setMonthlyAllowance(db, { guildId: place.guildId, amount: allowance, actorId: place.userId, key: randomUUID() });
    await world.db.query('update guilds set allowance_period = $2, allowance_floor = 300 where id = $1', [place.guildId, lastMonth]);
  }
  const floorOf = (place: Place) =>
    waitFor(
      'the month applied',
      async () => ((await world.db.query("select 1 from credit_ledger where guild_id = $1 and kind in ('allowance', 'subscription') and key like $2", [place.guildId, `%:${month}`])).rowCount ?? 0) > 0,
      { timeoutMs: 30_000 },
    );
  const recorded = (entitlementId: string) =>
    waitFor('the subscription recorded', async () => (await world.db.query('select 1 from entitlements where id = $1', [entitlementId])).rowCount === 1, { timeoutMs: 30_000 });

  const large = world.emulator.subscribe({ userId: twoPlans.userId, guildId: twoPlans.guildId, skuId: CHAOS_PLANS.large.skuId, delivery: 'twice' });
  world.emulator.runCommand({ ...ownersFirst, name: 'credits' });
  await Promise.all([floorOf(twoPlans), floorOf(ownersFirst)]);
  const small = world.emulator.subscribe({ userId: twoPlans.userId, guildId: twoPlans.guildId, skuId: CHAOS_PLANS.small.skuId, delivery: 'never' });
  const beside = world.emulator.subscribe({ userId: ownersFirst.userId, guildId: ownersFirst.guildId, skuId: CHAOS_PLANS.small.skuId });
  await Promise.all([recorded(large.id), recorded(small.id), recorded(beside.id)]);

  // Members spend everything; then two more listings and the events again.
  for (const place of [twoPlans, ownersFirst]) {
    const balance = (await getBalance(db, place.guildId)) ?? 0;
    if (balance > 0) await take(db, { guildId: place.guildId, amount: balance, actorId: place.userId, key: randomUUID(), reason: 'spent' });
  }
  const listings = () => world.logLines().filter((line) => line.includes('"entitlements reconciled"')).length;
  // The bot confirms every event it takes with Discord's REST: that request says the event was taken.
  const confirmed = (entitlementId: string) => world.emulator.requests.filter((request) => request.method === 'GET' && request.path.endsWith(`/entitlements/${entitlementId}`)).length;
  const heard = confirmed(beside.id);
  world.emulator.redeliverEntitlementEvent(beside.id);
  world.emulator.redeliverEntitlementEvent(small.id);
  await waitFor('the event taken again', () => confirmed(beside.id) > heard, { timeoutMs: 30_000, everyMs: 100 });
  const listed = listings();
  await waitFor('two more listings', () => listings() >= listed + 2, { timeoutMs: 60_000, everyMs: 250 });
  world.emulator.runCommand({ ...twoPlans, name: 'credits' });
  world.emulator.runCommand({ ...ownersFirst, name: 'credits' });
}
