/**
 * How the bot's REST clients send to Discord: requests under Discord's global limit take a
 * permit from the budget shared through Redis; interaction webhooks never wait for it; every
 * answer is counted by status and route class.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDiscordEmulator, type DiscordEmulator } from '@music-bot/discord-emulator';
import { createDiscordDelivery } from '../../../src/discord-rest/discord-delivery.js';
import { routeClassOf } from '../../../src/discord-rest/rest-requests.js';
import { createLogger } from '../../../src/logger.js';
import { createMetrics } from '../../../src/metrics.js';
import { createRequestBudget } from '../../../src/queue/request-budget.js';
import { testRedis } from '../../support/database.js';

let emulator: DiscordEmulator;
let redis: Redis;
beforeAll(async () => {
  // Discord's limits off: the budget alone paces the requests here.
  emulator = await startDiscordEmulator({ rateLimits: false });
  redis = new Redis(testRedis().url, { maxRetriesPerRequest: null });
});
afterAll(async () => {
  redis?.disconnect();
  await emulator?.close();
});

async function counted(metrics: ReturnType<typeof createMetrics>): Promise<Record<string, number>> {
  const { values } = await metrics.discordRestResponses.get();
  return Object.fromEntries(values.map((value) => [`${value.labels.route_class} ${value.labels.status}`, value.value]));
}

describe('the REST clients under the shared budget', () => {
  it('pace channel posts at the budget, let interaction webhooks through at once, and count every answer', async () => {
    const metrics = createMetrics();
    const budget = createRequestBudget({ redis, prefix: testRedis().prefix, name: 'discord-rest', perSecond: 2, logger: createLogger({ level: 'silent' }) });
    const discord = createDiscordDelivery({ apiUrl: emulator.apiUrl, token: emulator.botToken, traffic: { budget, metrics } });
    const guild = emulator.createGuild({ name: 'Budget' });
    const channel = emulator.createChannel(guild.id, { name: 'songs' });
    // The first requests of a process are slow (connections, compilation): made outside the budget first.
    const warmUp = createDiscordDelivery({ apiUrl: emulator.apiUrl, token: emulator.botToken });
    await warmUp.postChannelMessage(channel.id, { content: 'warm-up' });
    await warmUp.followUp(emulator.applicationId, 'not-a-live-token', { content: 'warm-up' }).catch(() => undefined);

    const started = performance.now();
    const posts = Promise.all(Array.from({ length: 5 }, (_, i) => discord.postChannelMessage(channel.id, { content: `post ${i}` })));
    // Five follow-ups on a token Discord does not know, while the posts wait for their permits.
    const followUps = await Promise.allSettled(Array.from({ length: 5 }, () => discord.followUp(emulator.applicationId, 'not-a-live-token', { content: 'late' })));
    const followUpsTook = performance.now() - started;
    await posts;
    const postsTook = performance.now() - started;

    expect(followUps.every((outcome) => outcome.status === 'rejected')).toBe(true);
    expect(followUpsTook).toBeLessThan(1_000);
    // Two a second, evenly spaced: the fifth post two seconds after the first.
    expect(postsTook).toBeGreaterThan(1_900);
    expect(emulator.channelMessages(channel.id)).toHaveLength(6);
    const statuses = await counted(metrics);
    expect(statuses['channel_message 200']).toBe(5);
    expect(Object.keys(statuses).filter((key) => key.startsWith('interaction_webhook 4')).reduce((sum, key) => sum + statuses[key]!, 0)).toBe(5);
  });

  it('sorts routes into a fixed list of classes', () => {
    const api = 'https://discord.com/api/v10';
    expect(routeClassOf(`${api}/interactions/1/token-a/callback?with_response=true`)).toBe('interaction_callback');
    expect(routeClassOf(`${api}/webhooks/1/token-a/messages/@original`)).toBe('interaction_webhook');
    expect(routeClassOf(`${api}/webhooks/1/token-a`)).toBe('interaction_webhook');
    expect(routeClassOf(`${api}/channels/2/messages`)).toBe('channel_message');
    expect(routeClassOf(`${api}/channels/2/messages/3`)).toBe('channel_message');
    expect(routeClassOf(`${api}/applications/1/entitlements/4/consume`)).toBe('entitlement');
    expect(routeClassOf(`${api}/applications/1/commands`)).toBe('command');
    expect(routeClassOf(`${api}/applications/1/guilds/5/commands/6`)).toBe('command');
    expect(routeClassOf(`${api}/users/@me/channels`)).toBe('other');
    expect(routeClassOf(`http://127.0.0.1:4000/proxy/api/v10/gateway/bot`)).toBe('other');
  });
});
