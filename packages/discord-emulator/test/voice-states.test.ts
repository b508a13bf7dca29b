/**
 * Voice states and the rules of joining: members joining and leaving as discord.js sees them,
 * GUILD_CREATE's voice states, Update Voice State refused without Connect or over the user limit
 * (Discord answers nothing; the emulator records why), frames dropped without Speak, leaving,
 * two guilds playing at once, and the voice WebSocket resumed after the emulator drops it.
 */
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChannelType, GatewayDispatchEvents, GatewayOpcodes, OverwriteType, PermissionFlagsBits } from 'discord-api-types/v10';
import { Client, Events, GatewayIntentBits } from 'discord.js';
import { VoiceConnectionStatus, entersState } from '@discordjs/voice';
import { pcmEnvelope, startDiscordEmulator } from '@music-bot/discord-emulator';
import type { DiscordEmulator, EmulatorGuild, EmulatorMember } from '@music-bot/discord-emulator';
import { closeVoiceTest, join, joined, makeTone, playFile, voiceBot } from './support/voice-client.js';


let emu: DiscordEmulator;
let client: Client;
let guild: EmulatorGuild;
let alice: EmulatorMember;
let bob: EmulatorMember;

beforeAll(async () => {
  // A second client identifies beside the first: no identify window.
  emu = await startDiscordEmulator({ voice: { dave: false }, shards: { identifyWindowMs: 0 } });
  guild = emu.createGuild({ name: 'Rules guild' });
  alice = emu.addMember(guild.id, { username: 'alice' });
  bob = emu.addMember(guild.id, { username: 'bob' });
  client = await voiceBot(emu);
});

afterAll(() => closeVoiceTest(client, emu));

function voiceChannel(name: string, extra: { userLimit?: number; denyBot?: bigint } = {}) {
  return emu.createChannel(guild.id, {
    name,
    type: ChannelType.GuildVoice,
    userLimit: extra.userLimit,
    permissionOverwrites: extra.denyBot ? [{ id: emu.botUser.id, type: OverwriteType.Member, allow: '0', deny: extra.denyBot.toString() }] : undefined,
  });
}

describe('members in voice', () => {
  it('tells the bot as members join, move and leave, and lists them in GUILD_CREATE', async () => {
    const first = voiceChannel('First');
    const second = voiceChannel('Second');
    const states = () => client.guilds.cache.get(guild.id)?.voiceStates.cache;
    await expect.poll(() => client.channels.cache.has(second.id)).toBe(true);
    emu.joinVoice(alice.id, first.id);
    await expect.poll(() => states()?.get(alice.id)?.channelId).toBe(first.id);
    emu.joinVoice(alice.id, second.id);
    await expect.poll(() => states()?.get(alice.id)?.channelId).toBe(second.id);
    expect(emu.voiceMembers(second.id)).toEqual([alice.id]);
    expect(emu.voiceMembers(first.id)).toEqual([]);
    emu.joinVoice(bob.id, first.id);
    emu.leaveVoice(guild.id, alice.id);
    await expect.poll(() => states()?.get(alice.id)?.channelId ?? null).toBeNull();
    expect(emu.voiceChannelOf(guild.id, alice.id)).toBeNull();

    // A second client with GUILD_VOICE_STATES finds bob in his channel from GUILD_CREATE.
    const other = await voiceBot(emu);
    try {
      expect(other.guilds.cache.get(guild.id)?.voiceStates.cache.get(bob.id)?.channelId).toBe(first.id);
    } finally {
      await other.destroy();
    }
    emu.leaveVoice(guild.id, bob.id);
  });
});

describe('joining refused', () => {
  it('without Connect: nothing comes back, and the refusal names the permission', async () => {
    const locked = voiceChannel('Locked', { denyBot: PermissionFlagsBits.Connect });
    const connection = join(client, guild.id, locked.id, { daveEncryption: false });
    try {
      await expect.poll(() => emu.voiceRefusals.find((refusal) => refusal.channelId === locked.id)).toMatchObject({ reason: 'missing-permissions', missing: ['Connect'] });
      expect(connection.state.status).toBe(VoiceConnectionStatus.Signalling);
      expect(emu.voiceMembers(locked.id)).toEqual([]);
    } finally {
      connection.destroy();
    }
  });

  it('over the user limit, unless the bot may move members', async () => {
    const small = voiceChannel('Small', { userLimit: 1 });
    emu.joinVoice(alice.id, small.id);
    const connection = join(client, guild.id, small.id, { daveEncryption: false });
    try {
      await expect.poll(() => emu.voiceRefusals.find((refusal) => refusal.channelId === small.id)).toMatchObject({ reason: 'channel-full' });
      expect(emu.voiceMembers(small.id)).toEqual([alice.id]);
    } finally {
      connection.destroy();
      emu.leaveVoice(guild.id, alice.id);
    }

    const moverGuild = emu.createGuild({ name: 'Mover guild', botPermissions: PermissionFlagsBits.ViewChannel | PermissionFlagsBits.MoveMembers });
    await expect.poll(() => client.guilds.cache.has(moverGuild.id)).toBe(true);
    const carol = emu.addMember(moverGuild.id, { username: 'carol' });
    const full = emu.createChannel(moverGuild.id, { name: 'Full', type: ChannelType.GuildVoice, userLimit: 1 });
    await expect.poll(() => client.channels.cache.has(full.id)).toBe(true);
    emu.joinVoice(carol.id, full.id);
    const mover = await joined(join(client, moverGuild.id, full.id, { daveEncryption: false }));
    expect(emu.voiceMembers(full.id).sort()).toEqual([carol.id, emu.botUser.id].sort());
    mover.destroy();
    await expect.poll(() => emu.voiceMembers(full.id)).toEqual([carol.id]);
  });

  it('an Update Voice State that does not fit Discord\'s payload is a finding', async () => {
    const before = emu.findings.length;
    client.guilds.cache.get(guild.id)?.shard.send({ op: GatewayOpcodes.VoiceStateUpdate, d: { guild_id: guild.id, channel_id: null } });
    await expect.poll(() => emu.voiceRefusals.at(-1)?.reason).toBe('invalid-payload');
    expect(emu.findings.slice(before)).toMatchObject([{ kind: 'voice-protocol', details: ['self_mute must be a boolean', 'self_deaf must be a boolean'] }]);
    emu.clearRecords();
  });
});

