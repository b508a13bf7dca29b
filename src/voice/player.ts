/**
 * The guilds' players, in the process whose gateway holds their shard: joins the voice
 * channel, streams each song from its stored address, and moves through the queue. What plays
 * is in Redis (store.ts), so another process can take over from the song that was playing.
 * Its parts: the guild lease (guild-lease.ts), the requests (dispatcher.ts), the messages
 * (now-playing.ts), the idle countdown (idle-watcher.ts), each guild's order (guild-order.ts),
 * moving on and the loop (advance.ts), and dropping a song removed from the library
 * (drop-removed-song.ts).
 */
import { Events, type Client, type Guild, type VoiceBasedChannel, type VoiceState } from 'discord.js';
import type { Database } from '../db/client.js';
import { findGuild } from '../guilds/settings.js';
import { loggableError, type Logger } from '../logger.js';
import { translator } from '../i18n/index.js';
import { advancePlayer, songEnded, type AdvanceParts } from './advance.js';
import { radioRound, stillShown } from './library-entries.js';
import type { PlayFrom, VoiceEngine } from './engine/engine.js';
import type { FfmpegCheck } from './ffmpeg.js';
import type { GuildLease } from './guild-lease.js';
import { dropRemovedSong } from './drop-removed-song.js';
import { countPlay } from './plays.js';
import { handleRequest, type EndReason, type LivePlayer, type PlayerParts } from './dispatcher.js';
import { GuildOrder } from './guild-order.js';
import { IdleWatcher, listenersOfPlayer } from './idle-watcher.js';
import { resumeGuilds } from './resume.js';
import { PlayerMessages } from './now-playing.js';
import type { PlayerAnswer, PlayerRequest, PlayerService } from './player-requests.js';
import type { PlayerStore, QueueEntry } from './store.js';

export { isPlayerButton, nowPlayingMessage, type PlayerButton } from './now-playing.js';

export interface PlayerHostOptions {
  readonly client: Client<true>;
  readonly db: Database;
  /** Which process plays each guild. */
  readonly lease: GuildLease;
  readonly store: PlayerStore;
  readonly logger: Logger;
  readonly ffmpeg: FfmpegCheck;
  /** Where the voice connections run (a thread of their own). */
  readonly engine: VoiceEngine;
  /** How long the bot stays in a channel with no listener. */
  readonly idleSeconds: number;
  /** How often the now-playing card's progress bar is edited. @defaultValue 15000 */
  readonly progressEveryMs?: number;
}

export class PlayerHost implements PlayerService {
  readonly #options: PlayerHostOptions;
  readonly #players = new Map<string, LivePlayer>();
  readonly #onVoiceState = (before: VoiceState, after: VoiceState) => this.#voiceStateChanged(before, after);
  readonly #order = new GuildOrder();
  readonly #messages: PlayerMessages;
  readonly #idle: IdleWatcher;
  readonly #parts: PlayerParts;
  readonly #moving: PlayerParts & AdvanceParts;
  #closing = false;
  #retry: NodeJS.Timeout | undefined;

