/**
 * The player host with a fake voice line and a fake lease (a voice connection cannot run here;
 * the e2e voice tests play through the real ones), the real player store in Redis and the songs
 * in Postgres (the player plays only songs the library still shows): a song
 * that cannot be played is named in the channel and the next one plays, and a lapsed lease
 * makes this process leave the guild without touching what plays, for the process that took it.
 */
import { randomUUID } from 'node:crypto';
import { Collection, type Client } from 'discord.js';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureGuild } from '../../../src/credits/index.js';
import { jobs } from '../../../src/db/schema.js';
import { removeResultRow } from '../../../src/pipeline/job-rows.js';
import { silentLogger } from '../../../src/logger.js';
import type { VoiceEngine } from '../../../src/voice/engine/engine.js';
import type { GuildLease } from '../../../src/voice/guild-lease.js';
import { PlayerHost } from '../../../src/voice/player.js';
import { createPlayerStore, type PlayerState, type QueueEntry } from '../../../src/voice/store.js';
import { createTestDatabase, testRedis, type TestDatabase } from '../../support/database.js';
import { FakeVoiceLine } from '../../support/fake-voice-line.js';

const { url, prefix } = testRedis();
const redis = new Redis(url, { maxRetriesPerRequest: null });
const store = createPlayerStore(redis, prefix);
const hosts: PlayerHost[] = [];
let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  for (const host of hosts) await host.stop();
  await redis.quit();
});

const BOT = '900000000000000001';
const LISTENER = '900000000000000002';

/** A lease every guild is free under, whose lapse the test calls. */
class FakeLease implements GuildLease {
  readonly durationMs = 15_000;
  readonly held = new Map<string, () => void>();
  readonly released: string[] = [];
  async claim(): Promise<boolean> {
    return true;
  }
  hold(guildId: string, lapsed: () => void): void {
    this.held.set(guildId, lapsed);
  }
  async release(guildId: string): Promise<void> {
    this.held.delete(guildId);
    this.released.push(guildId);
  }
  async close(): Promise<void> {}
}

/** Discord as the host reads it: one guild whose voice channel has the bot and a listener, and a text channel that keeps what is sent. */
function fakeDiscord(guildId: string, voiceChannelId: string) {
  const sent: string[] = [];
  /** The now-playing card's descriptions, as each edit left it; and its text, where an edit set one (closing it does). */
  const edits: string[] = [];
  const closings: string[] = [];
  const textChannel = {
    isSendable: () => true,
    isTextBased: () => true,
    send: async (message: { content: string }) => {
      sent.push(message.content);
      return { id: String(900_000_000_000_000_100n + BigInt(sent.length)) };
    },
    messages: {
      edit: async (_id: string, message: { content?: string; embeds?: Array<{ toJSON(): { description?: string } }> }) => {
        edits.push(message.embeds?.[0]?.toJSON().description ?? '');
        if (message.content) closings.push(message.content);
        return {};
      },
    },
  };
  const voiceStates = new Collection([
    [BOT, { id: BOT, channelId: voiceChannelId, member: { user: { bot: true } } }],
    [LISTENER, { id: LISTENER, channelId: voiceChannelId, member: { user: { bot: false } } }],
  ]);
  const client = {
    user: { id: BOT },
    on: () => client,
    off: () => client,
    channels: { fetch: async () => textChannel },
    guilds: { cache: new Collection<string, unknown>() },
  };
  const guild = { id: guildId, client, voiceStates: { cache: voiceStates }, channels: { cache: new Collection([[voiceChannelId, { id: voiceChannelId, isVoiceBased: () => true }]]) } };
  client.guilds.cache.set(guildId, guild);
  return { client: client as unknown as Client<true>, sent, edits, closings };
}

