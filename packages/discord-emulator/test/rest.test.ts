/**
 * The emulator used the way the bot's workers use Discord: @discordjs/rest without a
 * gateway. Multipart uploads, the CDN, interaction webhooks, command deployment, auth,
 * unknown routes and the OpenAPI findings for malformed requests.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DiscordAPIError, REST, makeURLSearchParams } from '@discordjs/rest';
import { InteractionResponseType, MessageFlags, PermissionFlagsBits, Routes } from 'discord-api-types/v10';
import type { APIMessage, RESTPutAPIApplicationCommandsResult } from 'discord-api-types/v10';
import { OpenApiSpec, startDiscordEmulator } from '@music-bot/discord-emulator';
import { ENFORCED_NONCE_WINDOW_MS } from '../src/endpoints/channels.js';
import type { DiscordEmulator, EmulatorChannel, EmulatorGuild, EmulatorMember } from '@music-bot/discord-emulator';

let emu: DiscordEmulator;
let rest: REST;
let guild: EmulatorGuild;
let channel: EmulatorChannel;
let carol: EmulatorMember;

beforeAll(async () => {
  emu = await startDiscordEmulator({ applicationId: '111111111111111111', botToken: 'worker-token' });
  guild = emu.createGuild({ name: 'REST guild' });
  channel = emu.createChannel(guild.id, { name: 'deliveries' });
  carol = emu.addMember(guild.id, { username: 'carol' });
  rest = new REST({ api: emu.apiUrl }).setToken(emu.botToken);
});

afterAll(async () => {
  await emu?.close();
});

async function rawFetch(path: string, init: RequestInit & { token?: string | null } = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  if (init.token !== null) headers.set('authorization', `Bot ${init.token ?? emu.botToken}`);
  return fetch(`${emu.apiUrl}/v10${path}`, { ...init, headers });
}

describe('REST-only use of the emulator', () => {
  it('starts without reading the OpenAPI description: the first request reads it', async () => {
    const load = vi.spyOn(OpenApiSpec, 'load');
    const other = await startDiscordEmulator();
    try {
      expect(load).not.toHaveBeenCalled();
      const answer = await fetch(`${other.apiUrl}/v10/users/@me`, { headers: { authorization: `Bot ${other.botToken}` } });
      expect(answer.status).toBe(200);
      expect(load).toHaveBeenCalled();
    } finally {
      load.mockRestore();
      await other.close();
    }
  });

  it('posts a channel message with an attachment (multipart) and keeps the bytes intact', async () => {
    const song = randomBytes(300 * 1024);
    const message = (await rest.post(Routes.channelMessages(channel.id), {
      body: { content: `<@${carol.id}> your song is ready`, allowed_mentions: { users: [carol.id] }, attachments: [{ id: 0, description: 'The song' }] },
      files: [{ name: 'song.mp3', data: song, contentType: 'audio/mpeg' }],
    })) as APIMessage;
    expect(message.attachments).toHaveLength(1);
    expect(message.attachments[0]).toMatchObject({ filename: 'song.mp3', size: song.length, content_type: 'audio/mpeg', description: 'The song' });
    expect(message.mentions.map((user) => user.id)).toEqual([carol.id]);

    const [stored] = emu.channelMessages(channel.id);
    expect(stored?.attachments[0]?.data.equals(song)).toBe(true);
    expect(stored?.allowed_mentions).toEqual({ users: [carol.id] });
    expect(stored?.author.id).toBe(emu.botUser.id);

    const download = await fetch(message.attachments[0]!.url);
    expect(download.headers.get('content-type')).toBe('audio/mpeg');
    expect(Buffer.from(await download.arrayBuffer()).equals(song)).toBe(true);

    const request = emu.requests.at(-1);
    expect(request).toMatchObject({ method: 'POST', route: '/channels/{channel_id}/messages', operationId: 'create_message', status: 200, authorized: true });
    expect(request?.files).toEqual([{ field: 'files[0]', filename: 'song.mp3', contentType: 'audio/mpeg', size: song.length }]);
    await expect(emu.waitForMessage(channel.id, (m) => m.id === message.id, 100)).resolves.toMatchObject({ id: message.id });
  });

  it('refuses an attachment above the size limit with 413', async () => {
    const small = await startDiscordEmulator({ attachmentSizeLimit: 1024 });
    const smallGuild = small.createGuild({ name: 'small' });
    const smallChannel = small.createChannel(smallGuild.id, { name: 'c' });
    const error = await new REST({ api: small.apiUrl, retries: 0 })
      .setToken(small.botToken)
      .post(Routes.channelMessages(smallChannel.id), { body: { content: 'big' }, files: [{ name: 'big.wav', data: Buffer.alloc(2048) }] })
      .catch((caught: unknown) => caught);
    await small.close();
    expect(error).toBeInstanceOf(DiscordAPIError);
    expect((error as DiscordAPIError).code).toBe(40005);
  });

  it('edits a deferred interaction reply and sends follow-ups through the interaction webhook', async () => {
    const handle = emu.runCommand({ guildId: guild.id, channelId: channel.id, userId: carol.id, name: 'song', options: { prompt: 'waves' } });
    expect(handle.payload).toMatchObject({ type: 2, data: { name: 'song', options: [{ name: 'prompt', type: 3, value: 'waves' }] } });
    await rest.post(Routes.interactionCallback(handle.id, handle.token), {
      body: { type: InteractionResponseType.DeferredChannelMessageWithSource, data: { flags: MessageFlags.Ephemeral } },
      auth: false,
    });
    expect(handle.original()?.flags).toBe(MessageFlags.Ephemeral | MessageFlags.Loading);

    const audio = randomBytes(4096);
    const edited = (await rest.patch(Routes.webhookMessage(emu.applicationId, handle.token), {
      body: { content: 'Here it is', attachments: [{ id: 0 }] },
      // Its type said, as random bytes are sniffed as anything (once, video/mpeg).
      files: [{ name: 'waves.mp3', data: audio, contentType: 'audio/mpeg' }],
      auth: false,
    })) as APIMessage;
    expect(edited.content).toBe('Here it is');
    const original = await handle.waitForEdit((message) => message.content === 'Here it is');
    expect(original.flags).toBe(MessageFlags.Ephemeral);
    expect(original.attachments[0]?.data.equals(audio)).toBe(true);
    expect(original.attachments[0]?.content_type).toBe('audio/mpeg');

    const followUp = (await rest.post(Routes.webhook(emu.applicationId, handle.token), {
      body: { content: 'Also this' },
      query: makeURLSearchParams({ wait: true }),
      auth: false,
    })) as APIMessage;
    expect(handle.followUps.map((message) => message.content)).toEqual(['Also this']);
    await rest.delete(Routes.webhookMessage(emu.applicationId, handle.token, followUp.id), { auth: false });
    expect(handle.followUps).toEqual([]);

    const fetched = (await rest.get(Routes.webhookMessage(emu.applicationId, handle.token), { auth: false })) as APIMessage;
    expect(fetched.id).toBe(original.id);
  });

  it('fills a deferred reply with the first follow-up, as Discord does', async () => {
    const handle = emu.runCommand({ guildId: guild.id, channelId: channel.id, userId: carol.id, name: 'song' });
    await rest.post(Routes.interactionCallback(handle.id, handle.token), {
      body: { type: InteractionResponseType.DeferredChannelMessageWithSource },
      auth: false,
    });
    const followUp = (await rest.post(Routes.webhook(emu.applicationId, handle.token), {
      body: { content: 'Done thinking' },
      query: makeURLSearchParams({ wait: true }),
      auth: false,
    })) as APIMessage;
    expect(followUp.id).toBe(handle.original()?.id);
    expect(handle.original()).toMatchObject({ content: 'Done thinking', flags: 0 });
  });

  it('answers Discord errors on the interaction webhook: unknown token, not yet acknowledged', async () => {
    await expect(rest.patch(Routes.webhookMessage(emu.applicationId, 'no-such-token'), { body: { content: 'x' }, auth: false })).rejects.toMatchObject({
      code: 50027,
      status: 401,
    });
    const handle = emu.runCommand({ guildId: guild.id, channelId: channel.id, userId: carol.id, name: 'song' });
    await expect(rest.patch(Routes.webhookMessage(emu.applicationId, handle.token), { body: { content: 'x' }, auth: false })).rejects.toMatchObject({
      code: 10015,
    });
    await expect(
      rest.post(Routes.interactionCallback(handle.id, handle.token), { body: { type: InteractionResponseType.ChannelMessageWithSource, data: {} }, auth: false }),
    ).rejects.toMatchObject({ code: 50006 });
    await expect(
      rest.post(Routes.interactionCallback(handle.id, handle.token), { body: { type: InteractionResponseType.UpdateMessage, data: { content: 'x' } }, auth: false }),
    ).rejects.toMatchObject({ code: 50035 });
  });

  it('stores commands from a bulk overwrite, keeps ids across overwrites, and refuses invalid names', async () => {
    const body = [
      { name: 'song', description: 'Make a song', default_member_permissions: '8', options: [{ type: 3, name: 'prompt', description: 'About', required: true }] },
      { name: 'credits', description: 'Your credits' },
    ];
    const first = (await rest.put(Routes.applicationCommands(emu.applicationId), { body })) as RESTPutAPIApplicationCommandsResult;
    const second = (await rest.put(Routes.applicationCommands(emu.applicationId), { body })) as RESTPutAPIApplicationCommandsResult;
    expect(second.map((command) => command.id)).toEqual(first.map((command) => command.id));
    expect(first[0]).toMatchObject({ name: 'song', application_id: emu.applicationId, default_member_permissions: '8', type: 1 });
    const listed = (await rest.get(Routes.applicationCommands(emu.applicationId))) as RESTPutAPIApplicationCommandsResult;
    expect(listed.map((command) => command.name)).toEqual(['song', 'credits']);

    // A registered definition types the options a user sends.
    const handle = emu.runCommand({ guildId: guild.id, channelId: channel.id, userId: carol.id, name: 'song', options: { prompt: 42 } });
    expect(handle.payload).toMatchObject({ data: { id: first[0]!.id, options: [{ name: 'prompt', type: 3, value: '42' }] } });
    expect(() => emu.runCommand({ guildId: guild.id, channelId: channel.id, userId: carol.id, name: 'song' })).toThrow(/needs option "prompt"/);

    const error = (await rest
      .put(Routes.applicationCommands(emu.applicationId), { body: [{ name: 'Song', description: 'x' }] })
      .catch((caught: unknown) => caught)) as DiscordAPIError;
    expect(error.code).toBe(50035);
    expect(error.rawError).toMatchObject({ errors: { 0: { name: { _errors: [{ code: 'APPLICATION_COMMAND_INVALID_NAME' }] } } } });
  });

  it('answers 401 for a wrong bot token and serves users, guilds, channels and members', async () => {
    await expect(new REST({ api: emu.apiUrl, retries: 0 }).setToken('wrong').get(Routes.user('@me'))).rejects.toMatchObject({ status: 401 });
    expect(await rest.get(Routes.user('@me'))).toMatchObject({ id: emu.botUser.id, bot: true });
    expect(await rest.get(Routes.guild(guild.id))).toMatchObject({ id: guild.id, name: 'REST guild' });
    expect(await rest.get(Routes.channel(channel.id))).toMatchObject({ id: channel.id, name: 'deliveries', guild_id: guild.id });
    expect(await rest.get(Routes.guildMember(guild.id, carol.id))).toMatchObject({ user: { id: carol.id, username: 'carol' } });
    await expect(rest.get(Routes.guildMember(guild.id, '42'))).rejects.toMatchObject({ code: 10007 });
    await expect(rest.get(Routes.channel('42'))).rejects.toMatchObject({ code: 10003 });
    const dm = (await rest.post(Routes.userChannels(), { body: { recipient_id: carol.id } })) as { id: string; type: number };
    expect(dm.type).toBe(1);
    await rest.post(Routes.channelMessages(dm.id), { body: { content: 'psst' } });
    expect(emu.channelMessages(dm.id).map((message) => message.content)).toEqual(['psst']);
  });

  it('records no finding for the well-formed requests above', () => {
    expect(emu.requests.length).toBeGreaterThan(12);
    expect(emu.findings).toEqual([]);
  });

  it('records a finding for a malformed body sent with fetch', async () => {
    const response = await rawFetch(`/channels/${channel.id}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ content: 42, embeds: { title: 'not a list' } }),
    });
    expect(response.status).toBe(400);
    const finding = emu.findings.at(-1);
    expect(finding).toMatchObject({ kind: 'invalid-body', method: 'POST', operationId: 'create_message', requestSeq: emu.requests.at(-1)?.seq });
    expect(finding?.details).toEqual(expect.arrayContaining(['/content: must be string,null', '/embeds: must be array,null']));
  });

  it('records findings for bad query arguments but takes the loose forms Discord takes', async () => {
    emu.clearRecords();
    await rawFetch(`/channels/${channel.id}/messages?limit=2`);
    await rawFetch(`/guilds/${guild.id}?with_counts=true`);
    expect(emu.findings).toEqual([]);
    await rawFetch(`/channels/${channel.id}/messages?limit=lots`);
    await rawFetch(`/channels/${channel.id}/messages?colour=blue`);
    expect(emu.findings.map((finding) => finding.kind)).toEqual(['invalid-query', 'invalid-query']);
    expect(emu.findings[1]?.message).toContain('"colour"');
  });

  it('answers unknown routes with 404 and records them', async () => {
    emu.clearRecords();
    const unknown = await rawFetch('/no/such/route');
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ code: 0, message: '404: Not Found' });
    const notEmulated = await rawFetch(`/guilds/${guild.id}/bans`);
    expect(notEmulated.status).toBe(404);
    expect(emu.findings.map((finding) => finding.kind)).toEqual(['unknown-route', 'not-emulated']);
    expect(emu.findings[1]).toMatchObject({ route: '/guilds/{guild_id}/bans', operationId: 'list_guild_bans' });
  });

  it('answers 429 with Discord headers and body when a test asks', async () => {
    emu.rateLimitNext(/^GET \/users\/@me$/, 1, { retryAfterSeconds: 1.5 });
    const limited = await rawFetch('/users/@me');
    expect(limited.status).toBe(429);
    expect(await limited.json()).toEqual({ message: 'You are being rate limited.', retry_after: 1.5, global: false });
    expect(limited.headers.get('retry-after')).toBe('1.5');
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(limited.headers.get('x-ratelimit-scope')).toBe('user');
    expect((await rawFetch('/users/@me')).status).toBe(200);
  });
});

describe('a world kept across runs (the playground)', () => {
  it('keeps fixed ids, and restores a message whose attachment and buttons work in the new run', async () => {
    const ids = { guild: '1300000000000000001', channel: '1300000000000000002', role: '1300000000000000003', user: '1300000000000000004' };
    const build = async () => {
      const run = await startDiscordEmulator({ botToken: 'worker-token' });
      run.createGuild({ id: ids.guild, name: 'Kept' });
      run.createChannel(ids.guild, { id: ids.channel, name: 'music' });
      run.createRole(ids.guild, { id: ids.role, name: 'DJ' });
      run.addMember(ids.guild, { userId: ids.user, username: 'dana', roles: [ids.role] });
      return run;
    };
    const first = await build();
    const song = randomBytes(2048);
    await new REST({ api: first.apiUrl }).setToken(first.botToken).post(Routes.channelMessages(ids.channel), {
      body: {
        content: 'your song',
        attachments: [{ id: 0 }],
        components: [{ type: 1, components: [{ type: 2, style: 2, label: 'Again', custom_id: 'again' }] }],
      },
      files: [{ name: 'song.mp3', data: song, contentType: 'audio/mpeg' }],
    });
    const [kept] = first.channelMessages(ids.channel);
    await first.close();

    const second = await build();
    try {
      expect(() => second.createGuild({ id: ids.guild, name: 'twice' })).toThrow(/already exists/);
      second.restoreMessage(kept!);
      const restored = second.message(kept!.id)!;
      expect(restored.content).toBe('your song');
      expect(restored.attachments[0]!.url.startsWith(second.origin)).toBe(true);
      const download = await fetch(restored.attachments[0]!.url);
      expect(Buffer.from(await download.arrayBuffer()).equals(song)).toBe(true);

      const listed = (await new REST({ api: second.apiUrl }).setToken(second.botToken).get(Routes.channelMessages(ids.channel))) as APIMessage[];
      expect(listed.map((message) => message.id)).toEqual([kept!.id]);
      const click = second.clickButton({ messageId: kept!.id, customId: 'again', userId: ids.user });
      expect(click.payload).toMatchObject({ type: 3, guild_id: ids.guild, channel_id: ids.channel, data: { custom_id: 'again' } });
    } finally {
      await second.close();
    }
  });
});

describe('enforce_nonce', () => {
  const post = (body: Record<string, unknown>) => rest.post(Routes.channelMessages(channel.id), { body }) as Promise<APIMessage>;
  const count = (content: string) => emu.channelMessages(channel.id).filter((message) => message.content === content).length;

  it('returns the first message for a repeat by the same author and nonce, and makes no second one', async () => {
    const first = await post({ content: 'nonce once', nonce: 'result-1', enforce_nonce: true });
    const again = await post({ content: 'nonce once', nonce: 'result-1', enforce_nonce: true });
    expect(again.id).toBe(first.id);
    expect(count('nonce once')).toBe(1);
  });

  it('makes a new message without enforce_nonce, after a few minutes, or once the first is deleted', async () => {
    await post({ content: 'nonce loose', nonce: 'result-2' });
    await post({ content: 'nonce loose', nonce: 'result-2' });
    expect(count('nonce loose')).toBe(2);

    const first = await post({ content: 'nonce window', nonce: 'result-3', enforce_nonce: true });
    emu.clock.advance(ENFORCED_NONCE_WINDOW_MS + 1_000);
    const later = await post({ content: 'nonce window', nonce: 'result-3', enforce_nonce: true });
    expect(later.id).not.toBe(first.id);

    await rest.delete(Routes.channelMessage(channel.id, later.id));
    const afterDelete = await post({ content: 'nonce window', nonce: 'result-3', enforce_nonce: true });
    expect(afterDelete.id).not.toBe(later.id);
    expect(count('nonce window')).toBe(2);
  });
});

describe('direct messages', () => {
  async function dm(userId: string): Promise<APIMessage> {
    const open = (await rest.post(Routes.userChannels(), { body: { recipient_id: userId } })) as { id: string; type: number; recipients: Array<{ id: string }> };
    expect(open.type).toBe(1);
    expect(open.recipients.map((user) => user.id)).toEqual([userId]);
    return (await rest.post(Routes.channelMessages(open.id), { body: { content: 'hello' } })) as APIMessage;
  }

  async function refusal(userId: string): Promise<unknown> {
    return dm(userId).then(() => undefined, (error: unknown) => error);
  }

  it('reach a member of a server the bot is in, and answer 50007 to one who closed their DMs, a bot, or a user sharing no server', async () => {
    const dave = emu.addMember(guild.id, { username: 'dave' });
    expect((await dm(dave.id)).content).toBe('hello');

    emu.closeDirectMessages(dave.id);
    expect(await refusal(dave.id)).toMatchObject({ status: 403, code: 50007, message: 'Cannot send messages to this user' });
    emu.closeDirectMessages(dave.id, false);
    expect((await dm(dave.id)).content).toBe('hello');

    expect(await refusal(emu.botUser.id)).toMatchObject({ status: 403, code: 50007 });

    const elsewhere = emu.createGuild({ name: 'Left behind' });
    const erin = emu.addMember(elsewhere.id, { username: 'erin' });
    emu.removeBot(elsewhere.id);
    expect(await refusal(erin.id)).toMatchObject({ status: 403, code: 50007 });
    expect(emu.channelMessages(emu.dmChannel(erin.id).id)).toEqual([]);
  });
});

describe('giving a member a role (Add Guild Member Role)', () => {
  it('gives a role below the bot’s highest with Manage Roles, and refuses as Discord does otherwise', async () => {
    const findingsBefore = emu.findings.length;
    const roles = emu.createGuild({ name: 'Roles guild' });
    const dave = emu.addMember(roles.id, { username: 'dave' });
    const below = emu.createRole(roles.id, { name: 'Winner', position: 1 });
    const above = emu.createRole(roles.id, { name: 'Hall of fame' });
    const give = (roleId: string, userId = dave.id) => rest.put(Routes.guildMemberRole(roles.id, userId, roleId), { reason: 'contest winner' });
    const refusal = (roleId: string, userId?: string) =>
      give(roleId, userId).then(
        () => 'given',
        (error: unknown) => (error instanceof DiscordAPIError ? error.code : error),
      );
    // Without Manage Roles: refused, whatever the role.
    expect(await refusal(below.id)).toBe(50013);
    emu.setRolePermissions(roles.id, roles.botRoleId, emu.memberPermissions(emu.createChannel(roles.id, { name: 'general' }).id, emu.botUser.id) | PermissionFlagsBits.ManageRoles);
    expect(await refusal(above.id)).toBe(50013);
    expect(await refusal(roles.botRoleId)).toBe(50013);
    expect(await refusal('123456789012345678')).toBe(10011);
    expect(await refusal(below.id, '123456789012345678')).toBe(10007);
    expect(emu.member(roles.id, dave.id)?.roles).toEqual([]);
    expect(await refusal(below.id)).toBe('given');
    expect(emu.member(roles.id, dave.id)?.roles).toEqual([below.id]);
    // The new role went below the bot's, which moved up one.
    const positions = Object.fromEntries((await rest.get(Routes.guildRoles(roles.id)) as Array<{ id: string; position: number }>).map((role) => [role.id, role.position]));
    expect([positions[roles.id], positions[below.id], positions[roles.botRoleId], positions[above.id]]).toEqual([0, 1, 2, 3]);
    expect(emu.findings.slice(findingsBefore)).toEqual([]);
  });
});
