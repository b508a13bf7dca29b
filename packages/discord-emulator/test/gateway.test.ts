/**
 * The emulator's gateway with the real discord.js client: heartbeats and their ACKs,
 * resuming after the emulator drops the socket (with replay of what was missed) or after an
 * outage that refused reconnects, members
 * with the GUILD_MEMBERS intent, and the protocol checks on a raw socket.
 */
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, Events, GatewayIntentBits } from 'discord.js';
import { GatewayCloseCodes, GatewayDispatchEvents, GatewayOpcodes } from 'discord-api-types/v10';
import WebSocket from 'ws';
import { startDiscordEmulator } from '@music-bot/discord-emulator';
import type { DiscordEmulator, EmulatorChannel, EmulatorGuild, EmulatorMember } from '@music-bot/discord-emulator';

let emu: DiscordEmulator;
let client: Client;
let guild: EmulatorGuild;
let channel: EmulatorChannel;
let bob: EmulatorMember;

beforeAll(async () => {
  // A short interval so discord.js heartbeats within the test; raw sessions identify beside
  // discord.js's, so no identify limit here (see "shards" below for it).
  emu = await startDiscordEmulator({ heartbeatIntervalMs: 200, shards: { identifyWindowMs: 0 } });
  guild = emu.createGuild({ name: 'Gateway guild' });
  channel = emu.createChannel(guild.id, { name: 'general' });
  bob = emu.addMember(guild.id, { username: 'bob' });
  client = new Client({ intents: [GatewayIntentBits.Guilds, GatewayIntentBits.GuildMembers], rest: { api: emu.apiUrl } });
  const ready = once(client, Events.ClientReady);
  await client.login(emu.botToken);
  await ready;
  await emu.waitForBotReady();
});

afterAll(async () => {
  await client?.destroy();
  await emu?.close();
});

/** Reads gateway frames from a raw socket. */
function frames(socket: WebSocket): { next: () => Promise<{ op: number; t: string | null; s: number | null; d: unknown }> } {
  const queue: Array<{ op: number; t: string | null; s: number | null; d: unknown }> = [];
  const waiters: Array<(frame: (typeof queue)[number]) => void> = [];
  socket.on('message', (raw) => {
    const frame = JSON.parse(raw.toString()) as (typeof queue)[number];
    const waiter = waiters.shift();
    if (waiter) waiter(frame);
    else queue.push(frame);
  });
  return {
    next: () => {
      const frame = queue.shift();
      return frame ? Promise.resolve(frame) : new Promise((resolve) => waiters.push(resolve));
    },
  };
}

