/**
 * The guilds' players, in the process whose gateway holds their shard: joins the voice
 * channel, streams each song from its stored address through ffmpeg, keeps the now-playing
 * message up to date, leaves an empty channel, and answers the voice commands. What plays is
 * in Redis (store.ts), so another process can take over from the song that was playing.
 */
import { randomUUID } from 'node:crypto';
import {
  ActionRowBuilder,
  ButtonBuilder,
  ButtonStyle,
  ChannelType,
  EmbedBuilder,
  Events,
  PermissionFlagsBits,
  type Client,
  type Guild,
  type VoiceBasedChannel,
  type VoiceState,
} from 'discord.js';
import type { RedisClient } from '../queue/connection.js';
import type { Database } from '../db/client.js';
import { encodeCustomId } from '../discord-rest/custom-ids.js';
import { loggableError, type Logger } from '../logger.js';
import { checkPlaceAndRole, isModerator } from '../guilds/access.js';
import { findGuild } from '../guilds/settings.js';
import { localText, translator, type LocalText, type Translator } from '../i18n/index.js';
import { escapeMarkdown, truncate } from '../text.js';
import { radioRound } from './entries.js';
import type { VoiceEngine, VoiceLine, SongEnd } from './engine/engine.js';
import type { FfmpegCheck } from './ffmpeg.js';
import { answer, type PlayerAnswer, type PlayerRequest, type PlayerService, type Requester } from './ops.js';
import { channelHasRoom, clock, controlsPlayer, missingVoicePermissions, skipDecision, votePasses, votesNeeded } from './rules.js';
import type { PlayerState, PlayerStore, QueueEntry } from './store.js';

export interface PlayerHostOptions {
  readonly client: Client<true>;
  readonly db: Database;
  readonly redis: RedisClient;
  readonly prefix: string;
  readonly store: PlayerStore;
  readonly logger: Logger;
  readonly ffmpeg: FfmpegCheck;
  /** Where the voice connections run (a thread of their own). */
  readonly engine: VoiceEngine;
  /** How long the bot stays in a channel with no listener. */
  readonly idleSeconds: number;
  /** How long a claim on a guild's player lasts without renewal (another process may take over after). @defaultValue 15000 */
  readonly claimMs?: number;
}

/** A player running here. */
interface LivePlayer {
  readonly guildId: string;
  readonly line: VoiceLine;
  idleTimer?: NodeJS.Timeout;
  /** Set while the player moves on, so a stop does not race the next song. */
  advancing: boolean;
  stopped: boolean;
}

const PLAYER_BUTTONS = ['pause', 'resume', 'skip', 'stop'] as const;
export type PlayerButton = (typeof PLAYER_BUTTONS)[number];

export function isPlayerButton(value: string): value is PlayerButton {
  return (PLAYER_BUTTONS as readonly string[]).includes(value);
}

export class PlayerHost implements PlayerService {
  readonly #options: PlayerHostOptions;
  readonly #players = new Map<string, LivePlayer>();
  readonly #processId = randomUUID();
  readonly #renewal: NodeJS.Timeout;
  readonly #onVoiceState = (before: VoiceState, after: VoiceState) => this.#voiceStateChanged(before, after);
  /** Each guild's changes, one after another: a song ending never races a command or the idle timer. */
  readonly #queues = new Map<string, Promise<unknown>>();
  #closing = false;
  #retry: NodeJS.Timeout | undefined;

