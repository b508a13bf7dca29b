/**
 * What a guild's player is doing, kept in Redis so a restart or a shard moving to another
 * process loses nothing: the channels, the song playing, the queue, pause, radio, volume, loop,
 * and the skip votes. Only the process that holds the guild's player writes a guild's keys.
 */
import type { ChartPeriod } from '../pipeline/charts.js';
import type { RedisClient } from '../queue/connection.js';

/** A song as the player keeps it: enough to play it and to name it, without reading Postgres again. */
export interface QueueEntry {
  /** The library's job id. */
  readonly jobId: string;
  readonly clipId: string;
  readonly title: string;
  /** Who made the song (a user id). */
  readonly makerId: string;
  /** The stored media address; playback never calls the music service. */
  readonly mediaUrl: string;
  /** Known length, when the service gave one. */
  readonly durationSeconds: number | null;
  /** Who asked for it (a user id); the radio's own picks name the member who started it. */
  readonly requestedBy: string;
}

export interface RadioSettings {
  readonly userId: string | null;
  readonly query: string | null;
  /** The server's chart of this period (by likes) instead of the library: in order first, then shuffled. */
  readonly chart?: ChartPeriod | null;
}

/** What plays again when a song ends: nothing, the same song, or the whole queue (the song goes to its end). */
export type LoopMode = 'off' | 'song' | 'queue';

export interface PlayerState {
  readonly voiceChannelId: string;
  readonly textChannelId: string;
  /** The guild's language, for what is posted in the channel. */
  readonly guildLocale: string;
  readonly nowPlayingMessageId: string | null;
  readonly current: QueueEntry | null;
  readonly paused: boolean;
  /** Set while `/radio` plays: when the queue runs dry, more songs of the library matching it. */
  readonly radio: RadioSettings | null;
  /** A moderator's 24/7: no leaving an empty channel. */
  readonly stay: boolean;
  /** Percent of each song's own loudness, 0 to 200; left out (a state written before volumes): 100. */
  readonly volume?: number;
  /** Left out (a state written before loops): off. */
  readonly loop?: LoopMode;
  /** The current song's playback, a key of its own: a play of it is counted once (plays.ts). */
  readonly playback?: string;
}

export interface PlayerStore {
  /** Guilds with a player, for resuming after a restart. */
  activeGuilds(): Promise<string[]>;
  read(guildId: string): Promise<PlayerState | undefined>;
  write(guildId: string, state: PlayerState): Promise<void>;
  /** Records that the guild's player now sits in `channelId` (a moderator moved the bot). */
  moveTo(guildId: string, channelId: string): Promise<void>;
  /** Forgets the guild's player: state, queue and votes. */
  clear(guildId: string): Promise<void>;
  queue(guildId: string): Promise<QueueEntry[]>;
  queueLength(guildId: string): Promise<number>;
  /** Appends; resolves with the entry's position in the queue (1: next). */
  enqueue(guildId: string, ...entries: QueueEntry[]): Promise<number>;
  /** Takes the next entry off the queue. */
  next(guildId: string): Promise<QueueEntry | undefined>;
  clearQueue(guildId: string): Promise<void>;
  /** Puts `entries` in the queue's place, in one step (a reorder, a removal). */
  replaceQueue(guildId: string, entries: readonly QueueEntry[]): Promise<void>;
  /** Takes every entry of the song `jobId` out of the queue; resolves with how many there were. */
  removeFromQueue(guildId: string, jobId: string): Promise<number>;
  /** Records a vote; resolves with the votes counted for the current song. */
  vote(guildId: string, userId: string): Promise<number>;
  clearVotes(guildId: string): Promise<void>;
}

export function createPlayerStore(redis: RedisClient, prefix: string): PlayerStore {
  const key = {
    active: `${prefix}:voice:active`,
    guild: (id: string) => `${prefix}:voice:guild:${id}`,
    queue: (id: string) => `${prefix}:voice:queue:${id}`,
    votes: (id: string) => `${prefix}:voice:votes:${id}`,
  };
  const store: PlayerStore = {
    activeGuilds: () => redis.smembers(key.active),
    async read(guildId) {
      const raw = await redis.get(key.guild(guildId));
      return raw === null ? undefined : (JSON.parse(raw) as PlayerState);
    },
    async write(guildId, state) {
      await redis.multi().set(key.guild(guildId), JSON.stringify(state)).sadd(key.active, guildId).exec();
    },
    async moveTo(guildId, channelId) {
      const state = await store.read(guildId);
      if (state && state.voiceChannelId !== channelId) await store.write(guildId, { ...state, voiceChannelId: channelId });
    },
    async clear(guildId) {
      await redis.multi().del(key.guild(guildId), key.queue(guildId), key.votes(guildId)).srem(key.active, guildId).exec();
    },
    async queue(guildId) {
      return (await redis.lrange(key.queue(guildId), 0, -1)).map((raw) => JSON.parse(raw) as QueueEntry);
    },
    queueLength: (guildId) => redis.llen(key.queue(guildId)),
    async enqueue(guildId, ...entries) {
      if (entries.length === 0) return redis.llen(key.queue(guildId));
      const length = await redis.rpush(key.queue(guildId), ...entries.map((entry) => JSON.stringify(entry)));
      return length - entries.length + 1;
    },
    async next(guildId) {
      const raw = await redis.lpop(key.queue(guildId));
      return raw === null ? undefined : (JSON.parse(raw) as QueueEntry);
    },
    async clearQueue(guildId) {
      await redis.del(key.queue(guildId));
    },
    async replaceQueue(guildId, entries) {
      const write = redis.multi().del(key.queue(guildId));
      if (entries.length > 0) write.rpush(key.queue(guildId), ...entries.map((entry) => JSON.stringify(entry)));
      await write.exec();
    },
    async removeFromQueue(guildId, jobId) {
      const raws = await redis.lrange(key.queue(guildId), 0, -1);
      const matching = [...new Set(raws.filter((raw) => (JSON.parse(raw) as QueueEntry).jobId === jobId))];
      let removed = 0;
      for (const raw of matching) removed += await redis.lrem(key.queue(guildId), 0, raw);
      return removed;
    },
    async vote(guildId, userId) {
      const [, count] = (await redis.multi().sadd(key.votes(guildId), userId).scard(key.votes(guildId)).exec()) ?? [];
      return Number(count?.[1] ?? 0);
    },
    async clearVotes(guildId) {
      await redis.del(key.votes(guildId));
    },
  };
  return store;
}
