/**
 * The emulator's voice with the real clients: discord.js sends Update Voice State, @discordjs/voice
 * connects to the voice gateway over TLS, discovers its address over UDP, and plays a file; the
 * emulator decrypts and decodes what it hears and compares it with the file.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChannelType } from 'discord-api-types/v10';
import type { Client } from 'discord.js';
import { VoiceConnectionStatus, entersState } from '@discordjs/voice';
import { pcmEnvelope, startDiscordEmulator } from '@music-bot/discord-emulator';
import type { DiscordEmulator, EmulatorChannel, EmulatorGuild, EmulatorMember } from '@music-bot/discord-emulator';
import { closeVoiceTest, join, joined, makeTone, playFile, voiceBot } from './support/voice-client.js';


let emu: DiscordEmulator;
let client: Client;
let guild: EmulatorGuild;
let voice: EmulatorChannel;
let alice: EmulatorMember;
let tone: { path: string; pcm: Int16Array };

beforeAll(async () => {
  emu = await startDiscordEmulator({ voice: { dave: false } });
  guild = emu.createGuild({ name: 'Voice guild' });
  emu.createChannel(guild.id, { name: 'general' });
  voice = emu.createChannel(guild.id, { name: 'Lounge', type: ChannelType.GuildVoice });
  alice = emu.addMember(guild.id, { username: 'alice' });
  tone = makeTone(3);
  client = await voiceBot(emu);
});

afterAll(() => closeVoiceTest(client, emu));

describe('joining and playing', () => {
  it('hears the whole file: its duration within 5% and its loudness envelope', async () => {
    emu.joinVoice(alice.id, voice.id);
    const connection = await joined(join(client, guild.id, voice.id, { daveEncryption: false }));
    expect(emu.voiceMembers(voice.id).sort()).toEqual([alice.id, emu.botUser.id].sort());
    await playFile(connection, tone.path);
    const heard = await emu.waitForVoiceFrames(guild.id, 150);
    expect(heard).toMatchObject({ channelId: voice.id, connected: true, encryptionMode: 'aead_aes256_gcm_rtpsize', daveProtocolVersion: 0, droppedNoSpeak: 0, undecodable: 0 });
    const comparison = emu.compareEnvelope(heard.envelope, pcmEnvelope(tone.pcm));
    expect(comparison, JSON.stringify(comparison)).toMatchObject({ matches: true });
    // Another file of the same length does not match: the check tells songs apart.
    const other = makeTone(3, 440, 2.3);
    expect(emu.compareEnvelope(heard.envelope, pcmEnvelope(other.pcm)).matches).toBe(false);
    // Each frame is 20 ms of the stream (sequence +1, timestamp +960); how evenly they arrive is the voice benchmark's business.
    expect(heard.rtpDiscontinuities).toBe(0);
    expect(heard.silenceShare).toBeLessThan(0.1);
    expect(Math.abs(heard.seconds - 3)).toBeLessThan(0.15 + 0.1); // the file, plus the five silence frames at its end
    expect(emu.findings).toEqual([]);
    connection.destroy();
    await expect.poll(() => emu.voiceMembers(voice.id)).toEqual([alice.id]);
    expect(emu.voiceReception(guild.id).connected).toBe(false);
    await entersState(connection, VoiceConnectionStatus.Destroyed, 1_000);
  });
});
