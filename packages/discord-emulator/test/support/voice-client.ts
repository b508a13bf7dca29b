/**
 * The bot's side of voice for the emulator's tests: discord.js with GUILD_VOICE_STATES, and
 * @discordjs/voice joining through `guild.voiceAdapterCreator` and playing an Ogg Opus file.
 */
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { createReadStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import {
  AudioPlayerStatus,
  createAudioPlayer,
  createAudioResource,
  entersState,
  getVoiceConnections,
  joinVoiceChannel,
  StreamType,
  VoiceConnectionStatus,
} from '@discordjs/voice';
import type { AudioPlayer, VoiceConnection } from '@discordjs/voice';
import { Client, Events, GatewayIntentBits } from 'discord.js';
import type { DiscordEmulator } from '@music-bot/discord-emulator';

export async function voiceBot(emu: DiscordEmulator, intents: GatewayIntentBits[] = [GatewayIntentBits.Guilds, GatewayIntentBits.GuildVoiceStates]): Promise<Client> {
  const client = new Client({ intents, rest: { api: emu.apiUrl } });
  const ready = once(client, Events.ClientReady);
  await client.login(emu.botToken);
  await ready;
  await emu.waitForBotReady();
  return client;
}

export function join(client: Client, guildId: string, channelId: string, options: { daveEncryption?: boolean } = {}): VoiceConnection {
  const guild = client.guilds.cache.get(guildId);
  if (!guild) throw new Error(`the client has no guild ${guildId}`);
  return joinVoiceChannel({ guildId, channelId, adapterCreator: guild.voiceAdapterCreator, selfDeaf: true, group: client.user?.id ?? 'default', ...options });
}

/** Destroys the client's voice connections (before closing the emulator, so none tries to resume). */
export function leaveAll(client: Client | undefined): void {
  if (!client?.user) return;
  for (const connection of getVoiceConnections(client.user.id)?.values() ?? []) connection.destroy();
}

export async function joined(connection: VoiceConnection, timeoutMs = 10_000): Promise<VoiceConnection> {
  return entersState(connection, VoiceConnectionStatus.Ready, timeoutMs);
}

/** Plays an Ogg Opus file to its end. */
export async function playFile(connection: VoiceConnection, path: string, timeoutMs = 20_000): Promise<AudioPlayer> {
  const player = createAudioPlayer();
  connection.subscribe(player);
  player.play(createAudioResource(createReadStream(path), { inputType: StreamType.OggOpus }));
  await entersState(player, AudioPlayerStatus.Playing, 5_000);
  await entersState(player, AudioPlayerStatus.Idle, timeoutMs);
  return player;
}

const toneDirs: string[] = [];

/** Removes the files {@link makeTone} made. */
export function removeTones(): void {
  for (const dir of toneDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/**
 * A tone whose loudness rises and falls (so envelopes can be told apart), `seconds` long, as
 * Ogg Opus; and the same file decoded back to 48 kHz stereo s16le, the reference.
 */
export function makeTone(seconds: number, frequency = 440, wobbleHz = 0.7): { path: string; pcm: Int16Array } {
  // A wobble that also grows over the file: no two stretches of it alike.
  const dir = mkdtempSync(joinPath(tmpdir(), 'emu-voice-'));
  toneDirs.push(dir);
  const path = joinPath(dir, `tone-${frequency}-${seconds}.ogg`);
  execFileSync('ffmpeg', [
    '-hide_banner', '-loglevel', 'error', '-y',
    '-f', 'lavfi', '-i', `sine=frequency=${frequency}:duration=${seconds}:sample_rate=48000`,
    '-af', `volume='0.05+0.95*(0.2+0.8*t/${seconds})*abs(sin(2*PI*t*${wobbleHz}))':eval=frame`,
    '-ac', '2', '-ar', '48000', '-c:a', 'libopus', '-b:a', '96k', path,
  ]);
  const raw = execFileSync('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-i', path, '-f', 's16le', '-ac', '2', '-ar', '48000', '-'], { maxBuffer: 256 * 1024 * 1024 });
  return { path, pcm: new Int16Array(raw.buffer, raw.byteOffset, raw.byteLength / 2) };
}

/** The end of a voice test file: its tones, the bot's connections, the client and the emulator. */
export async function closeVoiceTest(client: Client | undefined, emu: DiscordEmulator | undefined): Promise<void> {
  removeTones();
  leaveAll(client);
  await client?.destroy();
  await emu?.close();
}
