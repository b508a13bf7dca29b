/**
 * Credit packs bought through Discord while everything goes wrong around them: the entitlement
 * event comes once, twice, late or never; a second gateway hears every event and command; the
 * gateway is killed mid-way; and some packs are refunded. Songs are made meanwhile. The audit
 * counts the purchases: every pack sold put its credits in once, every refund took back what
 * the balance allowed (the rest recorded), with 0 drift.
 */
import type { EntitlementDelivery } from '@music-bot/discord-emulator';
import { ButtonStyle, ComponentType, type APIButtonComponent, type APIMessageComponent } from 'discord-api-types/v10';
import { waitFor } from '@music-bot/test-world';
import { auditFigures, type Scenario } from '../scenario.js';
import { CHAOS_PACK } from '../world.js';

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
      const audit = await world.settleAndAudit({ prefix, timeoutMs: quick ? 60_000 : 180_000 });
      const figures = auditFigures(audit, world, crashesBefore);
      return {
        ...figures,
        zero: { ...figures.zero, unanswered, notSold: count - bought.length },
        info: { ...figures.info, purchases: audit.purchases, refunds: audit.purchaseRefunds },
      };
    } finally {
      await twin.stop();
    }
  },
};