  constructor(options: PlayerHostOptions) {
    this.#options = options;
    options.client.on(Events.VoiceStateUpdate, this.#onVoiceState);
    const claimMs = options.claimMs ?? 15_000;
    this.#renewal = setInterval(() => void this.#renewClaims(claimMs), Math.max(1_000, Math.floor(claimMs / 3)));
    this.#renewal.unref();
  }

  /** Whether this process's gateway has the guild (its shard runs here). */
  holdsGuild(guildId: string): boolean {
    return this.#options.client.guilds.cache.has(guildId);
  }

  /**
   * Whether this process is the guild's player: it holds the shard and owns the claim, taking
   * it when free. Two processes running one shard never both play a guild.
   */
  async owns(guildId: string): Promise<boolean> {
    if (!this.holdsGuild(guildId)) return false;
    const key = this.#claimKey(guildId);
    const taken = await this.#options.redis.set(key, this.#processId, 'PX', this.#options.claimMs ?? 15_000, 'NX');
    if (taken === 'OK') return true;
    return (await this.#options.redis.get(key)) === this.#processId;
  }

  /** Runs `work` after the guild's earlier changes have finished. */
  #serially<T>(guildId: string, work: () => Promise<T>): Promise<T> {
    const previous = this.#queues.get(guildId) ?? Promise.resolve();
    const next = previous.then(work, work);
    const settled = next.catch(() => {});
    this.#queues.set(guildId, settled);
    void settled.then(() => {
      if (this.#queues.get(guildId) === settled) this.#queues.delete(guildId);
    });
    return next;
  }

  /** Runs one request for a guild this process owns. Never throws: a failure is an answer. */
  async handle(request: PlayerRequest): Promise<PlayerAnswer> {
    try {
      return await this.#serially(request.guildId, () => this.#handle(request));
    } catch (error) {
      this.#options.logger.error({ err: loggableError(error), guildId: request.guildId, op: request.action.op }, 'voice request failed');
      return answer(true, localText('player.failed'));
    }
  }

  /** After READY (and a shard's): every guild with a player in Redis whose shard is here plays again, from the song that was playing. */
  async resumeAll(): Promise<void> {
    const guildIds = await this.#options.store.activeGuilds();
    let claimed = 0;
    for (const guildId of guildIds) {
      if (this.#players.has(guildId) || !this.holdsGuild(guildId) || this.#closing) continue;
      if (!(await this.owns(guildId))) {
        claimed += 1;
        continue;
      }
      await this.#serially(guildId, () => this.#resume(guildId));
    }
    // A process that died (killed, not stopped) keeps its claims until they lapse: look again then.
    if (claimed > 0 && !this.#closing && !this.#retry) {
      this.#retry = setTimeout(() => {
        this.#retry = undefined;
        void this.resumeAll().catch((error: unknown) => this.#options.logger.warn({ err: loggableError(error) }, 'voice players could not resume'));
      }, (this.#options.claimMs ?? 15_000) + 1_000);
      this.#retry.unref();
    }
  }

  async #resume(guildId: string): Promise<void> {
    if (this.#players.has(guildId) || this.#closing) return;
    const state = await this.#options.store.read(guildId);
    if (!state) {
      await this.#options.store.clear(guildId);
      return;
    }
    this.#options.logger.info({ guildId, channelId: state.voiceChannelId, jobId: state.current?.jobId }, 'voice player resumed');
    try {
      const guild = this.#options.client.guilds.cache.get(guildId)!;
      const channel = guild.channels.cache.get(state.voiceChannelId);
      if (!channel?.isVoiceBased()) {
        await this.#finish(guildId, 'player.ended');
        return;
      }
      const live = this.#connect(guild, channel);
      if (state.current) {
        await this.#options.store.write(guildId, { ...state, paused: false });
        this.#playEntry(live, state.current);
        await this.#showNowPlaying(guildId);
      } else {
        await this.#advance(live);
      }
      this.#checkListeners(guildId);
    } catch (error) {
      this.#options.logger.warn({ err: loggableError(error), guildId }, 'voice player could not resume');
    }
  }

  /** Leaves every channel and lets go of the claims; what plays stays in Redis for the next process. */
  async stop(): Promise<void> {
    this.#closing = true;
    clearInterval(this.#renewal);
    if (this.#retry) clearTimeout(this.#retry);
    this.#options.client.off(Events.VoiceStateUpdate, this.#onVoiceState);
    for (const live of this.#players.values()) this.#teardown(live);
    const keys = [...this.#players.keys()].map((guildId) => this.#claimKey(guildId));
    this.#players.clear();
    for (const key of keys) {
      // Only our own claim: a process that took over keeps its.
      await this.#options.redis.eval("if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0", 1, key, this.#processId).catch(() => {});
    }
  }

  /** The number of guilds playing here. */
  get playing(): number {
    return this.#players.size;
  }

  async #handle(request: PlayerRequest): Promise<PlayerAnswer> {
    const { guildId, requester, action } = request;
    const guild = this.#options.client.guilds.cache.get(guildId);
    if (!guild) return answer(true, localText('player.unreachable'));
    const row = await findGuild(this.#options.db, guildId);
    const rules = { moderatorRoleId: row?.moderatorRoleId ?? null, djRoleId: row?.djRoleId ?? null };
    const controls = controlsPlayer(rules, requester);
    const state = await this.#options.store.read(guildId);
    const live = this.#players.get(guildId);
    this.#options.logger.debug({ guildId, op: action.op, live: live !== undefined, playing: state?.current?.jobId ?? null, paused: state?.paused }, 'voice request');

    switch (action.op) {
      case 'play':
      case 'radio': {
        if (!this.#options.ffmpeg.found) return answer(true, localText('player.noFfmpeg'));
        if (action.op === 'radio' && action.stay && !isModerator({ moderatorRoleId: rules.moderatorRoleId }, requester)) {
          return answer(true, localText('player.stayModeratorsOnly'));
        }
        const target = await this.#targetChannel(guild, requester, row, state);
        if ('refusal' in target) return answer(true, target.refusal);
        const channel = target.channel;
        let entries: QueueEntry[];
        if (action.op === 'play') entries = [action.entry];
        else {
          entries = await radioRound(this.#options.db, { guildId, userId: action.radio.userId ?? undefined, query: action.radio.query ?? undefined }, requester.userId);
          if (entries.length === 0) return answer(true, localText('player.radioEmpty'));
        }
        const radio = action.op === 'radio' ? action.radio : (state?.radio ?? null);
        const stay = action.op === 'radio' ? action.stay : (state?.stay ?? false);
        if (live && state?.current) {
          const position = await this.#options.store.enqueue(guildId, ...entries);
          await this.#options.store.write(guildId, { ...state, radio, stay });
          if (action.op === 'radio') return answer(false, localText('player.radioQueued', { count: entries.length }));
          return answer(false, localText('player.queued', { title: escapeMarkdown(action.entry.title), position }));
        }
        const fresh: PlayerState = {
          voiceChannelId: channel.id,
          textChannelId: requester.channelId,
          guildLocale: requester.guildLocale,
          nowPlayingMessageId: state?.nowPlayingMessageId ?? null,
          current: null,
          paused: false,
          radio,
          stay,
        };
        await this.#options.store.clearQueue(guildId);
        await this.#options.store.enqueue(guildId, ...entries);
        await this.#options.store.write(guildId, fresh);
        const started = this.#connect(guild, channel);
        await this.#advance(started);
        this.#checkListeners(guildId);
        const first = (await this.#options.store.read(guildId))?.current ?? entries[0]!;
        return action.op === 'radio'
          ? answer(false, localText(stay ? 'player.radioStay' : 'player.radioStarted', { channel: channel.id, count: entries.length }))
          : answer(false, localText('player.playing', { title: escapeMarkdown(first.title), channel: channel.id }));
      }
      case 'queue': {
        if (!live || !state?.current) return answer(true, localText('player.nothingPlaying'));
        const queue = await this.#options.store.queue(guildId);
        const elapsed = (await live.line.playbackMs()) / 1000;
        const length = state.current.durationSeconds;
        const lines: LocalText[] = [
          localText(state.paused ? 'player.queue.paused' : 'player.queue.now', {
            title: escapeMarkdown(state.current.title),
            maker: state.current.makerId,
            elapsed: clock(elapsed),
            length: length === null ? '?' : clock(length),
          }),
        ];
        if (queue.length === 0) lines.push(localText(state.radio ? 'player.queue.radioNext' : 'player.queue.empty'));
        else {
          lines.push(localText('player.queue.next'));
          queue.slice(0, 10).forEach((entry, index) =>
            lines.push(localText('player.queue.entry', { position: index + 1, title: escapeMarkdown(truncate(entry.title, 80)), maker: entry.makerId, requester: entry.requestedBy })),
          );
          if (queue.length > 10) lines.push(localText('player.queue.more', { count: queue.length - 10 }));
        }
        return answer(false, ...lines);
      }
      case 'skip': {
        if (!live || !state?.current) return answer(true, localText('player.nothingPlaying'));
        const listeners = this.#listeners(guild, state.voiceChannelId);
        if (skipDecision({ controls, userId: requester.userId, requestedBy: state.current.requestedBy }) === 'skip') {
          await this.#skip(live);
          return answer(false, localText('player.skipped', { title: escapeMarkdown(state.current.title), user: requester.userId }));
        }
        if (!listeners.includes(requester.userId)) return answer(true, localText('player.voteListenersOnly', { channel: state.voiceChannelId }));
        const votes = await this.#options.store.vote(guildId, requester.userId);
        if (votePasses(votes, listeners.length)) {
          await this.#skip(live);
          return answer(false, localText('player.voteSkipped', { title: escapeMarkdown(state.current.title) }));
        }
        return answer(false, localText('player.voted', { votes, needed: votesNeeded(listeners.length) }));
      }
      case 'stop': {
        if (!live || !state) return answer(true, localText('player.nothingPlaying'));
        const listeners = this.#listeners(guild, state.voiceChannelId);
        const alone = listeners.length === 1 && listeners[0] === requester.userId;
        if (!controls && !alone) return answer(true, localText('player.controllersOnly'));
        await this.#finish(guildId, 'player.stoppedBy', requester.userId);
        return answer(false, localText('player.stopped'));
      }
      case 'pause':
      case 'resume': {
        if (!live || !state?.current) return answer(true, localText('player.nothingPlaying'));
        const listeners = this.#listeners(guild, state.voiceChannelId);
        const alone = listeners.length === 1 && listeners[0] === requester.userId;
        if (!controls && !alone && requester.userId !== state.current.requestedBy) return answer(true, localText('player.pauseNotAllowed'));
        const pause = action.op === 'pause';
        if (state.paused === pause) return answer(true, localText(pause ? 'player.alreadyPaused' : 'player.notPaused'));
        await (pause ? live.line.pause() : live.line.unpause());
        await this.#options.store.write(guildId, { ...state, paused: pause });
        await this.#showNowPlaying(guildId);
        return answer(false, localText(pause ? 'player.paused' : 'player.resumed', { user: requester.userId }));
      }
    }
  }

  /** The member's voice channel, if the bot may play there; else why not. */
  async #targetChannel(
    guild: Guild,
    requester: Requester,
    row: Awaited<ReturnType<typeof findGuild>>,
    state: PlayerState | undefined,
  ): Promise<{ channel: VoiceBasedChannel } | { refusal: LocalText }> {
    const channelId = guild.voiceStates.cache.get(requester.userId)?.channelId ?? null;
    if (channelId === null) return { refusal: localText('player.notInVoice') };
    const channel = guild.channels.cache.get(channelId);
    if (!channel?.isVoiceBased()) return { refusal: localText('player.notInVoice') };
    if (this.#players.has(guild.id) && state && state.voiceChannelId !== channelId) {
      return { refusal: localText('player.elsewhere', { channel: state.voiceChannelId }) };
    }
    if (row) {
      const access = checkPlaceAndRole(row, { channelId, parentChannelId: null }, requester);
      if (access?.reason === 'channel_not_allowed') {
        return { refusal: localText('player.channelNotAllowed', { channels: access.allowedChannelIds.slice(0, 10).map((id) => `<#${id}>`).join(', ') }) };
      }
      if (access?.reason === 'missing_role') return { refusal: localText('refusal.missingRole', { role: access.roleId }) };
    }
    const me = guild.members.me ?? (await guild.members.fetchMe());
    const permissions = channel.permissionsFor(me);
    const missing = missingVoicePermissions((name) => permissions?.has(PermissionFlagsBits[name]) ?? false);
    if (missing.length > 0) {
      return { refusal: localText('player.missingPermissions', { channel: channel.id, permissions: missing.map((name) => PERMISSION_NAMES[name]).join(', ') }) };
    }
    const inside = channel.members.has(me.id);
    if (!inside && !channelHasRoom(channel.userLimit, channel.members.size)) return { refusal: localText('player.channelFull', { channel: channel.id }) };
    return { channel };
  }

  #connect(guild: Guild, channel: VoiceBasedChannel): LivePlayer {
    const existing = this.#players.get(guild.id);
    if (existing) return existing;
    const line = this.#options.engine.join(guild, channel.id);
    const live: LivePlayer = { guildId: guild.id, line, advancing: false, stopped: false };
    this.#players.set(guild.id, live);
    line.onEnded = (end) => void this.#serially(guild.id, () => this.#songEnded(live, end));
    // Kicked, or the channel deleted: the connection did not come back.
    line.onGone = () => {
      if (!live.stopped && !this.#closing) void this.#serially(guild.id, () => (live.stopped ? Promise.resolve() : this.#finish(guild.id, 'player.disconnected')));
    };
    return live;
  }

  #playEntry(live: LivePlayer, entry: QueueEntry): void {
    live.line.play(entry.mediaUrl);
    this.#options.logger.info({ guildId: live.guildId, jobId: entry.jobId }, 'voice song started');
  }

  /** The song ended, failed or was skipped. */
  async #songEnded(live: LivePlayer, end: SongEnd): Promise<void> {
    if (live.stopped || live.advancing) return;
    const state = await this.#options.store.read(live.guildId);
    if (end.exitCode !== 0 && end.exitCode !== null && state?.current) {
      this.#options.logger.warn({ guildId: live.guildId, jobId: state.current.jobId, code: end.exitCode, error: end.error.trim(), playedMs: end.playedMs }, 'voice song could not be played');
      await this.#post(live.guildId, localText('player.unplayable', { title: escapeMarkdown(state.current.title) }));
    }
    await this.#advance(live);
  }

  /** Plays the next entry of the queue (the radio refills it); none: the player ends. */
  async #advance(live: LivePlayer): Promise<void> {
    if (live.advancing) return;
    live.advancing = true;
    try {
      const { store, db } = this.#options;
      const state = await store.read(live.guildId);
      if (!state) return;
      let next = await store.next(live.guildId);
      if (!next && state.radio) {
        const round = await radioRound(db, { guildId: live.guildId, userId: state.radio.userId ?? undefined, query: state.radio.query ?? undefined }, state.current?.requestedBy ?? '');
        if (round.length > 0) {
          await store.enqueue(live.guildId, ...round);
          next = await store.next(live.guildId);
        }
      }
      await store.clearVotes(live.guildId);
      if (!next) {
        live.advancing = false;
        await this.#finish(live.guildId, 'player.ended');
        return;
      }
      await store.write(live.guildId, { ...state, current: next, paused: false });
      this.#playEntry(live, next);
      await this.#showNowPlaying(live.guildId);
    } finally {
      live.advancing = false;
    }
  }

  async #skip(live: LivePlayer): Promise<void> {
    // The song's end comes back, and #songEnded moves on: one path for ended and skipped songs.
    if (!(await live.line.stopSong())) await this.#advance(live);
  }

  /** Ends the guild's player: leaves, forgets the queue, and closes the now-playing message with `why`. */
  async #finish(guildId: string, why: 'player.ended' | 'player.stoppedBy' | 'player.disconnected' | 'player.leftEmpty', user?: string): Promise<void> {
    const live = this.#players.get(guildId);
    const state = await this.#options.store.read(guildId);
    if (live) {
      live.stopped = true;
      this.#teardown(live);
      this.#players.delete(guildId);
    }
    await this.#options.store.clear(guildId);
    await this.#options.redis.del(this.#claimKey(guildId));
    this.#options.logger.info({ guildId, why }, 'voice player ended');
    if (state?.nowPlayingMessageId) {
      const t = translator(state.guildLocale);
      const text = why === 'player.stoppedBy' ? t('player.stoppedBy', { user: user ?? '' }) : t(why);
      await this.#editMessage(state, { content: text, embeds: [], components: [] }).catch((error: unknown) =>
        this.#options.logger.warn({ err: loggableError(error), guildId }, 'could not close the now-playing message'),
      );
    }
  }

  #teardown(live: LivePlayer): void {
    if (live.idleTimer) clearTimeout(live.idleTimer);
    live.stopped = true;
    live.line.leave();
  }

  /** Non-bot members in the channel. */
  #listeners(guild: Guild, channelId: string): string[] {
    return guild.voiceStates.cache.filter((voice) => voice.channelId === channelId && voice.member?.user.bot !== true && voice.id !== guild.client.user.id).map((voice) => voice.id);
  }

  #voiceStateChanged(before: VoiceState, after: VoiceState): void {
    const guildId = after.guild.id;
    const live = this.#players.get(guildId);
    if (!live) return;
    // The bot itself moved (a moderator dragged it): follow the channel it is in now.
    if (after.id === after.client.user.id && after.channelId !== null && before.channelId !== after.channelId) {
      const channelId = after.channelId;
      void this.#serially(guildId, async () => {
        const state = await this.#options.store.read(guildId);
        if (state && state.voiceChannelId !== channelId) await this.#options.store.write(guildId, { ...state, voiceChannelId: channelId });
      });
    }
    this.#checkListeners(guildId);
  }

  /** Starts the idle countdown when the bot's channel has no listener, and stops it when one comes. */
  #checkListeners(guildId: string): void {
    const live = this.#players.get(guildId);
    const guild = this.#options.client.guilds.cache.get(guildId);
    if (!live || !guild) return;
    const channelId = guild.voiceStates.cache.get(guild.client.user.id)?.channelId ?? live.line.channelId;
    if (!channelId) return;
    const empty = this.#listeners(guild, channelId).length === 0;
    if (!empty) {
      if (live.idleTimer) clearTimeout(live.idleTimer);
      live.idleTimer = undefined;
      return;
    }
    if (live.idleTimer) return;
    void this.#options.store.read(guildId).then((state) => {
      if (state?.stay || live.stopped || live.idleTimer) return;
      live.idleTimer = setTimeout(() => {
        live.idleTimer = undefined;
        const stillEmpty = this.#listeners(guild, channelId).length === 0;
        if (stillEmpty && !live.stopped) {
          this.#options.logger.info({ guildId, channelId }, 'voice channel empty; leaving');
          void this.#serially(guildId, () => (live.stopped ? Promise.resolve() : this.#finish(guildId, 'player.leftEmpty')));
        }
      }, this.#options.idleSeconds * 1000);
      live.idleTimer.unref();
    });
  }

  async #showNowPlaying(guildId: string): Promise<void> {
    const state = await this.#options.store.read(guildId);
    if (!state?.current) return;
    const t = translator(state.guildLocale);
    const message = nowPlayingMessage(t, state, await this.#options.store.queueLength(guildId));
    try {
      if (state.nowPlayingMessageId) {
        await this.#editMessage(state, message);
        return;
      }
    } catch {
      // Deleted or no longer editable: a new one below.
    }
    try {
      const channel = await this.#options.client.channels.fetch(state.textChannelId);
      if (!channel?.isSendable()) return;
      const sent = await channel.send({ ...message, allowedMentions: { parse: [] } });
      const latest = await this.#options.store.read(guildId);
      if (latest) await this.#options.store.write(guildId, { ...latest, nowPlayingMessageId: sent.id });
    } catch (error) {
      this.#options.logger.warn({ err: loggableError(error), guildId }, 'could not post the now-playing message');
    }
  }

  async #editMessage(state: PlayerState, message: { content: string; embeds: EmbedBuilder[]; components: ActionRowBuilder<ButtonBuilder>[] }): Promise<void> {
    const channel = await this.#options.client.channels.fetch(state.textChannelId);
    if (!channel?.isTextBased() || channel.type === ChannelType.DM || !state.nowPlayingMessageId) throw new Error('no channel to edit in');
    await channel.messages.edit(state.nowPlayingMessageId, { ...message, allowedMentions: { parse: [] } });
  }

  /** One line in the player's text channel, in the guild's language. */
  async #post(guildId: string, text: LocalText): Promise<void> {
    const state = await this.#options.store.read(guildId);
    if (!state) return;
    try {
      const channel = await this.#options.client.channels.fetch(state.textChannelId);
      if (channel?.isSendable()) await channel.send({ content: translator(state.guildLocale).text(text), allowedMentions: { parse: [] } });
    } catch (error) {
      this.#options.logger.warn({ err: loggableError(error), guildId }, 'could not post to the player channel');
    }
  }

  #claimKey(guildId: string): string {
    return `${this.#options.prefix}:voice:owner:${guildId}`;
  }

  async #renewClaims(claimMs: number): Promise<void> {
    for (const guildId of this.#players.keys()) {
      await this.#options.redis
        .eval("if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end return 0", 1, this.#claimKey(guildId), this.#processId, claimMs)
        .catch(() => {});
    }
  }
}

