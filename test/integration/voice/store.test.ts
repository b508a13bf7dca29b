/**
 * The player's state in Redis (what a restarted or another gateway process resumes from), and a
 * voice request that no process holds: it comes back as "not reachable" within its timeout.
 */
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/logger.js';
import { createVoiceControl } from '../../../src/voice/control.js';
import { createPlayerStore, type PlayerState, type QueueEntry } from '../../../src/voice/store.js';
import { testRedis } from '../../support/database.js';

const { url, prefix } = testRedis();
const redis = new Redis(url, { maxRetriesPerRequest: null });
afterAll(async () => void (await redis.quit()));

const entry = (n: number): QueueEntry => ({
  jobId: `00000000-0000-4000-8000-00000000000${n}`,
  clipId: `clip-${n}`,
  title: `Song ${n}`,
  makerId: '100000000000000001',
  mediaUrl: `http://127.0.0.1/media/${n}.m4a`,
  durationSeconds: 2,
  requestedBy: '100000000000000002',
});

const state = (current: QueueEntry | null): PlayerState => ({
  voiceChannelId: '200000000000000001',
  textChannelId: '200000000000000002',
  guildLocale: 'de',
  nowPlayingMessageId: null,
  current,
  paused: false,
  radio: null,
  stay: false,
});

describe('the player store', () => {
  it('keeps the song playing, the queue in order with positions, and the active guilds, until cleared', async () => {
    const store = createPlayerStore(redis, prefix);
    await store.write('g1', state(entry(1)));
    expect(await store.enqueue('g1', entry(2))).toBe(1);
    expect(await store.enqueue('g1', entry(3), entry(4))).toBe(2);
    expect((await store.queue('g1')).map((e) => e.title)).toEqual(['Song 2', 'Song 3', 'Song 4']);
    expect(await store.activeGuilds()).toEqual(['g1']);
    expect((await store.read('g1'))?.current?.title).toBe('Song 1');

    expect((await store.next('g1'))?.title).toBe('Song 2');
    expect(await store.queueLength('g1')).toBe(2);

    expect(await store.vote('g1', 'u1')).toBe(1);
    expect(await store.vote('g1', 'u1')).toBe(1);
    expect(await store.vote('g1', 'u2')).toBe(2);
    await store.clearVotes('g1');
    expect(await store.vote('g1', 'u2')).toBe(1);

    // A second store on another connection (another process) reads the same.
    const otherConnection = new Redis(url, { maxRetriesPerRequest: null });
    const other = createPlayerStore(otherConnection, prefix);
    expect((await other.queue('g1')).map((e) => e.title)).toEqual(['Song 3', 'Song 4']);
    await otherConnection.quit();

    // A moderator moved the bot: the player follows, the rest of its state kept; a guild without one stays without.
    await store.moveTo('g1', '200000000000000009');
    expect(await store.read('g1')).toEqual({ ...state(entry(1)), voiceChannelId: '200000000000000009' });
    await store.moveTo('g2', '200000000000000009');
    expect(await store.read('g2')).toBeUndefined();

    await store.clear('g1');
    expect(await store.read('g1')).toBeUndefined();
    expect(await store.queue('g1')).toEqual([]);
    expect(await store.activeGuilds()).toEqual([]);
  });

  it('replaces the queue in one step (an edit of it), and keeps the volume and the loop for another process', async () => {
    const store = createPlayerStore(redis, prefix);
    await store.write('g2', { ...state(entry(1)), volume: 150, loop: 'queue' });
    await store.enqueue('g2', entry(2), entry(3), entry(4));
    await store.replaceQueue('g2', [entry(4), entry(2)]);
    const otherConnection = new Redis(url, { maxRetriesPerRequest: null });
    const other = createPlayerStore(otherConnection, prefix);
    expect((await other.queue('g2')).map((e) => e.title)).toEqual(['Song 4', 'Song 2']);
    expect(await other.read('g2')).toMatchObject({ volume: 150, loop: 'queue' });
    await otherConnection.quit();
    await store.replaceQueue('g2', []);
    expect(await store.queueLength('g2')).toBe(0);
    await store.clear('g2');
  });
});

describe('a voice request nobody holds', () => {
  it('answers privately that the player is not reachable, after the timeout', async () => {
    const control = createVoiceControl({ redis, prefix, logger: silentLogger, timeoutMs: 300 });
    const started = Date.now();
    const reply = await control.request({
      guildId: '300000000000000001',
      requester: { userId: '1', roleIds: [], canManageGuild: false, channelId: '2', parentChannelId: null, guildLocale: 'en' },
      action: { op: 'queue' },
    });
    expect(reply).toEqual({ private: true, lines: [{ key: 'player.unreachable' }] });
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    await control.stop();
  });
});
