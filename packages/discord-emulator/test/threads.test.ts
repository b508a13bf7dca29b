/**
 * Threads and forum posts in the emulator, as Discord has them: public (11) and private (12)
 * threads of a text channel, posts in a forum (15, a public thread under the forum), their
 * messages through REST, THREAD_CREATE over the gateway (to a raw socket and to discord.js),
 * interactions run inside them, and permissions that come from the parent channel.
 */
import { once } from 'node:events';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { DiscordAPIError, REST } from '@discordjs/rest';
import { Client, Events, GatewayIntentBits, type AnyThreadChannel } from 'discord.js';
import { ChannelType, GatewayDispatchEvents, GatewayOpcodes, InteractionResponseType, PermissionFlagsBits, Routes } from 'discord-api-types/v10';
import type { APIInteraction, APIMessage, APIThreadChannel, GatewayGuildCreateDispatchData } from 'discord-api-types/v10';
import WebSocket from 'ws';
import { DEFAULT_BOT_PERMISSIONS } from '@music-bot/discord-emulator/store/permissions.js';
import { startDiscordEmulator } from '@music-bot/discord-emulator';
import type { DiscordEmulator, EmulatorChannel, EmulatorGuild, EmulatorMember } from '@music-bot/discord-emulator';

interface Frame {
  op: number;
  t: string | null;
  d: unknown;
}

/** A bot session on a raw socket: every dispatch it receives, in order. */
interface RawSession {
  frames: Frame[];
  waitFor(predicate: (frame: Frame) => boolean): Promise<Frame>;
  close(): void;
}

let emu: DiscordEmulator;
let rest: REST;
let client: Client;
let session: RawSession;
let guild: EmulatorGuild;
let songs: EmulatorChannel;
let forum: EmulatorChannel;
let alice: EmulatorMember;
let bob: EmulatorMember;

async function rawSession(): Promise<RawSession> {
  const socket = new WebSocket(`${emu.gatewayUrl}?v=10&encoding=json`);
  const frames: Frame[] = [];
  socket.on('message', (raw) => {
    const frame = JSON.parse(raw.toString()) as Frame;
    if (frame.op === GatewayOpcodes.Hello) {
      socket.send(JSON.stringify({ op: GatewayOpcodes.Identify, d: { token: emu.botToken, intents: GatewayIntentBits.Guilds, properties: {} } }));
    }
    if (frame.op === GatewayOpcodes.Dispatch) frames.push(frame);
  });
  const waitFor = (predicate: (frame: Frame) => boolean): Promise<Frame> =>
    vi.waitFor(() => {
      const frame = frames.find(predicate);
      if (!frame) throw new Error('no such gateway dispatch yet');
      return frame;
    }, 5_000);
  await waitFor((frame) => frame.t === GatewayDispatchEvents.GuildCreate);
  return { frames, waitFor, close: () => socket.close() };
}

const threadCreate = (threadId: string) => (frame: Frame) =>
  frame.t === GatewayDispatchEvents.ThreadCreate && (frame.d as { id?: string }).id === threadId;

beforeAll(async () => {
  // The test watches the gateway through a session of its own beside the bot's: no identify limit.
  emu = await startDiscordEmulator({ shards: { identifyWindowMs: 0 } });
  guild = emu.createGuild({ name: 'Threads guild' });
  songs = emu.createChannel(guild.id, { name: 'song-requests' });
  forum = emu.createChannel(guild.id, { name: 'weekly-themes', type: ChannelType.GuildForum, topic: 'One post a week' });
  alice = emu.addMember(guild.id, { username: 'alice' });
  bob = emu.addMember(guild.id, { username: 'bob' });
  rest = new REST({ api: emu.apiUrl }).setToken(emu.botToken);
  client = new Client({ intents: [GatewayIntentBits.Guilds], rest: { api: emu.apiUrl } });
  const ready = once(client, Events.ClientReady);
  await client.login(emu.botToken);
  await ready;
  session = await rawSession();
});

afterAll(async () => {
  session?.close();
  await client?.destroy();
  await emu?.close();
});

// Every request made here fits Discord's published API description.
afterEach(() => expect(emu.findings).toEqual([]));