describe('speaking', () => {
  it('drops the frames of a bot without Speak', async () => {
    const quiet = voiceChannel('Quiet', { denyBot: PermissionFlagsBits.Speak });
    const connection = await joined(join(client, guild.id, quiet.id, { daveEncryption: false }));
    try {
      emu.resetVoiceReception(guild.id);
      await playFile(connection, makeTone(1).path);
      await expect.poll(() => emu.voiceReception(guild.id).droppedNoSpeak).toBeGreaterThanOrEqual(50);
      expect(emu.voiceReception(guild.id).frames).toBe(0);
    } finally {
      connection.destroy();
    }
    await expect.poll(() => emu.voiceMembers(quiet.id)).toEqual([]);
  });
});

describe('two guilds and a resume', () => {
  it('hears two guilds at once, each its own song', async () => {
    const other = emu.createGuild({ name: 'Second guild' });
    await expect.poll(() => client.guilds.cache.has(other.id)).toBe(true);
    const here = voiceChannel('Here');
    const there = emu.createChannel(other.id, { name: 'There', type: ChannelType.GuildVoice });
    await expect.poll(() => client.channels.cache.has(there.id)).toBe(true);
    const [low, high] = [makeTone(2, 220, 0.5), makeTone(2, 660, 1.7)];
    const [a, b] = await Promise.all([joined(join(client, guild.id, here.id, { daveEncryption: false })), joined(join(client, other.id, there.id, { daveEncryption: false }))]);
    emu.resetVoiceReception(guild.id);
    emu.resetVoiceReception(other.id);
    await Promise.all([playFile(a, low.path), playFile(b, high.path)]);
    const [heardHere, heardThere] = await Promise.all([emu.waitForVoiceFrames(guild.id, 100), emu.waitForVoiceFrames(other.id, 100)]);
    expect(emu.compareEnvelope(heardHere.envelope, pcmEnvelope(low.pcm)).matches).toBe(true);
    expect(emu.compareEnvelope(heardThere.envelope, pcmEnvelope(high.pcm)).matches).toBe(true);
    expect(emu.compareEnvelope(heardHere.envelope, pcmEnvelope(high.pcm)).matches).toBe(false);
    a.destroy();
    b.destroy();
    await expect.poll(() => [emu.voiceMembers(here.id), emu.voiceMembers(there.id)]).toEqual([[], []]);
  });

  it('the bot resumes its voice session after the emulator drops the socket, and the song goes on', async () => {
    const channel = voiceChannel('Resumable');
    const connection = await joined(join(client, guild.id, channel.id, { daveEncryption: false }));
    const resumesBefore = emu.voiceStats.resumes;
    emu.resetVoiceReception(guild.id);
    const playing = playFile(connection, makeTone(3).path);
    await emu.waitForVoiceFrames(guild.id, 25);
    expect(emu.dropVoiceConnection(guild.id)).toBe(true);
    await expect.poll(() => emu.voiceStats.resumes).toBe(resumesBefore + 1);
    await playing;
    const heard = await emu.waitForVoiceFrames(guild.id, 150);
    expect(heard.connected).toBe(true);
    expect(heard.seconds).toBeGreaterThan(2.9);
    connection.destroy();
    await expect.poll(() => emu.voiceMembers(channel.id)).toEqual([]);
  });
});