/** The songs' ids, one per number, each a finished song in the database once {@link playing} saved it. */
const songIds = new Map<number, string>();
function entry(n: number): QueueEntry {
  if (!songIds.has(n)) songIds.set(n, randomUUID());
  return { jobId: songIds.get(n)!, clipId: `clip-${n}`, title: `Song ${n}`, makerId: LISTENER, mediaUrl: `https://media.example/${n}.mp3`, durationSeconds: 60, requestedBy: LISTENER };
}

/** A host whose guild `guildId` has `current` playing and `queued` waiting, resumed as after a restart; `before` runs once the songs are saved. */
async function playing(guildId: string, current: QueueEntry, ...queued: QueueEntry[]) {
  return playingAfter(guildId, async () => {}, current, ...queued);
}

async function playingAfter(guildId: string, before: () => Promise<void>, current: QueueEntry, ...queued: QueueEntry[]) {
  return playingWith(guildId, { before }, current, ...queued);
}

/** {@link playingAfter}, the state changed by `changes` before the resume, the card's progress edited every `progressEveryMs`. */
async function playingWith(
  guildId: string,
  { before = async () => {}, changes = {}, progressEveryMs }: { before?: () => Promise<void>; changes?: Partial<PlayerState>; progressEveryMs?: number },
  current: QueueEntry,
  ...queued: QueueEntry[]
) {
  const voiceChannelId = `${guildId}1`;
  const discord = fakeDiscord(guildId, voiceChannelId);
  const lines: FakeVoiceLine[] = [];
  const engine = { join: (_guild: unknown, channelId: string) => lines[lines.push(new FakeVoiceLine(channelId, guildId)) - 1] } as unknown as VoiceEngine;
  const lease = new FakeLease();
  const state: PlayerState = { voiceChannelId, textChannelId: `${guildId}2`, guildLocale: 'en-US', nowPlayingMessageId: null, current, paused: false, radio: null, stay: false, ...changes };
  await store.write(guildId, state);
  if (queued.length > 0) await store.enqueue(guildId, ...queued);
  await ensureGuild(db.db, guildId, { startingCredits: 0 });
  for (const song of new Map([current, ...queued].map((song) => [song.jobId, song])).values()) {
    await db.db.insert(jobs).values({ id: song.jobId, guildId, channelId: state.textChannelId, userId: LISTENER, kind: 'song', state: 'succeeded', request: { kind: 'song', prompt: song.title }, cost: 10 });
  }
  await before();
  const host = new PlayerHost({
    client: discord.client,
    db: db.db,
    lease,
    store,
    logger: silentLogger,
    ffmpeg: { found: true } as never,
    engine,
    idleSeconds: 300,
    ...(progressEveryMs !== undefined && { progressEveryMs }),
  });
  hosts.push(host);
  await host.resumeAll();
  expect(lines).toHaveLength(1);
  return { host, line: lines[0]!, lease, sent: discord.sent, edits: discord.edits, closings: discord.closings };
}

/** A member who controls the player (Manage Server), asking from the guild's text channel. */
function requester(guildId: string) {
  return { userId: LISTENER, roleIds: [], canManageGuild: true, channelId: `${guildId}2`, parentChannelId: null, guildLocale: 'en-US' };
}