describe('public threads', () => {
  it('tells the bot with THREAD_CREATE, newly created, with the thread’s fields', async () => {
    const seen = new Promise<{ thread: AnyThreadChannel; newlyCreated: boolean }>((resolve) =>
      client.once(Events.ThreadCreate, (thread, newlyCreated) => resolve({ thread, newlyCreated })),
    );
    const thread = emu.createThread(songs.id, { name: 'lofi week', ownerId: alice.id });
    expect(thread).toMatchObject({ type: ChannelType.PublicThread, parentId: songs.id, guildId: guild.id });

    const frame = await session.waitFor(threadCreate(thread.id));
    expect(frame.d).toMatchObject({
      id: thread.id,
      type: ChannelType.PublicThread,
      guild_id: guild.id,
      parent_id: songs.id,
      owner_id: alice.id,
      name: 'lofi week',
      newly_created: true,
      message_count: 0,
      member_count: 1,
      thread_metadata: { archived: false, locked: false, auto_archive_duration: 1440 },
    });
    expect((frame.d as { member?: unknown }).member).toBeUndefined();

    // discord.js takes it as Discord's own: a thread, cached under its parent.
    const { thread: cached, newlyCreated } = await seen;
    expect(newlyCreated).toBe(true);
    expect(cached.id).toBe(thread.id);
    expect(cached.parentId).toBe(songs.id);
    expect(client.channels.cache.get(songs.id)?.isTextBased() && cached.parent?.id).toBe(songs.id);
  });

  it('holds messages: the bot posts in it, the message belongs to the thread, and the thread counts it', async () => {
    const thread = emu.createThread(songs.id, { name: 'requests', ownerId: bob.id });
    const message = (await rest.post(Routes.channelMessages(thread.id), { body: { content: 'Your song is ready' } })) as APIMessage;
    expect(message.channel_id).toBe(thread.id);
    expect(emu.channelMessages(thread.id).map((m) => m.id)).toEqual([message.id]);
    expect(emu.channelMessages(songs.id).some((m) => m.id === message.id)).toBe(false);

    const fetched = (await rest.get(Routes.channel(thread.id))) as APIThreadChannel;
    expect(fetched).toMatchObject({ type: ChannelType.PublicThread, parent_id: songs.id, last_message_id: message.id, message_count: 1, total_message_sent: 1 });
    const listed = (await rest.get(Routes.channelMessages(thread.id))) as APIMessage[];
    expect(listed.map((m) => m.id)).toEqual([message.id]);
  });

  it('is not one of the guild’s channels, but is listed with its threads at the next IDENTIFY', async () => {
    const thread = emu.createThread(songs.id, { name: 'listed' });
    const channels = (await rest.get(Routes.guildChannels(guild.id))) as Array<{ id: string }>;
    expect(channels.map((c) => c.id)).toEqual([songs.id, forum.id]);

    const later = await rawSession();
    try {
      const created = (await later.waitFor((frame) => frame.t === GatewayDispatchEvents.GuildCreate)).d as GatewayGuildCreateDispatchData;
      expect(created.channels.map((c) => c.id)).toEqual([songs.id, forum.id]);
      expect(created.threads.find((t) => t.id === thread.id)).toMatchObject({ parent_id: songs.id, type: ChannelType.PublicThread });
    } finally {
      later.close();
    }
  });
});