describe('the emulated gateway', () => {
  it('sends every member with the GUILD_MEMBERS intent', () => {
    const members = client.guilds.cache.get(guild.id)?.members.cache;
    expect(members?.get(bob.id)?.user.username).toBe('bob');
    expect(members?.has(emu.botUser.id)).toBe(true);
  });

  it('tells a role given or taken as GUILD_MEMBER_UPDATE, once per change', async () => {
    const dj = emu.createRole(guild.id, { name: 'DJ' });
    const updates: string[][] = [];
    const onUpdate = (_old: unknown, member: { id: string; roles: { cache: Map<string, unknown> } }) => {
      if (member.id === bob.id) updates.push([...member.roles.cache.keys()].filter((id) => id !== guild.id));
    };
    client.on(Events.GuildMemberUpdate, onUpdate);
    try {
      expect(emu.addMemberRole(guild.id, bob.id, dj.id).roles).toEqual([dj.id]);
      await expect.poll(() => updates).toEqual([[dj.id]]);
      expect(emu.member(guild.id, bob.id)?.roles).toEqual([dj.id]);

      // Given twice: nothing changes, nothing is sent; then taken.
      emu.addMemberRole(guild.id, bob.id, dj.id);
      expect(emu.removeMemberRole(guild.id, bob.id, dj.id).roles).toEqual([]);
      await expect.poll(() => updates).toEqual([[dj.id], []]);
      expect(() => emu.addMemberRole(guild.id, bob.id, 'no-such-role')).toThrow(/no role/);
      expect(() => emu.addMemberRole(guild.id, bob.id, guild.botRoleId)).toThrow(/managed/);
    } finally {
      client.off(Events.GuildMemberUpdate, onUpdate);
    }
  });

  it('acknowledges heartbeats, on schedule and on request', async () => {
    await emu.waitForHeartbeats(2);
    expect(emu.gatewayStats.heartbeatAcks).toBe(emu.gatewayStats.heartbeats);
    // discord.js measures latency from the ACK; -1 means it never got one.
    expect(client.ws.ping).toBeGreaterThanOrEqual(0);
    const before = emu.gatewayStats.heartbeatAcks;
    emu.requestHeartbeat();
    await emu.waitForHeartbeats(before + 1);
  });

  it('lets discord.js resume after a drop and replays what it missed', async () => {
    const identifies = emu.gatewayStats.identifies;
    const resumed = once(client, Events.ShardResume);
    const created = once(client, Events.ChannelCreate);
    const resumedOnEmulator = emu.waitForResume();
    expect(emu.dropGatewayConnections()).toBe(1);
    // Created while the bot is disconnected: only a replay on RESUME can deliver it.
    const missed = emu.createChannel(guild.id, { name: 'while-away' });
    await resumedOnEmulator;
    await resumed;
    const [channelCreated] = (await created) as [{ id: string }];
    expect(channelCreated.id).toBe(missed.id);
    expect(client.channels.cache.get(missed.id)).toBeDefined();
    expect(emu.gatewayStats.identifies).toBe(identifies);
    expect(emu.gatewayStats.resumes).toBe(1);

    // Interactions still reach the resumed session.
    const answered = new Promise<string>((resolve) => {
      client.once(Events.InteractionCreate, (interaction) => {
        if (interaction.isChatInputCommand()) void interaction.reply('back').then(() => resolve(interaction.commandName));
      });
    });
    const handle = emu.runCommand({ guildId: guild.id, channelId: channel.id, userId: bob.id, name: 'ping' });
    expect(await answered).toBe('ping');
    expect((await handle.waitForResponse()).data).toMatchObject({ content: 'back' });
  });

  it('refuses connections during an outage, and lets discord.js resume once it ends', async () => {
    const resumes = emu.gatewayStats.resumes;
    emu.setGatewayAvailable(false);
    // The drop is seen, and a new socket is turned away at the upgrade.
    await expect.poll(() => client.ws.shards.first()?.status, { timeout: 5_000 }).not.toBe(0);
    const refused = new WebSocket(`${emu.gatewayUrl}?v=10&encoding=json`);
    const [error] = (await once(refused, 'error')) as [Error];
    expect(error.message).toMatch(/503/);
    expect(emu.gatewayStats.resumes).toBe(resumes);

    const resumed = emu.waitForResume(60_000);
    emu.setGatewayAvailable(true);
    await resumed;
    await expect.poll(() => client.ws.shards.first()?.status, { timeout: 10_000 }).toBe(0);
  }, 90_000);

  it('speaks the protocol to a raw client: HELLO, READY with sequence numbers, RESUME and INVALID_SESSION', async () => {
    const socket = new WebSocket(`${emu.gatewayUrl}?v=10&encoding=json`);
    const reader = frames(socket);
    const hello = await reader.next();
    expect(hello).toMatchObject({ op: GatewayOpcodes.Hello, d: { heartbeat_interval: 200 } });
    socket.send(JSON.stringify({ op: GatewayOpcodes.Identify, d: { token: emu.botToken, intents: 1, properties: {} } }));
    const ready = await reader.next();
    expect(ready).toMatchObject({ op: 0, t: GatewayDispatchEvents.Ready, s: 1 });
    const readyData = ready.d as { session_id: string; resume_gateway_url: string; guilds: unknown[]; application: { id: string } };
    expect(readyData.guilds).toEqual([{ id: guild.id, unavailable: true }]);
    expect(readyData.application.id).toBe(emu.applicationId);
    expect(readyData.resume_gateway_url).toMatch(/^ws:\/\//);
    const guildCreate = await reader.next();
    expect(guildCreate).toMatchObject({ op: 0, t: GatewayDispatchEvents.GuildCreate, s: 2 });
    // Without GUILD_MEMBERS only the bot's own member comes along.
    expect((guildCreate.d as { members: Array<{ user: { id: string } }> }).members.map((member) => member.user.id)).toEqual([emu.botUser.id]);
    socket.send(JSON.stringify({ op: GatewayOpcodes.Heartbeat, d: 2 }));
    expect(await reader.next()).toMatchObject({ op: GatewayOpcodes.HeartbeatAck });
    socket.close();
    await once(socket, 'close');

    const resumed = new WebSocket(`${readyData.resume_gateway_url}?v=10&encoding=json`);
    const resumeReader = frames(resumed);
    await resumeReader.next();
    emu.createRole(guild.id, { name: 'missed-role', permissions: 0n });
    resumed.send(JSON.stringify({ op: GatewayOpcodes.Resume, d: { token: emu.botToken, session_id: readyData.session_id, seq: 2 } }));
    const replayed = await resumeReader.next();
    expect(replayed).toMatchObject({ t: GatewayDispatchEvents.GuildRoleCreate, s: 3 });
    expect(await resumeReader.next()).toMatchObject({ t: GatewayDispatchEvents.Resumed, s: 4 });
    resumed.send(JSON.stringify({ op: GatewayOpcodes.Resume, d: { token: emu.botToken, session_id: 'unknown', seq: 1 } }));
    expect(await resumeReader.next()).toMatchObject({ op: GatewayOpcodes.InvalidSession, d: false });
    resumed.close();
  });

  it('closes with 4004 on a wrong token and 4012 on another API version', async () => {
    const wrongToken = new WebSocket(`${emu.gatewayUrl}?v=10&encoding=json`);
    await once(wrongToken, 'message');
    wrongToken.send(JSON.stringify({ op: GatewayOpcodes.Identify, d: { token: 'nope', intents: 1, properties: {} } }));
    const [code] = (await once(wrongToken, 'close')) as [number];
    expect(code).toBe(GatewayCloseCodes.AuthenticationFailed);

    const oldVersion = new WebSocket(`${emu.gatewayUrl}?v=9&encoding=json`);
    const [versionCode] = (await once(oldVersion, 'close')) as [number];
    expect(versionCode).toBe(GatewayCloseCodes.InvalidAPIVersion);
    expect(emu.findings.some((finding) => finding.kind === 'gateway-protocol' && finding.message.includes('version 9'))).toBe(true);
  });
});

describe('shards', () => {
  /** A raw session that identifies as `shard` and reads READY and the GUILD_CREATEs that follow. */
  async function identify(emulator: DiscordEmulator, shard?: [number, number]) {
    const socket = new WebSocket(`${emulator.gatewayUrl}?v=10&encoding=json`);
    const reader = frames(socket);
    await reader.next();
    socket.send(JSON.stringify({ op: GatewayOpcodes.Identify, d: { token: emulator.botToken, intents: 1, properties: {}, ...(shard && { shard }) } }));
    return { socket, reader, first: await reader.next() };
  }

  it('recommends its count, sends each guild to shard (id >> 22) % count, and each interaction to its guild\'s shard', async () => {
    const emulator = await startDiscordEmulator({ shards: { recommended: 2, maxConcurrency: 2 } });
    try {
      const gateway = (await (await fetch(`${emulator.apiUrl}/v10/gateway/bot`, { headers: { authorization: `Bot ${emulator.botToken}` } })).json()) as {
        shards: number;
        session_start_limit: { max_concurrency: number };
      };
      expect(gateway.shards).toBe(2);
      expect(gateway.session_start_limit.max_concurrency).toBe(2);

      // Ids of consecutive milliseconds: (id >> 22) is the time, so these alternate between the shards.
      const base = 1_300_000_000_000n;
      const guilds = Array.from({ length: 8 }, (_, i) => emulator.createGuild({ id: String((base + BigInt(i)) << 22n), name: `Shard guild ${i}` }));
      const shardOf = (id: string) => Number((BigInt(id) >> 22n) % 2n);
      // Two at once: max_concurrency 2 lets shards 0 and 1 identify in the same 5 s.
      const [zero, one] = await Promise.all([identify(emulator, [0, 2]), identify(emulator, [1, 2])]);
      for (const [session, id] of [[zero, 0], [one, 1]] as const) {
        expect(session.first).toMatchObject({ t: GatewayDispatchEvents.Ready, d: { shard: [id, 2] } });
        const listed = (session.first.d as { guilds: Array<{ id: string }> }).guilds.map((guild) => guild.id).sort();
        expect(listed).toEqual(guilds.filter((guild) => shardOf(guild.id) === id).map((guild) => guild.id).sort());
      }
      expect(guilds.filter((guild) => shardOf(guild.id) === 1)).toHaveLength(4);

      for (const guild of guilds) {
        const channel = emulator.createChannel(guild.id, { name: 'general' });
        const member = emulator.addMember(guild.id, { username: `member-${guild.id}` });
        emulator.runCommand({ guildId: guild.id, channelId: channel.id, userId: member.id, name: 'ping' });
      }
      const interactionsOn = async (session: Awaited<ReturnType<typeof identify>>, count: number) => {
        const guildIds: string[] = [];
        while (guildIds.length < count) {
          const frame = await session.reader.next();
          if (frame.t === GatewayDispatchEvents.InteractionCreate) guildIds.push((frame.d as { guild_id: string }).guild_id);
        }
        return guildIds.sort();
      };
      const onZero = guilds.filter((guild) => shardOf(guild.id) === 0).map((guild) => guild.id).sort();
      const onOne = guilds.filter((guild) => shardOf(guild.id) === 1).map((guild) => guild.id).sort();
      expect(await interactionsOn(zero, onZero.length)).toEqual(onZero);
      expect(await interactionsOn(one, onOne.length)).toEqual(onOne);
      zero.socket.close();
      one.socket.close();
    } finally {
      await emulator.close();
    }
  });

  it('refuses an IDENTIFY within 5 s of another in its max_concurrency bucket, and an invalid shard', async () => {
    const emulator = await startDiscordEmulator();
    try {
      const first = await identify(emulator, [0, 1]);
      expect(first.first).toMatchObject({ t: GatewayDispatchEvents.Ready });
      const second = await identify(emulator);
      expect(second.first).toMatchObject({ op: GatewayOpcodes.InvalidSession, d: false });
      expect(emulator.gatewayStats.identifiesRefused).toBe(1);

      const invalid = new WebSocket(`${emulator.gatewayUrl}?v=10&encoding=json`);
      await once(invalid, 'message');
      invalid.send(JSON.stringify({ op: GatewayOpcodes.Identify, d: { token: emulator.botToken, intents: 1, properties: {}, shard: [2, 2] } }));
      const [code] = (await once(invalid, 'close')) as [number];
      expect(code).toBe(GatewayCloseCodes.InvalidShard);
      first.socket.close();
      second.socket.close();
    } finally {
      await emulator.close();
    }
  });
});