describe('moderators', () => {
  it('move the bot: a new voice server, and @discordjs/voice plays on there', async () => {
    const [from, to] = [voiceChannel('Before move'), voiceChannel('After move')];
    const connection = await joined(join(client, guild.id, from.id, { daveEncryption: false }));
    const identifies = emu.voiceStats.identifies;
    emu.joinVoice(emu.botUser.id, to.id);
    await expect.poll(() => emu.voiceStats.identifies).toBe(identifies + 1);
    await joined(connection);
    expect(emu.voiceMembers(to.id)).toEqual([emu.botUser.id]);
    emu.resetVoiceReception(guild.id);
    await playFile(connection, makeTone(1).path);
    const heard = await emu.waitForVoiceFrames(guild.id, 50);
    expect(heard.channelId).toBe(to.id);
    connection.destroy();
    await expect.poll(() => emu.voiceMembers(to.id)).toEqual([]);
  });

  it('disconnect the bot: its voice connection closes with 4014', async () => {
    const channel = voiceChannel('Kicked from');
    const connection = await joined(join(client, guild.id, channel.id, { daveEncryption: false }));
    emu.leaveVoice(guild.id, emu.botUser.id);
    await entersState(connection, VoiceConnectionStatus.Disconnected, 5_000);
    expect(connection.state).toMatchObject({ closeCode: 4014 });
    expect(emu.voiceMembers(channel.id)).toEqual([]);
    connection.destroy();
  });

  it('revoke Speak while the bot plays: the rest of its frames are dropped', async () => {
    const channel = voiceChannel('Revoked');
    const connection = await joined(join(client, guild.id, channel.id, { daveEncryption: false }));
    emu.resetVoiceReception(guild.id);
    const playing = playFile(connection, makeTone(2).path);
    await emu.waitForVoiceFrames(guild.id, 20);
    emu.setPermissionOverwrite(channel.id, { id: emu.botUser.id, type: OverwriteType.Member, allow: '0', deny: PermissionFlagsBits.Speak.toString() });
    await playing;
    await expect.poll(() => emu.voiceReception(guild.id).droppedNoSpeak).toBeGreaterThan(50);
    expect(emu.voiceReception(guild.id).frames).toBeLessThan(60);
    connection.destroy();
    await expect.poll(() => emu.voiceMembers(channel.id)).toEqual([]);
  });
});

describe('the gateway side of op 4', () => {
  it('answers a join with VOICE_STATE_UPDATE (with session_id) and then VOICE_SERVER_UPDATE', async () => {
    const channel = voiceChannel('Raw');
    const raw: { t: string; d: Record<string, unknown> }[] = [];
    const onRaw = (packet: { t: string; d: Record<string, unknown> }): void => {
      if (packet.t === GatewayDispatchEvents.VoiceServerUpdate || (packet.t === GatewayDispatchEvents.VoiceStateUpdate && packet.d.user_id === emu.botUser.id)) raw.push(packet);
    };
    client.on(Events.Raw, onRaw);
    try {
      client.guilds.cache.get(guild.id)?.shard.send({ op: GatewayOpcodes.VoiceStateUpdate, d: { guild_id: guild.id, channel_id: channel.id, self_mute: false, self_deaf: true } });
      await expect.poll(() => raw.length).toBe(2);
      expect(raw[0]).toMatchObject({ t: 'VOICE_STATE_UPDATE', d: { guild_id: guild.id, channel_id: channel.id, user_id: emu.botUser.id, self_deaf: true, self_mute: false } });
      expect(raw[0]?.d.session_id).toEqual(expect.any(String));
      expect(raw[1]).toMatchObject({ t: 'VOICE_SERVER_UPDATE', d: { guild_id: guild.id, endpoint: emu.voiceEndpoint, token: expect.any(String) } });
      expect(emu.voiceEndpoint).toMatch(/^127\.0\.0\.1:\d+$/);
      client.guilds.cache.get(guild.id)?.shard.send({ op: GatewayOpcodes.VoiceStateUpdate, d: { guild_id: guild.id, channel_id: null, self_mute: false, self_deaf: false } });
      await expect.poll(() => raw.length).toBe(3);
      expect(raw[2]).toMatchObject({ t: 'VOICE_STATE_UPDATE', d: { channel_id: null, user_id: emu.botUser.id } });
      expect(emu.voiceMembers(channel.id)).toEqual([]);
    } finally {
      client.off(Events.Raw, onRaw);
    }
  });

  it('a bot without GUILD_VOICE_STATES gets a finding: it would never see its own state', async () => {
    const blind = new Client({ intents: [GatewayIntentBits.Guilds], rest: { api: emu.apiUrl } });
    const ready = once(blind, Events.ClientReady);
    await blind.login(emu.botToken);
    await ready;
    try {
      const channel = voiceChannel('Blind');
      const before = emu.findings.length;
      blind.guilds.cache.get(guild.id)?.shard.send({ op: GatewayOpcodes.VoiceStateUpdate, d: { guild_id: guild.id, channel_id: channel.id, self_mute: false, self_deaf: false } });
      await expect.poll(() => emu.findings.length).toBe(before + 1);
      expect(emu.findings.at(-1)).toMatchObject({ kind: 'voice-protocol', message: expect.stringContaining('GUILD_VOICE_STATES') });
      blind.guilds.cache.get(guild.id)?.shard.send({ op: GatewayOpcodes.VoiceStateUpdate, d: { guild_id: guild.id, channel_id: null, self_mute: false, self_deaf: false } });
      await expect.poll(() => emu.voiceMembers(channel.id)).toEqual([]);
    } finally {
      await blind.destroy();
      emu.clearRecords();
    }
  });
});
