/**
 * DAVE end to end: the emulator is the MLS external sender, a listening member (a @snazzah/davey
 * session) welcomes the bot into the group, and the frames @discordjs/voice encrypts with DAVE
 * are opened by the listener and heard as the file.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChannelType } from 'discord-api-types/v10';
import type { Client } from 'discord.js';
import { pcmEnvelope, startDiscordEmulator } from '@music-bot/discord-emulator';
import type { DiscordEmulator, EmulatorChannel, EmulatorGuild } from '@music-bot/discord-emulator';
import { closeVoiceTest, join, joined, makeTone, playFile, voiceBot } from './support/voice-client.js';


let emu: DiscordEmulator;
let client: Client;
let guild: EmulatorGuild;
let voice: EmulatorChannel;

beforeAll(async () => {
  emu = await startDiscordEmulator();
  guild = emu.createGuild({ name: 'DAVE guild' });
  voice = emu.createChannel(guild.id, { name: 'Encrypted', type: ChannelType.GuildVoice });
  client = await voiceBot(emu);
});

afterAll(() => closeVoiceTest(client, emu));

describe('DAVE', () => {
  it('negotiates the group and hears the end-to-end encrypted frames as the file', async () => {
    const tone = makeTone(2, 330);
    const connection = await joined(join(client, guild.id, voice.id));
    expect(emu.voiceMaxDaveProtocolVersion(guild.id)).toBe(1);
    await expect.poll(() => emu.voiceDave(guild.id)?.transitionsExecuted).toBe(1);
    const dave = emu.voiceDave(guild.id);
    expect(dave).toMatchObject({ keyPackages: 1, welcomes: 1, transitionsReady: 1, ready: true, invalidCommitWelcomes: 0, error: null });
    // Both ends of the group derive the same voice privacy code.
    expect(connection.voicePrivacyCode).toBe(dave?.privacyCode);
    await playFile(connection, tone.path);
    const heard = await emu.waitForVoiceFrames(guild.id, 100);
    expect(heard.daveProtocolVersion).toBe(1);
    expect(heard.daveFrames).toBeGreaterThan(90);
    expect(heard.plainFrames).toBe(0);
    expect(heard.undecodable).toBe(0);
    const comparison = emu.compareEnvelope(heard.envelope, pcmEnvelope(tone.pcm));
    expect(comparison.matches, JSON.stringify(comparison)).toBe(true);
    expect(emu.findings).toEqual([]);
    connection.destroy();
  });

  it('keeps DAVE through a resume, a second guild at once, and a new join after leaving', async () => {
    const other = emu.createGuild({ name: 'Second DAVE guild' });
    const otherVoice = emu.createChannel(other.id, { name: 'Also encrypted', type: ChannelType.GuildVoice });
    await expect.poll(() => client.channels.cache.has(otherVoice.id)).toBe(true);
    const [first, second] = await Promise.all([joined(join(client, guild.id, voice.id)), joined(join(client, other.id, otherVoice.id))]);
    await expect.poll(() => [emu.voiceDave(guild.id)?.transitionsExecuted, emu.voiceDave(other.id)?.transitionsExecuted]).toEqual([1, 1]);
    emu.resetVoiceReception(guild.id);
    emu.resetVoiceReception(other.id);
    const [low, high] = [makeTone(2, 220, 0.5), makeTone(2, 660, 1.7)];
    const playing = Promise.all([playFile(first, low.path), playFile(second, high.path)]);
    await emu.waitForVoiceFrames(guild.id, 25);
    const resumes = emu.voiceStats.resumes;
    emu.dropVoiceConnection(guild.id);
    await expect.poll(() => emu.voiceStats.resumes).toBe(resumes + 1);
    await playing;
    const [here, there] = [await emu.waitForVoiceFrames(guild.id, 100), await emu.waitForVoiceFrames(other.id, 100)];
    expect([here.plainFrames, there.plainFrames, here.undecodable, there.undecodable]).toEqual([0, 0, 0, 0]);
    expect(emu.compareEnvelope(here.envelope, pcmEnvelope(low.pcm)).matches).toBe(true);
    expect(emu.compareEnvelope(there.envelope, pcmEnvelope(high.pcm)).matches).toBe(true);
    first.destroy();
    second.destroy();
    await expect.poll(() => [emu.voiceMembers(voice.id), emu.voiceMembers(otherVoice.id)]).toEqual([[], []]);

    // A new connection makes a new group with a new welcome.
    const again = await joined(join(client, guild.id, voice.id));
    await expect.poll(() => emu.voiceDave(guild.id)?.transitionsExecuted).toBe(1);
    emu.resetVoiceReception(guild.id);
    await playFile(again, low.path);
    expect((await emu.waitForVoiceFrames(guild.id, 100)).daveFrames).toBeGreaterThan(90);
    expect(emu.findings).toEqual([]);
    again.destroy();
    await expect.poll(() => emu.voiceMembers(voice.id)).toEqual([]);
  });

  it('refuses a bot without DAVE with 4017, as Discord does since March 2026, and records it once', async () => {
    const statuses = new Set<string>();
    const connection = join(client, guild.id, voice.id, { daveEncryption: false });
    connection.on('stateChange', (_old, state) => statuses.add(state.status));
    // @discordjs/voice rejoins after each refusal: wait for a few, then stop it.
    const [identifies, connections] = [emu.voiceStats.identifies, emu.voiceStats.connections];
    // Refusals and rejoins over real sockets: seconds on a busy machine.
    await expect.poll(() => emu.findings.length, { timeout: 10_000 }).toBe(1);
    await expect.poll(() => emu.voiceStats.connections, { timeout: 10_000 }).toBeGreaterThan(connections + 2);
    connection.destroy();
    await expect.poll(() => emu.voiceMembers(voice.id)).toEqual([]);
    expect(emu.findings).toMatchObject([{ kind: 'voice-protocol', message: expect.stringContaining('requires DAVE') }]);
    expect(emu.voiceStats.identifies).toBe(identifies);
    expect(statuses.has('ready')).toBe(false);
    expect(emu.voiceReception(guild.id).connected).toBe(false);
    emu.clearRecords();
  });
});