  constructor(options: PlayerHostOptions) {
    this.#options = options;
    const { client, db, store, ffmpeg, logger } = options;
    this.#messages = new PlayerMessages({
      client,
      store,
      logger,
      // A voice thread that just exited answers nothing: the card shows the song's length instead.
      elapsedMs: async (guildId) => (this.#players.get(guildId)?.stopped === false ? this.#players.get(guildId)!.line.playbackMs().catch(() => undefined) : undefined),
      refresh: (guildId) => void this.#order.run(guildId, async () => (this.#players.get(guildId)?.stopped === false ? this.#messages.show(guildId) : undefined)),
      ...(options.progressEveryMs !== undefined && { progressEveryMs: options.progressEveryMs }),
    });
    this.#idle = new IdleWatcher({
      idleMs: options.idleSeconds * 1000,
      listeners: (guildId) => {
        const live = this.#players.get(guildId);
        return live && !live.stopped ? listenersOfPlayer(client.guilds.cache.get(guildId), live.line.channelId) : undefined;
      },
      stays: async (guildId) => (await store.read(guildId))?.stay ?? false,
      leave: (guildId) =>
        void this.#order.run(guildId, async () => {
          if (this.#players.get(guildId)?.stopped !== false) return;
          logger.info({ guildId }, 'voice channel empty; leaving');
          await this.#finish(guildId, 'player.leftEmpty');
        }),
    });
    this.#parts = {
      store,
      ffmpeg,
      logger,
      guild: (guildId) => client.guilds.cache.get(guildId),
      settings: (guildId) => findGuild(db, guildId),
      radioRound: (guildId, radio, requestedBy) => radioRound(db, { ...radio, guildId }, requestedBy, true),
      serially: (guildId, work) => this.#order.run(guildId, work),
      holds: (guildId) => options.lease.claim(guildId),
      live: (guildId) => this.#players.get(guildId),
      connect: (guild, channel) => this.#connect(guild, channel),
      leaveChannel: (guild) => options.engine.leaveChannel(guild),
      advance: (live) => advancePlayer(this.#moving, live, 'skipped'),
      skip: (live) => this.#skip(live),
      finish: (guildId, why, user) => this.#finish(guildId, why, user),
      showNowPlaying: (guildId) => this.#messages.show(guildId),
      checkListeners: (guildId) => this.#idle.check(guildId),
      play: (live, entry, from) => this.#playEntry(live, entry, from),
      shown: (jobId) => stillShown(db, jobId),
    };
    this.#moving = { ...this.#parts, db, post: (guildId, text) => this.#messages.post(guildId, text) };
    client.on(Events.VoiceStateUpdate, this.#onVoiceState);
  }

  /** Whether this process's gateway has the guild (its shard runs here). */
  holdsGuild(guildId: string): boolean {
    return this.#options.client.guilds.cache.has(guildId);
  }

  /**
   * Whether this process is the guild's player: it holds the shard and the guild's lease,
   * taking it when free. Two processes running one shard never both play a guild.
   */
  async owns(guildId: string): Promise<boolean> {
    return this.holdsGuild(guildId) && (await this.#options.lease.claim(guildId));
  }

  /** Runs one request for a guild this process owns. Never throws: a failure is an answer. */
  handle(request: PlayerRequest): Promise<PlayerAnswer> {
    return handleRequest(this.#parts, request);
  }

  /** A song removed from the library leaves this guild's player (drop-removed-song.ts). */
  dropSong(guildId: string, jobId: string): Promise<void> {
    return this.#order.run(guildId, () => dropRemovedSong(this.#moving, guildId, jobId));
  }

  /** After READY (and a shard's): every guild with a player in Redis whose shard is here plays again, from the song that was playing. */
  async resumeAll(): Promise<void> {
    const heldElsewhere = await resumeGuilds(this.#parts, {
      owns: (guildId) => (this.#closing || !this.holdsGuild(guildId) ? Promise.resolve(undefined) : this.owns(guildId)),
      serially: (guildId, work) => this.#order.run(guildId, work),
      stopping: () => this.#closing,
    });
    // A process that died (killed, not stopped) keeps its leases until they lapse: look again then.
    if (heldElsewhere > 0 && !this.#closing && !this.#retry) {
      this.#retry = setTimeout(() => {
        this.#retry = undefined;
        void this.resumeAll().catch((error: unknown) => this.#options.logger.warn({ err: loggableError(error) }, 'voice players could not resume'));
      }, this.#options.lease.durationMs + 1_000);
      this.#retry.unref();
    }
  }

  /** Leaves every channel and lets go of the leases; what plays stays in Redis for the next process. */
  async stop(): Promise<void> {
    this.#closing = true;
    if (this.#retry) clearTimeout(this.#retry);
    this.#options.client.off(Events.VoiceStateUpdate, this.#onVoiceState);
    this.#messages.stopAll();
    for (const live of this.#players.values()) this.#teardown(live);
    this.#players.clear();
    await this.#options.lease.close();
  }

  #connect(guild: Guild, channel: VoiceBasedChannel): LivePlayer {
    const existing = this.#players.get(guild.id);
    if (existing) return existing;
    const line = this.#options.engine.join(guild, channel.id);
    const live: LivePlayer = { guildId: guild.id, line, advancing: false, stopped: false };
    this.#players.set(guild.id, live);
    line.onEnded = (end) => void this.#order.run(guild.id, () => songEnded(this.#moving, live, end));
    this.#options.lease.hold(guild.id, () => void this.#order.run(guild.id, async () => this.#lapsed(live)));
    // Kicked, or the channel deleted: the connection did not come back.
    line.onGone = () => {
      if (!live.stopped && !this.#closing) void this.#order.run(guild.id, () => (live.stopped ? Promise.resolve() : this.#finish(guild.id, 'player.disconnected')));
    };
    return live;
  }

  /** Another process took the guild: it plays from here on, so this one leaves without touching the state. */
  #lapsed(live: LivePlayer): void {
    if (live.stopped || this.#players.get(live.guildId) !== live) return;
    this.#options.logger.warn({ guildId: live.guildId }, 'voice lease lapsed; another process plays the guild');
    this.#teardown(live);
    this.#players.delete(live.guildId);
  }

  #playEntry(live: LivePlayer, entry: QueueEntry, from?: PlayFrom): void {
    live.line.play(entry.mediaUrl, from);
    this.#options.logger.info({ guildId: live.guildId, jobId: entry.jobId, ...from }, 'voice song started');
  }

  async #skip(live: LivePlayer): Promise<void> {
    // The song's end comes back, and songEnded moves on: one path for ended and skipped songs.
    live.skipping = true;
    if (await live.line.stopSong()) return;
    live.skipping = false;
    await advancePlayer(this.#moving, live, 'skipped');
  }

  /** Ends the guild's player: leaves, forgets the queue, and closes the now-playing message with `why`. */
  async #finish(guildId: string, why: EndReason, user?: string): Promise<void> {
    const live = this.#players.get(guildId);
    const state = await this.#options.store.read(guildId);
    if (live) {
      // A song heard long enough before the player ends is a play all the same.
      if (!live.stopped) await countPlay(this.#moving, guildId, state, await live.line.heardMs().catch(() => 0));
      live.stopped = true;
      this.#teardown(live);
      this.#players.delete(guildId);
    }
    await this.#options.store.clear(guildId);
    await this.#options.lease.release(guildId);
    this.#options.logger.info({ guildId, why }, 'voice player ended');
    if (state) {
      const t = translator(state.guildLocale);
      await this.#messages.close(guildId, state, why === 'player.stoppedBy' ? t('player.stoppedBy', { user: user ?? '' }) : t(why));
    }
  }

  #teardown(live: LivePlayer): void {
    this.#idle.forget(live.guildId);
    live.stopped = true;
    live.line.leave();
  }

  #voiceStateChanged(before: VoiceState, after: VoiceState): void {
    const guildId = after.guild.id;
    const live = this.#players.get(guildId);
    if (!live) return;
    // The bot itself moved (a moderator dragged it): follow the channel it is in now.
    if (after.id === after.client.user.id && after.channelId !== null && before.channelId !== after.channelId) {
      const channelId = after.channelId;
      void this.#order.run(guildId, () => this.#options.store.moveTo(guildId, channelId));
    }
    this.#idle.check(guildId);
  }
}
