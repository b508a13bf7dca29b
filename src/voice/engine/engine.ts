/**
 * The voice engine as the player host (player.ts) sees it: a line per guild that joins a
 * channel, plays a song's address, pauses, skips and leaves. The connections themselves run on
 * voice threads of their own (core.ts, voice-thread.ts): a thousand commands a second on the
 * main thread never delay the next 20 ms frame, and guilds joining at once do their DAVE key
 * exchanges on several threads side by side. Each guild goes to the thread with the fewest.
 */
import type { Worker } from 'node:worker_threads';
import { GatewayOpcodes, type Guild } from 'discord.js';
import type { Logger } from '../../logger.js';
import type { PlayFrom, SongEnd, VoiceCall } from './protocol.js';
import { VoiceThread, type VoiceEvent } from './voice-thread.js';

export type { PlayFrom, SongEnd } from './protocol.js';

export interface VoiceEngineOptions {
  readonly logger: Logger;
  readonly ffmpegPath: string;
  readonly libopus: boolean;
  /** How many voice threads share the guilds. @defaultValue 1 */
  readonly threads?: number;
  /** Starts a voice thread's worker (tests keep a handle to end one). @defaultValue the voice thread's entry (thread.ts) */
  readonly startThread?: () => Worker;
}

/** One guild's voice connection and player, driven from the main thread. */
export class VoiceLine {
  readonly guildId: string;
  /** The channel it was asked to join (the bot may have been moved since: the gateway's voice state says). */
  readonly channelId: string;
  /** The song playing's id, as `play` returned it; a song's end names the song it ended. */
  playId = 0;
  onEnded: (end: SongEnd) => void = () => {};
  onGone: () => void = () => {};
  readonly #engine: VoiceEngine;
  #startMs = 0;

  constructor(engine: VoiceEngine, guildId: string, channelId: string) {
    this.#engine = engine;
    this.guildId = guildId;
    this.channelId = channelId;
  }

  /** Starts `url` through ffmpeg (from `from.startMs`, at `from.volume`), ending whatever played; returns its play id. */
  play(url: string, from: PlayFrom = {}): number {
    this.playId += 1;
    this.#startMs = from.startMs ?? 0;
    // A thread that exits fails the call: the line's `onGone` says so.
    this.#engine.call({ op: 'play', guildId: this.guildId, playId: this.playId, url, ...from, ...this.#engine.decoder }).catch(() => {});
    return this.playId;
  }

  async pause(): Promise<void> {
    await this.#engine.call({ op: 'pause', guildId: this.guildId });
  }

  async unpause(): Promise<void> {
    await this.#engine.call({ op: 'unpause', guildId: this.guildId });
  }

