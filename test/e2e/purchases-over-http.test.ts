/**
 * Purchases for a bot with no gateway: `ROLE=http` with `INTERACTIONS=http` and a `ROLE=worker`,
 * as a serverless-style deployment runs it. Entitlement events reach `/webhook-events`, signed,
 * as Discord's webhook events do; an event never sent is caught by the periodic listing.
 */
import { eq, like } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ButtonStyle, ComponentType, type APIButtonComponent, type APIMessageComponent } from 'discord-api-types/v10';
import type { BotProcess } from '@music-bot/test-world';
import { verifyLedger } from '../../src/credits/index.js';
import { creditLedger, guilds, premiumOffers } from '../../src/db/schema.js';
import { found } from '../support/found.js';
import { registerCommands } from '../support/register-commands.js';
import { startStack, type Stack, type StackGuild } from '../support/stack.js';
import { PACK, PURCHASE_ENV, PURCHASE_SKUS } from './purchases.support.js';

let stack: Stack;
let processes: BotProcess[] = [];

beforeAll(async () => {
  stack = await startStack({ startingCredits: 20, emulator: { skus: PURCHASE_SKUS } });
  const env = {
    ...stack.env,
    ...PURCHASE_ENV,
    DISCORD_DEV_GUILD_ID: stack.guild.id,
    INTERACTIONS: 'http',
    DISCORD_PUBLIC_KEY: stack.emulator.publicKey,
    PACK_CLAIM_MINUTES: '0',
    ENTITLEMENT_CHECK_SECONDS: '2',
    LOG_LEVEL: 'debug',
  };
  await registerCommands(env);
  processes = [stack.world.bot({ name: 'http', env: { ...env, ROLE: 'http' } }), stack.world.bot({ name: 'worker', env: { ...env, ROLE: 'worker' } })];
  for (const process of processes) await process.start();
  await stack.emulator.setInteractionsEndpoint(`${stack.world.httpUrl}/interactions`);
  await stack.emulator.setWebhookEventsEndpoint(`${stack.world.httpUrl}/webhook-events`);
}, 120_000);
afterAll(async () => stack?.close(), 60_000);
afterEach(async () => expect(await verifyLedger(stack.db.db)).toEqual([]));

function output(): string {
  return processes.map((process) => process.output()).join('\n');
}

function sources(entitlementId: string): string[] {
  return output()
    .split('\n')
    .filter((line) => line.includes('"entitlement received"') && line.includes(`"entitlementId":"${entitlementId}"`))
    .map((line) => /"source":"(\w+)"/.exec(line)?.[1] ?? '?');
}

async function offer(place: StackGuild, userId: string): Promise<string> {
  const handle = stack.emulator.runCommand({ guildId: place.guild.id, channelId: place.channelId, userId, name: 'credits' });
  await handle.waitForResponse(15_000);
  const answer = await vi.waitFor(() => found(handle.original()?.components?.length ? handle.original() : undefined, 'the answer to /credits'), 15_000);
  const buttons = (answer.components as APIMessageComponent[]).flatMap((row) => ('components' in row ? (row.components as APIMessageComponent[]) : []));
  expect(buttons.some((button) => button.type === ComponentType.Button && (button as APIButtonComponent).style === ButtonStyle.Premium)).toBe(true);
  await vi.waitFor(async () => expect((await stack.db.db.select().from(premiumOffers).where(eq(premiumOffers.userId, userId)))[0]?.guildId).toBe(place.guild.id), 10_000);
  return answer.id;
}

async function movementsOf(entitlementId: string) {
  return stack.db.db
    .select({ guildId: creditLedger.guildId, kind: creditLedger.kind, amount: creditLedger.amount })
    .from(creditLedger)
    .where(like(creditLedger.key, `entitlement:${entitlementId}%`))
    .orderBy(creditLedger.id);
}

async function balanceOf(guildId: string): Promise<number | undefined> {
  return (await stack.db.db.select({ balance: guilds.balance }).from(guilds).where(eq(guilds.id, guildId)))[0]?.balance;
}

describe('purchases over webhook events', () => {
  it('a pack whose event comes twice over HTTP goes in once, and is consumed', async () => {
    const place = stack.newGuild();
    const messageId = await offer(place, place.members.alice);
    const entitlement = stack.emulator.clickPremiumButton({ messageId, skuId: PACK, userId: place.members.alice, delivery: 'twice' });
    await vi.waitFor(() => expect(sources(entitlement.id).filter((source) => source === 'webhook')).toHaveLength(2), 15_000);
    await vi.waitFor(() => expect(stack.emulator.entitlement(entitlement.id)?.consumed).toBe(true), 15_000);
    expect(await movementsOf(entitlement.id)).toEqual([{ guildId: place.guild.id, kind: 'purchase', amount: 100 }]);
    expect(await balanceOf(place.guild.id)).toBe(120);
    // Every delivery was acknowledged with 204 at the first attempt.
    const deliveries = () => stack.emulator.entitlementDeliveries.filter((delivery) => delivery.entitlementId === entitlement.id && delivery.via === 'webhook');
    await vi.waitFor(() => expect(deliveries().length).toBeGreaterThanOrEqual(2), 10_000);
    expect(deliveries().every((delivery) => 'status' in delivery && delivery.status === 204)).toBe(true);
  }, 60_000);

  it('a pack whose event never comes is caught by the listing', async () => {
    const place = stack.newGuild();
    const messageId = await offer(place, place.members.bob);
    const entitlement = stack.emulator.clickPremiumButton({ messageId, skuId: PACK, userId: place.members.bob, delivery: 'never' });
    await vi.waitFor(async () => expect(await movementsOf(entitlement.id)).toHaveLength(1), 20_000);
    expect(sources(entitlement.id)).not.toContain('webhook');
    expect(sources(entitlement.id)).toContain('listing');
    await vi.waitFor(() => expect(stack.emulator.entitlement(entitlement.id)?.consumed).toBe(true), 15_000);
    expect(await balanceOf(place.guild.id)).toBe(120);

    // So is a refund whose event never comes.
    stack.emulator.refund(entitlement.id, { delivery: 'never' });
    await vi.waitFor(async () => expect((await movementsOf(entitlement.id)).map((movement) => movement.kind)).toEqual(['purchase', 'reversal']), 20_000);
    expect(await balanceOf(place.guild.id)).toBe(20);
  }, 60_000);
});
