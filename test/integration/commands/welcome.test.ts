/**
 * The welcome for moderators when the bot joins a guild: one message in the system channel,
 * only where the bot may post, and only once per guild, however often it leaves and comes back.
 */
import { PermissionFlagsBits } from 'discord-api-types/v10';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { guildWelcomes } from '../../../src/db/schema.js';
import { found } from '../../support/found.js';
import { startBot, type BotHarness } from './harness.js';

let h: BotHarness;

beforeAll(async () => {
  h = await startBot({ startingCredits: 100 });
});
afterAll(async () => h?.close());

/** Resolves with the bot's log line `msg` about `guildId`, once it was written. */
function logged(msg: string, guildId: string, after = 0) {
  return vi.waitFor(() => found(h.logs.slice(after).find((line) => line.msg === msg && line.guildId === guildId), () => `log "${msg}" for guild ${guildId}`), 10_000);
}

describe('joining a guild', () => {
  it('posts one welcome in the system channel with the three first steps, and none on a rejoin', async () => {
    const guild = h.emulator.createGuild({ name: 'Choir', systemChannel: 'general' });
    const channelId = guild.systemChannelId!;
    const welcome = await vi.waitFor(() => found(h.emulator.channelMessages(channelId)[0], () => 'the welcome'), 10_000);
    expect(welcome.author.id).toBe(h.emulator.botUser.id);
    expect(welcome.content).toContain('Three first steps for moderators');
    expect(welcome.content).toContain('This server starts with **100** credits.');
    expect(welcome.content).toContain('/credits-admin grant');
    expect(welcome.content).toContain('/settings channels');
    expect(welcome.content).toContain('/settings visibility');
    expect(welcome.content!.length).toBeLessThanOrEqual(2000);
    expect(welcome.allowed_mentions).toEqual({ parse: [] });
    expect(await h.db.db.select().from(guildWelcomes).where(eq(guildWelcomes.guildId, guild.id))).toMatchObject([{ channelId }]);

    const before = h.logs.length;
    h.emulator.removeBot(guild.id);
    h.emulator.addBot(guild.id);
    await logged('guild already welcomed', guild.id, before);
    expect(h.emulator.channelMessages(channelId)).toHaveLength(1);
  });

  it('posts nothing where it may not, and welcomes the guild once it may', async () => {
    const before = h.logs.length;
    const guild = h.emulator.createGuild({
      name: 'Quiet',
      systemChannel: 'announcements',
      everyonePermissions: PermissionFlagsBits.ViewChannel,
      botPermissions: PermissionFlagsBits.ViewChannel,
    });
    await logged('no welcome: the bot may not post in the system channel', guild.id, before);
    expect(h.emulator.channelMessages(guild.systemChannelId!)).toEqual([]);
    expect(await h.db.db.select().from(guildWelcomes).where(eq(guildWelcomes.guildId, guild.id))).toEqual([]);
  });

  it('posts nothing in a guild without a system channel', async () => {
    const before = h.logs.length;
    const guild = h.emulator.createGuild({ name: 'Bare' });
    await logged('no welcome: the guild has no system channel', guild.id, before);
    expect(await h.db.db.select().from(guildWelcomes).where(eq(guildWelcomes.guildId, guild.id))).toEqual([]);
  });

  it('does not greet the guilds it was already in when it starts', async () => {
    const guild = h.emulator.createGuild({ name: 'Old friends', systemChannel: 'general' });
    await vi.waitFor(() => found(h.emulator.channelMessages(guild.systemChannelId!)[0], () => 'the first welcome'), 10_000);
    await h.db.db.delete(guildWelcomes).where(eq(guildWelcomes.guildId, guild.id));
    const before = h.logs.length;
    await h.restart();
    await vi.waitFor(() => found(h.logs.slice(before).find((line) => line.msg === 'gateway ready'), () => 'gateway ready'), 10_000);
    // A guild joined afterwards is greeted: the restarted bot listens.
    const later = h.emulator.createGuild({ name: 'Newcomers', systemChannel: 'general' });
    await vi.waitFor(() => found(h.emulator.channelMessages(later.systemChannelId!)[0], () => 'the newcomer welcome'), 10_000);
    expect(h.emulator.channelMessages(guild.systemChannelId!)).toHaveLength(1);
  });
});