describe('the player host', () => {
  it('names a song that could not be played in the channel, and plays the next', async () => {
    const { line, sent } = await playing('800000000000000001', entry(1), entry(2));
    expect(line.played).toEqual([entry(1).mediaUrl]);
    line.onEnded({ exitCode: 1, error: 'Server returned 404 Not Found', playedMs: 0 } as never);
    await expect.poll(() => line.played).toEqual([entry(1).mediaUrl, entry(2).mediaUrl]);
    expect(sent).toContainEqual(expect.stringMatching(/^Could not play \*\*Song 1\*\*/));
    expect((await store.read('800000000000000001'))?.current?.jobId).toBe(entry(2).jobId);
  });

  it('leaves when its lease lapsed, leaving what plays in Redis for the process that took the guild', async () => {
    const guildId = '800000000000000002';
    const { line, lease } = await playing(guildId, entry(3), entry(4));
    const lapsed = lease.held.get(guildId);
    expect(lapsed).toBeDefined();
    lapsed!();
    await expect.poll(() => line.left).toBe(true);
    // What plays is the other process's now: this one neither cleared it nor released its lease.
    expect((await store.read(guildId))?.current?.jobId).toBe(entry(3).jobId);
    expect(await store.queue(guildId)).toEqual([entry(4)]);
    expect(lease.released).toEqual([]);
    // A song's end reported late by the old line moves nothing.
    line.onEnded({ exitCode: 0, error: '', playedMs: 60_000 } as never);
    await expect.poll(async () => (await store.read(guildId))?.current?.jobId).toBe(entry(3).jobId);
    expect(line.played).toEqual([entry(3).mediaUrl]);
  });

  it('drops a song that left the library: skipped while it plays, with a line that does not name it, and taken out of the queue', async () => {
    const guildId = '800000000000000003';
    const { host, line, sent } = await playing(guildId, entry(5), entry(6), entry(5), entry(7));
    expect(line.played).toEqual([entry(5).mediaUrl]);
    await removeResultRow(db.db, entry(5).jobId, { removal: 'hidden', by: LISTENER, at: new Date() });

    await host.dropSong(guildId, entry(5).jobId);
    expect(line.played).toEqual([entry(5).mediaUrl, entry(6).mediaUrl]);
    expect(sent).toContainEqual('The song playing was removed from this server’s library, so I skipped it.');
    expect(sent.join('\n')).not.toContain('Song 5');
    expect((await store.read(guildId))?.current?.jobId).toBe(entry(6).jobId);
    expect(await store.queue(guildId)).toEqual([entry(7)]);

    // A queued song only: the one playing plays on, unannounced.
    await host.dropSong(guildId, entry(7).jobId);
    expect(await store.queue(guildId)).toEqual([]);
    expect(line.played).toEqual([entry(5).mediaUrl, entry(6).mediaUrl]);
    expect(sent.filter((text) => text.includes('removed from this server'))).toHaveLength(1);
  });

  it('does not take up again a song removed while no process played the guild', async () => {
    const guildId = '800000000000000004';
    const { line } = await playingAfter(guildId, () => removeResultRow(db.db, entry(8).jobId, { removal: 'deleted', by: LISTENER, at: new Date() }).then(() => {}), entry(8), entry(9));
    expect(line.played).toEqual([entry(9).mediaUrl]);
    expect((await store.read(guildId))?.current?.jobId).toBe(entry(9).jobId);
  });

  it('plays a song again under a song loop until it is skipped, at the volume the state keeps', async () => {
    const guildId = '800000000000000005';
    const { host, line } = await playingWith(guildId, { changes: { loop: 'song', volume: 40 } }, entry(10), entry(11));
    expect(line.starts).toEqual([{ volume: 40 }]);
    line.onEnded({ playId: 1, exitCode: 0, error: '', playedMs: 60_000 });
    await expect.poll(() => line.played).toEqual([entry(10).mediaUrl, entry(10).mediaUrl]);
    expect(line.starts[1]).toEqual({ volume: 40 });
    expect(await store.queue(guildId)).toEqual([entry(11)]);
    // A skip ends the loop's song: the next plays.
    expect((await host.handle({ guildId, requester: requester(guildId), action: { op: 'skip' } })).lines[0]?.key).toBe('player.skipped');
    expect((await store.read(guildId))?.current?.jobId).toBe(entry(11).jobId);
    expect(line.played).toEqual([entry(10).mediaUrl, entry(10).mediaUrl, entry(11).mediaUrl]);
  });

  it('puts each song back at the queue’s end under a queue loop, but not one whose audio failed', async () => {
    const guildId = '800000000000000006';
    const { line } = await playingWith(guildId, { changes: { loop: 'queue' } }, entry(12), entry(13), entry(14));
    line.onEnded({ playId: 1, exitCode: 0, error: '', playedMs: 60_000 });
    await expect.poll(async () => (await store.read(guildId))?.current?.jobId).toBe(entry(13).jobId);
    expect(await store.queue(guildId)).toEqual([entry(14), entry(12)]);
    line.onEnded({ playId: 2, exitCode: 1, error: 'Server returned 404 Not Found', playedMs: 0 });
    await expect.poll(async () => (await store.read(guildId))?.current?.jobId).toBe(entry(14).jobId);
    expect(await store.queue(guildId)).toEqual([entry(12)]);
  });

  it('edits the card’s progress bar while the song plays, and stops once the player ends', async () => {
    const guildId = '800000000000000007';
    const card = { progressEveryMs: 50, changes: { nowPlayingMessageId: '900000000000000999' } };
    const { host, line, edits } = await playingWith(guildId, card, entry(15));
    const other = await playingWith('800000000000000008', card, entry(16));
    line.positionMs = 30_000;
    await expect.poll(() => edits.some((description) => description.includes('▬▬▬▬▬▬▬🔘▬▬▬▬▬▬ 0:30 / 1:00'))).toBe(true);
    expect((await host.handle({ guildId, requester: requester(guildId), action: { op: 'stop' } })).lines[0]?.key).toBe('player.stopped');
    const after = edits.length;
    // The other guild's card, on the same 50 ms, is edited three more times meanwhile: this one's no more.
    const otherBefore = other.edits.length;
    await expect.poll(() => other.edits.length, { timeout: 5_000 }).toBeGreaterThanOrEqual(otherBefore + 3);
    expect(edits.length).toBe(after);
  });

  it('ends the player when its line is gone (its voice thread exited): the card says so, the state is cleared and the guild let go', async () => {
    const guildId = '800000000000000009';
    const { line, lease, closings } = await playingWith(guildId, { changes: { nowPlayingMessageId: '900000000000000998' } }, entry(17), entry(18));
    expect(line.played).toEqual([entry(17).mediaUrl]);
    line.onGone();
    await expect.poll(() => lease.released).toContain(guildId);
    expect(line.left).toBe(true);
    expect(await store.read(guildId)).toBeUndefined();
    expect(closings.at(-1)).toBe('I was disconnected from the voice channel; the player stopped.');
    // Nothing else was played for it.
    expect(line.played).toEqual([entry(17).mediaUrl]);
  });

  it('counts a song heard for half its length as one play of its playback: to its end, or stopped after half; not one skipped early', async () => {
    const guildId = '800000000000000020';
    const { host, line } = await playingWith(guildId, { changes: { playback: randomUUID() } }, entry(20), entry(21), entry(22));
    const plays = async (n: number) => Number((await db.pool.query('select count(*) from song_plays where job_id = $1', [entry(n).jobId])).rows[0].count);
    line.onEnded({ playId: 1, exitCode: 0, error: '', playedMs: 30_000 });
    await expect.poll(() => line.played).toEqual([entry(20).mediaUrl, entry(21).mediaUrl]);
    line.onEnded({ playId: 2, exitCode: null, error: '', playedMs: 29_000 });
    await expect.poll(() => line.played).toEqual([entry(20).mediaUrl, entry(21).mediaUrl, entry(22).mediaUrl]);
    line.heardPlayingMs = 45_000;
    expect((await host.handle({ guildId, requester: requester(guildId), action: { op: 'stop' } })).lines[0]?.key).toBe('player.stopped');
    await expect.poll(() => plays(22)).toBe(1);
    expect([await plays(20), await plays(21)]).toEqual([1, 0]);
    expect(Number((await db.pool.query('select count(distinct play_key) from song_plays where guild_id = $1', [guildId])).rows[0].count)).toBe(2);
  });
});
