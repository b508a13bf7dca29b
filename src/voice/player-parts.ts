/**
 * What the voice requests and the player's parts share: a player running in this process, its
 * line, and what a request may read and do to the host's players (player.ts builds them).
 */
import type { Guild, VoiceBasedChannel } from 'discord.js';
import type { GuildRow } from '../guilds/settings.js';
import type { Logger } from '../logger.js';
import type { PlayFrom, VoiceLine } from './engine/engine.js';
import type { FfmpegCheck } from './ffmpeg.js';
import type { PlayerStore, QueueEntry, RadioSettings } from './store.js';

/** What the player uses of its voice connection. */
export type PlayerLine = Pick<VoiceLine, 'channelId' | 'play' | 'stopSong' | 'pause' | 'unpause' | 'playbackMs' | 'heardMs' | 'leave' | 'onEnded' | 'onGone'>;

/** A player running in this process. */
export interface LivePlayer {
  readonly guildId: string;
  readonly line: PlayerLine;
  /** Set while the player moves on, so a stop does not race the next song. */
  advancing: boolean;
  /** Set while a skip ends the song: a song loop does not play a skipped song again. */
  skipping?: boolean;
  stopped: boolean;
}

export type EndReason = 'player.ended' | 'player.stoppedBy' | 'player.disconnected' | 'player.leftEmpty';

/** What a request reads and what it may do to the host's players. */
export interface RequestParts {
  readonly store: PlayerStore;
  readonly ffmpeg: Pick<FfmpegCheck, 'found'>;
  readonly logger: Logger;
  /** The guild as this process's gateway has it; undefined when its shard runs elsewhere. */
  guild(guildId: string): Guild | undefined;
  /** The guild's settings (roles, allowed channels), when it has any. */
  settings(guildId: string): Promise<GuildRow | undefined>;
  /** The radio's first round (the library's songs shuffled, or the chart in order), as entries requested by `requestedBy`. */
  radioRound(guildId: string, radio: RadioSettings, requestedBy: string): Promise<QueueEntry[]>;
  /** Runs `work` after the guild's earlier requests and player events have settled. */
  serially<T>(guildId: string, work: () => Promise<T>): Promise<T>;
  /** Whether this process holds the guild's lease, taking it when free. */
  holds(guildId: string): Promise<boolean>;
  live(guildId: string): LivePlayer | undefined;
  /** Joins the channel (or returns the guild's player already there). */
  connect(guild: Guild, channel: VoiceBasedChannel): LivePlayer;
  /** Takes the bot out of the voice channel the gateway has it in, where no player of this process is. */
  leaveChannel(guild: Guild): boolean;
  /** Plays the next entry of the queue; none: the player ends. */
  advance(live: LivePlayer): Promise<void>;
  skip(live: LivePlayer): Promise<void>;
  finish(guildId: string, why: EndReason, user?: string): Promise<void>;
  showNowPlaying(guildId: string): Promise<void>;
  checkListeners(guildId: string): void;
  /** Starts `entry` on the player's line (the state already says it plays), from `from`'s start at its volume. */
  play(live: LivePlayer, entry: QueueEntry, from?: PlayFrom): void;
}

/** The host's players as its parts see them: what a request may do, and starting an entry. */
export interface PlayerParts extends RequestParts {
  /** Whether the song is still one the library shows (neither hidden nor deleted). */
  shown(jobId: string): Promise<boolean>;
}
