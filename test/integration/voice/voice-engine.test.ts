/**
 * The voice engine on its threads, against the Discord emulator with DAVE and the real
 * @discordjs/voice: guilds joining at once spread over two voice threads, each stream paced 20 ms
 * a frame as the emulator reads it (sequence +1, timestamp +960, no frame missing); pause, resume,
 * skip and leave reach the line's thread; and a thread that crashes takes its guilds out of their
 * channels and tells their players, while the other thread's guild plays on. How evenly the
 * frames arrive in time is the voice benchmark's (test/bench/voice.ts).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Worker } from 'node:worker_threads';
import { ChannelType, GatewayIntentBits } from 'discord-api-types/v10';
import { Client } from 'discord.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startDiscordEmulator, type DiscordEmulator } from '@music-bot/discord-emulator';
import { silentLogger } from '../../../src/logger.js';
import { VoiceEngine, type SongEnd, type VoiceLine } from '../../../src/voice/engine/engine.js';
import { startVoiceThread } from '../../../src/voice/engine/voice-thread.js';

let emu: DiscordEmulator;
let client: Client;
let engine: VoiceEngine;
let media: Server;
let folder: string;
/** The voice threads' workers, in the order the engine started them. */
const workers: Worker[] = [];
/** Each guild's voice channel. */
const places: Array<{ guildId: string; channelId: string }> = [];
let shortSong: string;
let longSong: string;

/** A tone of `seconds` as Ogg Opus in `folder`, served by `media`; its address. */
function tone(seconds: number, name: string): string {
  execFileSync('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', `sine=frequency=440:duration=${seconds}:sample_rate=48000`, '-ac', '2', '-c:a', 'libopus', '-b:a', '64k', path.join(folder, name)]);
  return `http://127.0.0.1:${(media.address() as AddressInfo).port}/${name}`;
}