describe('private threads', () => {
  it('are not told to a bot that was not added, and are told, with its membership, to one that was', async () => {
    const hidden = emu.createThread(songs.id, { name: 'secret', private: true, ownerId: alice.id, members: [bob.id] });
    const joined = emu.createThread(songs.id, { name: 'with the bot', type: ChannelType.PrivateThread, ownerId: alice.id, members: [emu.botUser.id] });
    expect(hidden.type).toBe(ChannelType.PrivateThread);

    const frame = await session.waitFor(threadCreate(joined.id));
    expect(frame.d).toMatchObject({
      type: ChannelType.PrivateThread,
      parent_id: songs.id,
      newly_created: true,
      member_count: 2,
      thread_metadata: { invitable: true },
      member: { id: joined.id, user_id: emu.botUser.id },
    });
    // Dispatches arrive in order: the hidden thread, made first, would have come before.
    expect(session.frames.some(threadCreate(hidden.id))).toBe(false);

    const later = await rawSession();
    try {
      const created = (await later.waitFor((f) => f.t === GatewayDispatchEvents.GuildCreate)).d as GatewayGuildCreateDispatchData;
      const ids = created.threads.map((t) => t.id);
      expect(ids).toContain(joined.id);
      expect(ids).not.toContain(hidden.id);
    } finally {
      later.close();
    }
  });

  it('show only to their members: a member runs commands in one, another member cannot', async () => {
    const thread = emu.createThread(songs.id, { name: 'duo', private: true, ownerId: alice.id });
    expect(() => emu.runCommand({ guildId: guild.id, channelId: thread.id, userId: bob.id, name: 'ping' })).toThrow(/cannot see thread/);
    const handle = emu.runCommand({ guildId: guild.id, channelId: thread.id, userId: alice.id, name: 'ping' });
    expect(handle.payload).toMatchObject({ channel_id: thread.id, channel: { id: thread.id, type: ChannelType.PrivateThread, parent_id: songs.id } });
  });

  it('take the bot’s messages with Send Messages in Threads, and refuse them without it', async () => {
    const thread = emu.createThread(songs.id, { name: 'bot posts here', private: true });
    const message = (await rest.post(Routes.channelMessages(thread.id), { body: { content: 'hello thread' } })) as APIMessage;
    expect(message.channel_id).toBe(thread.id);

    const withoutThreads = DEFAULT_BOT_PERMISSIONS & ~PermissionFlagsBits.SendMessagesInThreads;
    const muted = emu.createGuild({ name: 'No threads', botPermissions: withoutThreads, everyonePermissions: withoutThreads });
    const general = emu.createChannel(muted.id, { name: 'general' });
    const quiet = emu.createThread(general.id, { name: 'quiet', ownerId: muted.ownerId });
    // The parent still takes the bot's messages: Send Messages is a different permission.
    await rest.post(Routes.channelMessages(general.id), { body: { content: 'in the channel' } });
    const refusal = await rest.post(Routes.channelMessages(quiet.id), { body: { content: 'in the thread' } }).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(DiscordAPIError);
    expect(refusal).toMatchObject({ status: 403, code: 50013 });
  });
});

describe('forum posts', () => {
  it('are public threads under the forum, opened by the author’s message with the thread’s id', async () => {
    const { thread, message } = emu.createForumPost(forum.id, { name: 'Theme: rain', message: 'Songs about rain this week', authorId: alice.id });
    expect(thread).toMatchObject({ type: ChannelType.PublicThread, parentId: forum.id });
    expect(message).toMatchObject({ id: thread.id, channel_id: thread.id, content: 'Songs about rain this week', author: { id: alice.id } });

    const frame = await session.waitFor(threadCreate(thread.id));
    expect(frame.d).toMatchObject({ type: ChannelType.PublicThread, parent_id: forum.id, owner_id: alice.id, newly_created: true, applied_tags: [] });

    const fetchedForum = (await rest.get(Routes.channel(forum.id))) as { type: number; last_message_id: string | null; available_tags: unknown[] };
    expect(fetchedForum).toMatchObject({ type: ChannelType.GuildForum, last_message_id: thread.id, available_tags: [] });
    const fetchedPost = (await rest.get(Routes.channel(thread.id))) as APIThreadChannel;
    // The starter message is not counted, as on Discord.
    expect(fetchedPost).toMatchObject({ parent_id: forum.id, message_count: 0 });
  });

  it('take messages, while the forum itself refuses them as Discord does', async () => {
    const { thread } = emu.createForumPost(forum.id, { name: 'Theme: trains', message: { content: 'Choo choo' } });
    const reply = (await rest.post(Routes.channelMessages(thread.id), { body: { content: 'A song about trains' } })) as APIMessage;
    expect(reply.channel_id).toBe(thread.id);

    const refusal = await rest.post(Routes.channelMessages(forum.id), { body: { content: 'straight into the forum' } }).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(DiscordAPIError);
    expect(refusal).toMatchObject({ status: 400, code: 50008 });
    expect(emu.channelMessages(forum.id)).toEqual([]);
  });

  it('are the only kind of thread a forum holds', () => {
    expect(() => emu.createThread(forum.id, { name: 'not a post' })).toThrow(/forum/);
  });
});

