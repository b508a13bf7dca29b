/**
 * Discord's rate limits in the emulator, seen with plain fetch: the bucket headers on every
 * answer, 429 with Discord's body and headers, the global limit per bot token that interaction
 * routes are exempt from, the channel-message and interaction-edit buckets, the record of 429s,
 * and @discordjs/rest keeping clear of them by reading the headers.
 */
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { REST } from '@discordjs/rest';
import { Routes } from 'discord-api-types/v10';
import { DISCORD_RATE_LIMITS, startDiscordEmulator } from '@music-bot/discord-emulator';
import type { DiscordEmulator, DiscordEmulatorOptions, EmulatorChannel, EmulatorGuild } from '@music-bot/discord-emulator';

let emu: DiscordEmulator;
let guild: EmulatorGuild;

beforeAll(async () => {
  emu = await startDiscordEmulator({ botToken: 'rate-limit-token' });
  guild = emu.createGuild({ name: 'Busy guild' });
  emu.addMember(guild.id, { username: 'erin' });
});

afterAll(async () => {
  await emu?.close();
});

/** An emulator of the test's own, closed when the test ends. */
async function emulatorForTest(options: DiscordEmulatorOptions): Promise<{ emu: DiscordEmulator; guild: EmulatorGuild; channel: EmulatorChannel }> {
  const own = await startDiscordEmulator({ botToken: 'rate-limit-token', ...options });
  onTestFinished(() => own.close());
  const ownGuild = own.createGuild({ name: 'Own guild' });
  own.addMember(ownGuild.id, { username: 'finn' });
  return { emu: own, guild: ownGuild, channel: own.createChannel(ownGuild.id, { name: 'general' }) };
}

