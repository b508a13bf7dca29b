/**
 * The bot's discord.js client answers interactions, whose webhooks Discord exempts from its
 * global limit of 50 requests a second. @discordjs/rest applies that limit itself to every
 * request but the callback, so a burst of commands would queue each private acknowledgement
 * behind the others'. 60 follow-ups at once must go out without the client holding any back.
 */
import { Routes } from 'discord-api-types/v10';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { RateLimitData } from '@discordjs/rest';
import { loadConfig } from '../../../src/config.js';
import { createDiscordClient } from '../../../src/discord/gateway.js';
import { startDiscordEmulator, type DiscordEmulator } from '@music-bot/discord-emulator';

let emulator: DiscordEmulator;
beforeAll(async () => {
  emulator = await startDiscordEmulator({ botToken: 'MTA5ODc2NTQzMjEwOTg3NjU0.emulator.interaction-rest-token' });
});
afterAll(async () => emulator?.close());

it('sends 60 interaction follow-ups at once without holding any back for the global limit', async () => {
  const guild = emulator.createGuild({ name: 'Burst' });
  const channel = emulator.createChannel(guild.id, { name: 'music' });
  const member = emulator.addMember(guild.id, { username: 'alice' });
  const config = loadConfig({ require: [], env: { DISCORD_TOKEN: emulator.botToken, DISCORD_APPLICATION_ID: emulator.applicationId, DISCORD_API_URL: emulator.apiUrl } });
  const client = createDiscordClient(config);
  client.rest.setToken(emulator.botToken);
  const heldBack: RateLimitData[] = [];
  client.rest.on('rateLimited', (info) => heldBack.push(info));
  try {
    // Each interaction answered in turn, within Discord's 3 s of its own creation however busy
    // the machine: the burst under test is the follow-ups'.
    const handles = [];
    for (let i = 0; i < 60; i += 1) {
      const handle = emulator.runCommand({ guildId: guild.id, channelId: channel.id, userId: member.id, name: `burst${i}` });
      await client.rest.post(Routes.interactionCallback(handle.id, handle.token), { body: { type: 4, data: { content: 'answer' } }, auth: false });
      handles.push(handle);
    }
    await Promise.all(
      handles.map((handle) =>
        client.rest.post(Routes.webhook(emulator.applicationId, handle.token), { body: { content: 'a private word', flags: 64 }, auth: false }),
      ),
    );
    expect(heldBack.filter((info) => info.global)).toEqual([]);
    for (const handle of handles) expect((await handle.waitForFollowUp(undefined, 1_000)).content).toBe('a private word');
  } finally {
    await client.destroy();
  }
  // 120 requests through a real socket, and the emulator's first request compiles its validators:
  // seconds on a loaded machine, beyond a unit test's default 5.
}, 30_000);