  /** Ends the song playing: true if one was (its `onEnded` follows), false if nothing played. */
  async stopSong(): Promise<boolean> {
    return (await this.#engine.call({ op: 'stop-song', guildId: this.guildId })) === true;
  }

  /** Where the song playing is, in ms from its start (a seek's start included). */
  async playbackMs(): Promise<number> {
    return Number(await this.#engine.call({ op: 'playback', guildId: this.guildId }));
  }

  /** How much of the song playing its decoder has streamed, in ms (from a seek's start, not the song's). */
  async heardMs(): Promise<number> {
    return Math.max(0, (await this.playbackMs()) - this.#startMs);
  }

  /** Leaves the channel and forgets the line. */
  leave(): void {
    this.#engine.leave(this);
  }
}

export class VoiceEngine {
  readonly decoder: { readonly ffmpegPath: string; readonly libopus: boolean };
  readonly #lines = new Map<string, VoiceLine>();
  /** The gateway side of each guild's connection; kept after a leave until its last payload has gone out. */
  readonly #adapters = new Map<string, { sendPayload(payload: unknown): boolean; destroy(): void }>();
  readonly #threads: VoiceThread[];
  /** The thread each guild's line runs on, until its leave is done. */
  readonly #placed = new Map<string, VoiceThread>();
  readonly #logger: Logger;

  constructor(options: VoiceEngineOptions) {
    this.#logger = options.logger;
    this.decoder = { ffmpegPath: options.ffmpegPath, libopus: options.libopus };
    this.#threads = Array.from({ length: Math.max(1, options.threads ?? 1) }, () => {
      const thread: VoiceThread = new VoiceThread({
        logger: options.logger,
        ...(options.startThread && { start: options.startThread }),
        onEvent: (event) => this.#receive(event),
        onExit: () => this.#threadExited(thread),
      });
      return thread;
    });
  }

  /** Joins `channelId` in `guild` (or returns the guild's line when it has one), on the thread with the fewest lines. */
  join(guild: Guild, channelId: string): VoiceLine {
    const existing = this.#lines.get(guild.id);
    if (existing) return existing;
    const line = new VoiceLine(this, guild.id, channelId);
    // A guild still leaving stays on its thread: its Update Voice State goes out before the new join's.
    const thread = this.#placed.get(guild.id) ?? this.#threads.reduce((least, next) => (next.guilds.size < least.guilds.size ? next : least));
    thread.guilds.add(guild.id);
    this.#placed.set(guild.id, thread);
    const adapter = guild.voiceAdapterCreator({
      onVoiceServerUpdate: (data) => this.#placed.get(guild.id)?.send({ type: 'voice-server', guildId: guild.id, data }),
      onVoiceStateUpdate: (data) => this.#placed.get(guild.id)?.send({ type: 'voice-state', guildId: guild.id, data }),
      destroy: () => this.#placed.get(guild.id)?.send({ type: 'adapter-destroyed', guildId: guild.id }),
    });
    this.#lines.set(guild.id, line);
    this.#adapters.set(guild.id, adapter);
    this.call({ op: 'join', guildId: guild.id, channelId }).catch(() => {});
    return line;
  }

  leave(line: VoiceLine): void {
    if (this.#lines.get(line.guildId) !== line) return;
    this.#lines.delete(line.guildId);
    const adapter = this.#adapters.get(line.guildId);
    const thread = this.#placed.get(line.guildId);
    // The voice side sends its Update Voice State (channel: none) before it answers: then the adapter goes.
    void this.call({ op: 'leave', guildId: line.guildId })
      .catch(() => {})
      .finally(() => {
        adapter?.destroy();
        if (this.#adapters.get(line.guildId) === adapter) this.#adapters.delete(line.guildId);
        if (this.#lines.has(line.guildId) || this.#placed.get(line.guildId) !== thread) return;
        this.#placed.delete(line.guildId);
        thread?.guilds.delete(line.guildId);
      });
  }

  /**
   * Takes the bot out of the guild's voice channel where this engine has no line there (a
   * channel a killed process or a lost player left it in): Update Voice State with no channel,
   * through the guild's gateway adapter. False when a line is there (its `leave` does it) or the
   * shard cannot send now.
   */
  leaveChannel(guild: Guild): boolean {
    if (this.#lines.has(guild.id) || this.#adapters.has(guild.id)) return false;
    const adapter = guild.voiceAdapterCreator({ onVoiceServerUpdate: () => {}, onVoiceStateUpdate: () => {}, destroy: () => {} });
    try {
      return adapter.sendPayload(leavePayload(guild.id));
    } finally {
      adapter.destroy();
    }
  }

  /** Runs `call` on the thread of its guild's line; a guild with none answers as a missing line does. */
  call(call: VoiceCall): Promise<unknown> {
    const thread = this.#placed.get(call.guildId);
    if (!thread) return Promise.resolve(call.op === 'playback' ? 0 : false);
    return thread.call(call);
  }

  async close(): Promise<void> {
    for (const line of [...this.#lines.values()]) this.leave(line);
    await Promise.all(this.#threads.map((thread) => thread.close()));
  }

  #receive(event: VoiceEvent): void {
    switch (event.type) {
      case 'payload':
        this.#adapters.get(event.guildId)?.sendPayload(event.payload);
        return;
      case 'ended': {
        const line = this.#lines.get(event.guildId);
        if (line && event.end.playId === line.playId) line.onEnded(event.end);
        return;
      }
      case 'gone':
        this.#lines.get(event.guildId)?.onGone();
        return;
      case 'log':
        this.#logger[event.level](event.fields, event.msg);
        return;
    }
  }

  /**
   * A thread's connections went with it: the bot leaves those channels through the gateway (the
   * voice side can no longer say so), and their players hear that their lines are gone.
   */
  #threadExited(thread: VoiceThread): void {
    const gone: VoiceLine[] = [];
    for (const guildId of thread.guilds) {
      const line = this.#lines.get(guildId);
      if (line) gone.push(line);
      this.#lines.delete(guildId);
      this.#placed.delete(guildId);
      const adapter = this.#adapters.get(guildId);
      this.#adapters.delete(guildId);
      adapter?.sendPayload(leavePayload(guildId));
      adapter?.destroy();
    }
    thread.guilds.clear();
    for (const line of gone) line.onGone();
  }
}

/** Update Voice State with no channel: the bot leaves the guild's voice channel. */
function leavePayload(guildId: string) {
  return { op: GatewayOpcodes.VoiceStateUpdate, d: { guild_id: guildId, channel_id: null, self_mute: false, self_deaf: false } };
}