/** How each missing permission is named to the member: as Discord's settings show it. */
const PERMISSION_NAMES = { ViewChannel: 'View Channel', Connect: 'Connect', Speak: 'Speak' } as const;

/** The now-playing message: the song, who made and asked for it, its length, what is next, and the buttons. */
export function nowPlayingMessage(t: Translator, state: PlayerState, queued: number) {
  const current = state.current!;
  const embed = new EmbedBuilder()
    .setTitle(truncate(`${state.paused ? '⏸' : '▶'} ${current.title}`, 256))
    .setDescription(
      [
        t('player.message.maker', { maker: current.makerId, requester: current.requestedBy }),
        current.durationSeconds === null ? '' : t('player.message.length', { length: clock(current.durationSeconds) }),
        t(state.radio ? 'player.message.radio' : 'player.message.queued', { count: queued }),
      ]
        .filter(Boolean)
        .join('\n'),
    );
  const button = (action: PlayerButton, label: string, style: ButtonStyle) =>
    new ButtonBuilder().setCustomId(encodeCustomId({ action: 'player', subject: action })).setLabel(label).setStyle(style);
  const row = new ActionRowBuilder<ButtonBuilder>().addComponents(
    state.paused ? button('resume', t('player.button.resume'), ButtonStyle.Primary) : button('pause', t('player.button.pause'), ButtonStyle.Secondary),
    button('skip', t('player.button.skip'), ButtonStyle.Secondary),
    button('stop', t('player.button.stop'), ButtonStyle.Danger),
  );
  return { content: state.paused ? t('player.message.paused') : t('player.message.playing'), embeds: [embed], components: [row] };
}
