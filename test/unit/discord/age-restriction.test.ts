/**
 * Where a request was made, for the explicit list (src/discord/age-restriction.ts): a channel's
 * own `nsfw` from the interaction, a thread's from its parent, read from the gateway's cache
 * when there is one and otherwise from Discord (the emulator) with GET /channels/{id}; a
 * parent Discord will not show counts as not age-restricted.
 */
import { REST } from '@discordjs/rest';
import { ChannelType } from 'discord-api-types/v10';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDiscordEmulator, type DiscordEmulator, type EmulatorChannel } from '@music-bot/discord-emulator';
import { isAgeRestricted } from '../../../src/discord/age-restriction.js';
import { silentLogger } from '../../../src/logger.js';

let emulator: DiscordEmulator;
let rest: REST;
let adult: EmulatorChannel;
let plain: EmulatorChannel;

beforeAll(async () => {
  emulator = await startDiscordEmulator({ botToken: 'MTA5ODc2NTQzMjEwOTg3NjU0.emulator.age-restriction-token' });
  const guild = emulator.createGuild({ name: 'Age restrictions' });
  adult = emulator.createChannel(guild.id, { name: 'after-dark', nsfw: true });
  plain = emulator.createChannel(guild.id, { name: 'general' });
  rest = new REST({ api: emulator.apiUrl }).setToken(emulator.botToken);
});
afterAll(async () => emulator?.close());

const thread = (parentId: string | null) => ({ type: ChannelType.PublicThread, parentId });

describe('isAgeRestricted', () => {
  it("reads a channel's own flag, and nothing for no channel", async () => {
    expect(await isAgeRestricted({ channel: { type: ChannelType.GuildText, nsfw: true }, client: { rest } }, silentLogger)).toBe(true);
    expect(await isAgeRestricted({ channel: { type: ChannelType.GuildText, nsfw: false }, client: { rest } }, silentLogger)).toBe(false);
    expect(await isAgeRestricted({ channel: { type: ChannelType.GuildText }, client: { rest } }, silentLogger)).toBe(false);
    expect(await isAgeRestricted({ channel: null, client: { rest } }, silentLogger)).toBe(false);
  });

  it("reads a thread's parent from Discord when no cache has it (interactions over HTTP)", async () => {
    expect(await isAgeRestricted({ channel: thread(adult.id), client: { rest } }, silentLogger)).toBe(true);
    expect(await isAgeRestricted({ channel: thread(plain.id), client: { rest } }, silentLogger)).toBe(false);
  });

  it("reads a thread's parent from the gateway's cache without asking Discord", async () => {
    const cache = new Map([[plain.id, { id: plain.id, nsfw: true }]]);
    // The cache is what the gateway told: it wins over what a REST call would say.
    expect(await isAgeRestricted({ channel: thread(plain.id), client: { rest, channels: { cache } } }, silentLogger)).toBe(true);
  });

  it('takes a parent Discord does not show as not age-restricted', async () => {
    emulator.denyChannel(adult.id);
    expect(await isAgeRestricted({ channel: thread(adult.id), client: { rest } }, silentLogger)).toBe(false);
    expect(await isAgeRestricted({ channel: thread(null), client: { rest } }, silentLogger)).toBe(false);
  });
});
