/**
 * The voice server's UDP on a thread of its own (`voice: { receiveOnThread: true }`, the
 * benchmark's listener): IP discovery, the transport key and DAVE work as on the emulator's own
 * thread, and each frame is counted and timed once, in order.
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
  emu = await startDiscordEmulator({ voice: { receiveOnThread: true } });
  guild = emu.createGuild({ name: 'Threaded listener' });
  voice = emu.createChannel(guild.id, { name: 'Lounge', type: ChannelType.GuildVoice });
  client = await voiceBot(emu);
});

afterAll(() => closeVoiceTest(client, emu));

describe('reception on its own thread', () => {
  it('hears the DAVE-encrypted file whole, each frame one step of the stream', async () => {
    const tone = makeTone(2, 330);
    const connection = await joined(join(client, guild.id, voice.id));
    await expect.poll(() => emu.voiceDave(guild.id)?.transitionsExecuted).toBe(1);
    await playFile(connection, tone.path);
    const heard = await emu.waitForVoiceFrames(guild.id, 100);
    expect(heard).toMatchObject({ connected: true, daveProtocolVersion: 1, plainFrames: 0, undecodable: 0, droppedNoSpeak: 0, rtpDiscontinuities: 0 });
    expect(heard.daveFrames).toBeGreaterThan(90);
    // One interval between each two frames of a speaking run, none negative: arrivals in order.
    expect(heard.intervalsMs.length).toBeGreaterThan(90);
    expect(Math.min(...heard.intervalsMs)).toBeGreaterThanOrEqual(0);
    expect(heard.lastFrameAt! - heard.firstFrameAt!).toBeGreaterThan(0);
    const comparison = emu.compareEnvelope(heard.envelope, pcmEnvelope(tone.pcm));
    expect(comparison.matches, JSON.stringify(comparison)).toBe(true);
    expect(emu.findings).toEqual([]);
    connection.destroy();
  });
});