function call(on: DiscordEmulator, method: string, path: string, body?: unknown, token: string | null = on.botToken): Promise<Response> {
  const headers = new Headers();
  if (token !== null) headers.set('authorization', `Bot ${token}`);
  if (body !== undefined) headers.set('content-type', 'application/json');
  return fetch(`${on.apiUrl}/v10${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
}

const post = (on: DiscordEmulator, channelId: string, content: string) => call(on, 'POST', `/channels/${channelId}/messages`, { content });

function limits(response: Response) {
  const header = (name: string) => response.headers.get(name);
  return {
    limit: header('x-ratelimit-limit'),
    remaining: header('x-ratelimit-remaining'),
    reset: Number(header('x-ratelimit-reset')),
    resetAfter: Number(header('x-ratelimit-reset-after')),
    bucket: header('x-ratelimit-bucket'),
    scope: header('x-ratelimit-scope'),
    retryAfter: header('retry-after'),
    global: header('x-ratelimit-global'),
  };
}

/** A deferred interaction of a member, for the webhook routes. */
async function deferredInteraction(on: DiscordEmulator, guildId: string) {
  const channel = on.createChannel(guildId, { name: `ask-${on.requests.length}` });
  const handle = on.runCommand({ guildId, channelId: channel.id, name: 'song', options: { prompt: 'x' } });
  const callback = await call(on, 'POST', `/interactions/${handle.id}/${handle.token}/callback`, { type: 5 }, null);
  expect(callback.status).toBe(204);
  return { handle, webhook: `/webhooks/${on.applicationId}/${handle.token}` };
}

describe('bucket headers', () => {
  it('come with every answer of a route, counting down per channel under one bucket id', async () => {
    const first = emu.createChannel(guild.id, { name: 'first' });
    const second = emu.createChannel(guild.id, { name: 'second' });
    const seen: ReturnType<typeof limits>[] = [];
    for (let i = 0; i < 3; i += 1) {
      const before = emu.clock.now();
      const response = await post(emu, first.id, `hello ${i}`);
      const after = emu.clock.now();
      expect(response.status).toBe(200);
      const headers = limits(response);
      seen.push(headers);
      // Reset is the clock time at which Reset-After runs out.
      expect(headers.reset * 1000 - headers.resetAfter * 1000).toBeGreaterThanOrEqual(before - 1);
      expect(headers.reset * 1000 - headers.resetAfter * 1000).toBeLessThanOrEqual(after + 1);
      expect(headers.resetAfter).toBeGreaterThan(0);
      expect(headers.resetAfter).toBeLessThanOrEqual(5);
      expect(headers.scope).toBeNull();
    }
    expect(seen.map((h) => [h.limit, h.remaining])).toEqual([
      ['5', '4'],
      ['5', '3'],
      ['5', '2'],
    ]);
    expect(new Set(seen.map((h) => h.bucket)).size).toBe(1);
    expect(seen[0]!.bucket).toMatch(/^[0-9a-f]{32}$/);
    // One window: the reset does not move while it lasts.
    expect(new Set(seen.map((h) => h.reset)).size).toBe(1);

    // Another channel: the same bucket id, counted apart (the channel is the top-level resource).
    const other = limits(await post(emu, second.id, 'elsewhere'));
    expect(other).toMatchObject({ bucket: seen[0]!.bucket, limit: '5', remaining: '4' });

    // Another route: a bucket of its own.
    const read = await call(emu, 'GET', `/channels/${first.id}`);
    expect(read.status).toBe(200);
    expect(limits(read).bucket).toMatch(/^[0-9a-f]{32}$/);
    expect(limits(read).bucket).not.toBe(seen[0]!.bucket);
    expect(Number(limits(read).limit)).toBe(DISCORD_RATE_LIMITS.other.limit);
  });

  it('are not sent for a path Discord does not have', async () => {
    const unknown = await call(emu, 'GET', '/no/such/route');
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('x-ratelimit-bucket')).toBeNull();
  });
});

describe('a channel’s message bucket', () => {
  it('takes 5 messages, then answers 429 with Discord’s body and headers until its window ends', async () => {
    const channel = emu.createChannel(guild.id, { name: 'spam' });
    for (let i = 0; i < 5; i += 1) expect((await post(emu, channel.id, `burst ${i}`)).status).toBe(200);
    const before = emu.rateLimited.length;

    const refused = await post(emu, channel.id, 'one too many');
    expect(refused.status).toBe(429);
    const body = (await refused.json()) as { message: string; retry_after: number; global: boolean };
    expect(body).toEqual({ message: 'You are being rate limited.', retry_after: expect.any(Number), global: false });
    expect(body.retry_after).toBeGreaterThan(0);
    expect(body.retry_after).toBeLessThanOrEqual(5);
    const headers = limits(refused);
    expect(headers).toMatchObject({ limit: '5', remaining: '0', scope: 'user', global: null });
    expect(headers.retryAfter).toBe(String(Math.ceil(body.retry_after)));
    expect(headers.resetAfter).toBe(body.retry_after);
    expect(emu.channelMessages(channel.id).map((m) => m.content)).not.toContain('one too many');

    // Recorded, with the bucket it hit.
    expect(emu.rateLimited.slice(before)).toEqual([
      expect.objectContaining({
        method: 'POST',
        path: `/channels/${channel.id}/messages`,
        route: '/channels/{channel_id}/messages',
        bucket: headers.bucket,
        scope: 'user',
        retryAfter: body.retry_after,
        scripted: false,
      }),
    ]);
    const seq = emu.rateLimited.at(-1)!.requestSeq;
    expect(emu.requests.find((r) => r.seq === seq)).toMatchObject({ status: 429, body: { content: 'one too many' } });

    // The window is timed by the emulator's clock.
    emu.clock.advance(5_000);
    const after = await post(emu, channel.id, 'after the window');
    expect(after.status).toBe(200);
    expect(limits(after).remaining).toBe('4');
  });
});

describe('the global limit', () => {
  it('refuses the bot’s 51st request of a window on any route, with X-RateLimit-Global', async () => {
    // Discord's 50 requests, in a window long enough that a slow machine stays inside it.
    const own = await emulatorForTest({ rateLimits: { global: { limit: 50, windowMs: 60_000 } } });
    const channels = [own.channel, own.emu.createChannel(own.guild.id, { name: 'two' }), own.emu.createChannel(own.guild.id, { name: 'three' })];
    const paths = ['/users/@me', `/guilds/${own.guild.id}`, ...channels.map((c) => `/channels/${c.id}`)];
    // 10 per route: no route's own bucket (20 a second) runs out.
    const answers = await Promise.all(paths.flatMap((path) => Array.from({ length: 10 }, () => call(own.emu, 'GET', path))));
    expect(answers.map((r) => r.status)).toEqual(Array(50).fill(200));

    const refused = await call(own.emu, 'GET', `/channels/${channels[0]!.id}/messages`);
    expect(refused.status).toBe(429);
    const body = (await refused.json()) as { retry_after: number; global: boolean };
    expect(body.global).toBe(true);
    expect(body.retry_after).toBeGreaterThan(0);
    expect(body.retry_after).toBeLessThanOrEqual(60);
    expect(limits(refused)).toMatchObject({ global: 'true', scope: 'global', retryAfter: String(Math.ceil(body.retry_after)), bucket: null });
    expect(own.emu.rateLimited).toEqual([expect.objectContaining({ scope: 'global', bucket: null, path: `/channels/${channels[0]!.id}/messages` })]);

    // Interaction routes are exempt: a callback, edits and a follow-up still go through.
    const { webhook } = await deferredInteraction(own.emu, own.guild.id);
    expect((await call(own.emu, 'PATCH', `${webhook}/messages/@original`, { content: 'still here' }, null)).status).toBe(200);
    expect((await call(own.emu, 'POST', `${webhook}?wait=true`, { content: 'and a follow-up' }, null)).status).toBe(200);
    // Another token, or none, is not the bot's limit either.
    expect((await call(own.emu, 'GET', '/users/@me', undefined, 'someone-else')).status).toBe(401);

    own.emu.clock.advance(60_000);
    expect((await call(own.emu, 'GET', '/users/@me')).status).toBe(200);
  });

  it('is 50 requests a second by default', () => {
    expect(DISCORD_RATE_LIMITS.global).toEqual({ limit: 50, windowMs: 1_000 });
  });
});

describe('an interaction’s edit bucket', () => {
  it('takes 5 edits, follow-ups or deletions per token, then 429; reading and other tokens are apart', async () => {
    const { webhook } = await deferredInteraction(emu, guild.id);
    const writes = [
      call(emu, 'PATCH', `${webhook}/messages/@original`, { content: 'progress 1' }, null),
      call(emu, 'PATCH', `${webhook}/messages/@original`, { content: 'progress 2' }, null),
      call(emu, 'POST', `${webhook}?wait=true`, { content: 'a follow-up' }, null),
      call(emu, 'PATCH', `${webhook}/messages/@original`, { content: 'progress 3' }, null),
      call(emu, 'PATCH', `${webhook}/messages/@original`, { content: 'progress 4' }, null),
    ];
    const answered = [];
    for (const write of writes) answered.push(await write);
    expect(answered.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(answered.map((r) => limits(r).limit)).toEqual(Array(5).fill('5'));
    expect(new Set(answered.map((r) => limits(r).bucket)).size).toBe(1);
    expect(limits(answered[4]!).resetAfter).toBeLessThanOrEqual(2);

    const before = emu.rateLimited.length;
    const refused = await call(emu, 'PATCH', `${webhook}/messages/@original`, { content: 'the result' }, null);
    expect(refused.status).toBe(429);
    expect(limits(refused)).toMatchObject({ remaining: '0', scope: 'user', bucket: limits(answered[0]!).bucket });
    expect(((await refused.json()) as { global: boolean }).global).toBe(false);
    const followUp = await call(emu, 'POST', webhook, { content: 'another follow-up' }, null);
    expect(followUp.status).toBe(429);
    expect(emu.rateLimited.slice(before).map((hit) => [hit.method, hit.route, hit.scope])).toEqual([
      ['PATCH', '/webhooks/{webhook_id}/{webhook_token}/messages/@original', 'user'],
      ['POST', '/webhooks/{webhook_id}/{webhook_token}', 'user'],
    ]);
    // Recorded paths name the token (the emulator's own record); 429s keep the message as it was.
    expect((await (await call(emu, 'GET', `${webhook}/messages/@original`, undefined, null)).json()) as { content: string }).toMatchObject({
      content: 'progress 4',
    });

    const other = await deferredInteraction(emu, guild.id);
    expect((await call(emu, 'PATCH', `${other.webhook}/messages/@original`, { content: 'mine' }, null)).status).toBe(200);

    emu.clock.advance(2_000);
    expect((await call(emu, 'PATCH', `${webhook}/messages/@original`, { content: 'the result' }, null)).status).toBe(200);
  });
});

describe('the record of 429s', () => {
  it('holds scripted ones too, and clearRecords empties it', async () => {
    emu.rateLimitNext('GET /users/@me', 2, { retryAfterSeconds: 0.5 });
    expect((await call(emu, 'GET', '/users/@me')).status).toBe(429);
    expect((await call(emu, 'GET', '/users/@me')).status).toBe(429);
    expect((await call(emu, 'GET', '/users/@me')).status).toBe(200);
    expect(emu.rateLimited.slice(-2)).toEqual([
      expect.objectContaining({ path: '/users/@me', scripted: true, retryAfter: 0.5 }),
      expect.objectContaining({ path: '/users/@me', scripted: true, retryAfter: 0.5 }),
    ]);
    emu.clearRecords();
    expect(emu.rateLimited).toEqual([]);
  });
});

describe('options', () => {
  it('rateLimits: false answers without limits or their headers', async () => {
    const own = await emulatorForTest({ rateLimits: false });
    const answers = [];
    for (let i = 0; i < 8; i += 1) answers.push(await post(own.emu, own.channel.id, `free ${i}`));
    expect(answers.map((r) => r.status)).toEqual(Array(8).fill(200));
    expect(answers.map((r) => r.headers.get('x-ratelimit-bucket'))).toEqual(Array(8).fill(null));
    expect(own.emu.rateLimited).toEqual([]);
  });

  it('tunes one limit and keeps Discord’s for the others', async () => {
    const own = await emulatorForTest({ rateLimits: { channelMessages: { limit: 2, windowMs: 10_000 } } });
    const answers = [];
    for (let i = 0; i < 3; i += 1) answers.push(await post(own.emu, own.channel.id, `tuned ${i}`));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 429]);
    expect(limits(answers[0]!).limit).toBe('2');
    expect(limits(await call(own.emu, 'GET', `/channels/${own.channel.id}`)).limit).toBe(String(DISCORD_RATE_LIMITS.other.limit));
  });

  it('refuses a limit that cannot work', async () => {
    await expect(startDiscordEmulator({ rateLimits: { global: { limit: 0, windowMs: 1_000 } } })).rejects.toThrow(/rateLimits\.global/);
  });
});

describe('@discordjs/rest against the buckets', () => {
  it('posts 12 messages in one channel at once, all delivered, waiting for the bucket instead of earning 429s', async () => {
    // Discord's 5 messages per window, with a short window so the test takes a second.
    const own = await emulatorForTest({ rateLimits: { channelMessages: { limit: 5, windowMs: 400 } } });
    const rest = new REST({ api: own.emu.apiUrl }).setToken(own.emu.botToken);
    const sent = await Promise.all(
      Array.from({ length: 12 }, (_, i) => rest.post(Routes.channelMessages(own.channel.id), { body: { content: `queued ${i}` } })),
    );
    expect(sent).toHaveLength(12);
    expect(own.emu.channelMessages(own.channel.id).map((m) => m.content).sort()).toEqual(
      Array.from({ length: 12 }, (_, i) => `queued ${i}`).sort(),
    );
    // The first answer teaches the client the bucket; from then on it waits for the window.
    expect(own.emu.rateLimited.length).toBeLessThanOrEqual(1);
  });
});