describe('interactions in a thread', () => {
  it('carry the thread as channel_id and channel (type, parent), and their replies land in the thread', async () => {
    const { thread } = emu.createForumPost(forum.id, { name: 'Theme: space', message: 'Stars', authorId: bob.id });
    const handle = emu.runCommand({ guildId: guild.id, channelId: thread.id, userId: bob.id, name: 'ping' });
    const payload = handle.payload as APIInteraction & { channel: { id: string; type: number; parent_id: string | null } };
    expect(payload.channel_id).toBe(thread.id);
    expect(payload.channel).toMatchObject({ id: thread.id, type: ChannelType.PublicThread, parent_id: forum.id, guild_id: guild.id });

    const callback = await fetch(`${emu.apiUrl}/v10/interactions/${handle.id}/${handle.token}/callback`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: InteractionResponseType.ChannelMessageWithSource, data: { content: 'pong' } }),
    });
    expect(callback.status).toBe(204);
    const reply = handle.original();
    expect(reply).toMatchObject({ channel_id: thread.id, content: 'pong' });
    expect(emu.channelMessages(thread.id).map((m) => m.id)).toContain(reply?.id);
  });

  it('have the parent channel’s permissions, and lose access with it', async () => {
    const locked = emu.createChannel(guild.id, { name: 'to be locked' });
    const thread = emu.createThread(locked.id, { name: 'inside', ownerId: alice.id });
    const inThread = emu.runCommand({ guildId: guild.id, channelId: thread.id, userId: alice.id, name: 'ping' }).payload;
    const inParent = emu.runCommand({ guildId: guild.id, channelId: locked.id, userId: alice.id, name: 'ping' }).payload;
    expect(inThread.app_permissions).toBe(inParent.app_permissions);
    expect(inThread.member?.permissions).toBe(inParent.member?.permissions);

    emu.denyChannel(locked.id);
    const refusal = await rest.post(Routes.channelMessages(thread.id), { body: { content: 'still here?' } }).catch((error: unknown) => error);
    expect(refusal).toMatchObject({ status: 403, code: 50001 });
  });
});

describe('age-restricted channels', () => {
  it('carry nsfw in the channel object, the interaction’s channel and discord.js’s cache; a thread has none and follows its parent', async () => {
    const adult = emu.createChannel(guild.id, { name: 'after-dark', nsfw: true });
    expect(adult.nsfw).toBe(true);
    expect(songs.nsfw).toBe(false);
    expect(await rest.get(Routes.channel(adult.id))).toMatchObject({ id: adult.id, nsfw: true });
    expect(await rest.get(Routes.channel(songs.id))).toMatchObject({ id: songs.id, nsfw: false });
    const inChannel = emu.runCommand({ guildId: guild.id, channelId: adult.id, userId: alice.id, name: 'ping' }).payload as APIInteraction & { channel: { nsfw?: boolean } };
    expect(inChannel.channel.nsfw).toBe(true);

    const thread = emu.createThread(adult.id, { name: 'late talk', ownerId: alice.id });
    const inThread = emu.runCommand({ guildId: guild.id, channelId: thread.id, userId: alice.id, name: 'ping' }).payload as APIInteraction & { channel: Record<string, unknown> };
    expect(inThread.channel).toMatchObject({ id: thread.id, parent_id: adult.id });
    expect(inThread.channel).not.toHaveProperty('nsfw');
    expect(await rest.get(Routes.channel(thread.id))).not.toHaveProperty('nsfw');

    await vi.waitFor(() => expect(client.channels.cache.get(adult.id)).toMatchObject({ nsfw: true }));
    // A moderator lifts the restriction: CHANNEL_UPDATE, and the next interaction says so.
    emu.setChannelNsfw(adult.id, false);
    await vi.waitFor(() => expect(client.channels.cache.get(adult.id)).toMatchObject({ nsfw: false }));
    const after = emu.runCommand({ guildId: guild.id, channelId: adult.id, userId: alice.id, name: 'ping' }).payload as APIInteraction & { channel: { nsfw?: boolean } };
    expect(after.channel.nsfw).toBe(false);
    expect(() => emu.setChannelNsfw(thread.id, true)).toThrow(/only a guild channel that is not a thread/);
  });
});