beforeAll(async () => {
  folder = mkdtempSync(path.join(tmpdir(), 'voice-engine-'));
  media = createServer((request, response) => {
    try {
      response.writeHead(200, { 'content-type': 'audio/ogg' }).end(readFileSync(path.join(folder, path.basename(request.url ?? ''))));
    } catch {
      response.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => media.listen(0, '127.0.0.1', resolve));
  shortSong = tone(3, 'short.ogg');
  longSong = tone(30, 'long.ogg');
  emu = await startDiscordEmulator({ voice: { decode: false } });
  for (const name of ['First', 'Second', 'Third']) {
    const guild = emu.createGuild({ name });
    const channel = emu.createChannel(guild.id, { name: 'Lounge', type: ChannelType.GuildVoice });
    emu.joinVoice(emu.addMember(guild.id, { username: `listener of ${name}` }).id, channel.id);
    places.push({ guildId: guild.id, channelId: channel.id });
  }
  client = new Client({ intents: [GatewayIntentBits.Guilds, GatewayIntentBits.GuildVoiceStates], rest: { api: emu.apiUrl } });
  await client.login(emu.botToken);
  await emu.waitForBotReady();
  await vi.waitFor(() => expect(places.every((place) => client.channels.cache.has(place.channelId))).toBe(true), 10_000);
  engine = new VoiceEngine({
    logger: silentLogger,
    ffmpegPath: 'ffmpeg',
    libopus: true,
    threads: 2,
    startThread: () => workers[workers.push(startVoiceThread()) - 1]!,
  });
}, 60_000);

afterAll(async () => {
  await engine?.close();
  await client?.destroy();
  await emu?.close();
  await new Promise((resolve) => media?.close(resolve));
  rmSync(folder, { recursive: true, force: true });
});

/** Joins the guild's channel; the line records its songs' ends and whether it was gone. */
function join(place: { guildId: string; channelId: string }): VoiceLine & { ends: SongEnd[]; gone: boolean } {
  const line = Object.assign(engine.join(client.guilds.cache.get(place.guildId)!, place.channelId), { ends: [] as SongEnd[], gone: false });
  line.onEnded = (end) => line.ends.push(end);
  line.onGone = () => (line.gone = true);
  return line;
}

const botIn = (place: { channelId: string }) => emu.voiceMembers(place.channelId).includes(emu.botUser.id);

describe('the voice engine on two threads', () => {
  it('plays guilds that join at once, each stream 20 ms a frame with none missing, DAVE-encrypted', async () => {
    const lines = places.map((place) => join(place));
    try {
      expect(workers).toHaveLength(2);
      for (const line of lines) line.play(shortSong);
      for (const line of lines) await expect.poll(() => line.ends.length, { timeout: 30_000 }).toBe(1);
      for (const [i, line] of lines.entries()) {
        expect(line.ends[0]).toMatchObject({ playId: 1, exitCode: 0 });
        const heard = emu.voiceReception(places[i]!.guildId);
        // 3 s of tone is 150 frames, then the five of silence that end a stream.
        expect(heard.frames).toBeGreaterThanOrEqual(150);
        expect(heard).toMatchObject({ daveProtocolVersion: 1, undecodable: 0, droppedNoSpeak: 0, rtpDiscontinuities: 0 });
        // A stream that starts while the call's DAVE group is still forming sends its first
        // frames in DAVE's passthrough, as the protocol allows; the rest are end-to-end encrypted.
        expect(heard.plainFrames, 'frames sent before DAVE was ready').toBeLessThanOrEqual(5);
        expect(heard.daveFrames).toBeGreaterThanOrEqual(145);
      }
      expect(emu.findings).toEqual([]);
    } finally {
      for (const line of lines) line.leave();
    }
    await expect.poll(() => places.filter(botIn)).toEqual([]);
  });

  it('takes pause, resume, skip and leave to the line’s thread', async () => {
    const place = places[1]!;
    const line = join(place);
    line.play(longSong);
    await emu.waitForVoiceFrames(place.guildId, 25, 15_000);
    await line.pause();
    // Paused: the player says it stopped speaking, after its five frames of silence.
    await expect.poll(() => emu.voiceReception(place.guildId).speaking).toBe(false);
    await line.unpause();
    await expect.poll(() => emu.voiceReception(place.guildId).speaking).toBe(true);
    const resumedAt = emu.voiceReception(place.guildId).frames;
    await emu.waitForVoiceFrames(place.guildId, resumedAt + 25, 15_000);
    expect(await line.playbackMs()).toBeGreaterThan(0);
    // A skip ends the song playing and reports its end; a new song follows on the same line.
    expect(await line.stopSong()).toBe(true);
    await expect.poll(() => line.ends.map((end) => end.playId)).toEqual([1]);
    emu.resetVoiceReception(place.guildId);
    expect(line.play(shortSong)).toBe(2);
    await expect.poll(() => line.ends.map((end) => end.playId), { timeout: 30_000 }).toEqual([1, 2]);
    expect(emu.voiceReception(place.guildId)).toMatchObject({ rtpDiscontinuities: 0, undecodable: 0 });
    expect(await line.stopSong()).toBe(false);
    line.leave();
    await expect.poll(() => botIn(place)).toBe(false);
    expect(line.gone).toBe(false);
    expect(emu.findings).toEqual([]);
  });

  it('takes a crashed thread’s guilds out of their channels and tells their players; the other thread plays on', async () => {
    // The first and third guilds go to the first thread, the second to the other.
    const lines = places.map((place) => join(place));
    for (const line of lines) line.play(longSong);
    for (const place of places) await emu.waitForVoiceFrames(place.guildId, 25, 15_000);
    await workers[0]!.terminate();
    await expect.poll(() => lines.map((line) => line.gone)).toEqual([true, false, true]);
    await expect.poll(() => places.map(botIn)).toEqual([false, true, false]);
    // The second guild's stream goes on, unbroken.
    emu.resetVoiceReception(places[1]!.guildId);
    expect(await emu.waitForVoiceFrames(places[1]!.guildId, 50, 15_000)).toMatchObject({ rtpDiscontinuities: 0, undecodable: 0 });
    expect(lines[1]!.ends).toEqual([]);
    // A new thread takes the next join, and it plays.
    emu.resetVoiceReception(places[0]!.guildId);
    const again = join(places[0]!);
    again.play(shortSong);
    await emu.waitForVoiceFrames(places[0]!.guildId, 50, 15_000);
    expect(workers).toHaveLength(3);
    expect(emu.voiceReception(places[0]!.guildId)).toMatchObject({ rtpDiscontinuities: 0, undecodable: 0 });
    expect(emu.findings).toEqual([]);
  });
});
