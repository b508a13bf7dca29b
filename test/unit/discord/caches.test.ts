/**
 * discord.js caches every interaction's user and member and never lets them go by default: a bot
 * in thousands of servers would grow by every member who ever ran a command. The bot's client
 * keeps the most recent CACHED_PEOPLE_LIMIT of each (its own user and member always) and no
 * messages.
 */
import { afterAll, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.js';
import { CACHED_PEOPLE_LIMIT, createDiscordClient } from '../../../src/discord/gateway.js';

const config = loadConfig({ require: [], env: { DISCORD_TOKEN: 'x'.repeat(30), DISCORD_APPLICATION_ID: '1300000000000000002', DISCORD_API_URL: 'http://127.0.0.1:9/api' } });
const client = createDiscordClient(config);
afterAll(async () => client.destroy());

const guildId = '1300000000000000004';
const snowflake = (n: number) => String(1400000000000000000n + BigInt(n));

function interaction(n: number) {
  const user = { id: snowflake(n), username: `member${n}`, discriminator: '0', avatar: null, global_name: null };
  return {
    id: snowflake(1_000_000 + n),
    application_id: '1300000000000000002',
    type: 2,
    token: `token-${n}`,
    version: 1,
    guild_id: guildId,
    channel_id: '1300000000000000005',
    member: { user, roles: [], permissions: '0', joined_at: '2024-01-01T00:00:00Z', deaf: false, mute: false, flags: 0 },
    data: { id: '1300000000000000003', name: 'song', type: 1 },
    locale: 'en-US',
    entitlements: [],
    authorizing_integration_owners: { '0': guildId },
  };
}

it(`keeps at most ${CACHED_PEOPLE_LIMIT} users and members, whoever runs commands`, () => {
  const internals = client as unknown as {
    actions: { InteractionCreate: { handle(data: unknown): void } };
    guilds: { _add(data: unknown): unknown };
  };
  // The guild as the gateway's GUILD_CREATE would have cached it.
  internals.guilds._add({ id: guildId, name: 'Busy', roles: [], channels: [], members: [], emojis: [], stickers: [], features: [] });
  const guild = client.guilds.cache.get(guildId)!;
  for (let n = 0; n < CACHED_PEOPLE_LIMIT + 500; n += 1) internals.actions.InteractionCreate.handle(interaction(n));
  expect(client.users.cache.size).toBeLessThanOrEqual(CACHED_PEOPLE_LIMIT);
  expect(guild.members.cache.size).toBeLessThanOrEqual(CACHED_PEOPLE_LIMIT);
  // The most recent are kept.
  expect(client.users.cache.has(snowflake(CACHED_PEOPLE_LIMIT + 499))).toBe(true);
  expect(guild.members.cache.has(snowflake(CACHED_PEOPLE_LIMIT + 499))).toBe(true);
});
