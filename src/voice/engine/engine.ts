/**
 * The voice engine as the player host (player.ts) sees it: a line per guild that joins a
 * channel, plays a song's address, pauses, skips and leaves. The connections themselves run on
 * a voice thread of their own (core.ts): a thousand commands a second or another guild's DAVE
 * handshake on the main thread never delay the next 20 ms frame. Where the thread cannot start,
 * the same code runs on the main thread.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { GatewayOpcodes, type Guild } from 'discord.js';
import type { Logger } from '../../logger.js';
import { createVoiceCore } from './core.js';
import type { FromVoice, PlayFrom, SongEnd, ToVoice, VoiceCall } from './protocol.js';

export type { PlayFrom, SongEnd } from './protocol.js';

export interface VoiceEngineOptions {
  readonly logger: Logger;
  readonly ffmpegPath: string;
  readonly libopus: boolean;
}

interface Transport {
  send(message: ToVoice): void;
  close(): Promise<void>;
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

  constructor(engine: VoiceEngine, guildId: string, channelId: string) {
    this.#engine = engine;
    this.guildId = guildId;
    this.channelId = channelId;
  }

  /** Starts `url` through ffmpeg (from `from.startMs`, at `from.volume`), ending whatever played; returns its play id. */
  play(url: string, from: PlayFrom = {}): number {
    this.playId += 1;
    void this.#engine.call({ op: 'play', guildId: this.guildId, playId: this.playId, url, ...from, ...this.#engine.decoder });
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

  /** Leaves the channel and forgets the line. */
  leave(): void {
    this.#engine.leave(this);
  }
}

export class VoiceEngine {
  readonly decoder: { readonly ffmpegPath: string; readonly libopus: boolean };
  readonly #options: VoiceEngineOptions;
  readonly #lines = new Map<string, VoiceLine>();
  /** The gateway side of each guild's connection; kept after a leave until its last payload has gone out. */
  readonly #adapters = new Map<string, { sendPayload(payload: unknown): boolean; destroy(): void }>();
  readonly #pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  #nextCall = 0;
  #transport: Transport;
  #closing = false;

  constructor(options: VoiceEngineOptions) {
    this.#options = options;
    this.decoder = { ffmpegPath: options.ffmpegPath, libopus: options.libopus };
    this.#transport = this.#start();
  }

  /** Joins `channelId` in `guild` (or returns the guild's line when it has one). */
  join(guild: Guild, channelId: string): VoiceLine {
    const existing = this.#lines.get(guild.id);
    if (existing) return existing;
    const line = new VoiceLine(this, guild.id, channelId);
    const adapter = guild.voiceAdapterCreator({
      onVoiceServerUpdate: (data) => this.#transport.send({ type: 'voice-server', guildId: guild.id, data }),
      onVoiceStateUpdate: (data) => this.#transport.send({ type: 'voice-state', guildId: guild.id, data }),
      destroy: () => this.#transport.send({ type: 'adapter-destroyed', guildId: guild.id }),
    });
    this.#lines.set(guild.id, line);
    this.#adapters.set(guild.id, adapter);
    void this.call({ op: 'join', guildId: guild.id, channelId });
    return line;
  }

  leave(line: VoiceLine): void {
    if (this.#lines.get(line.guildId) !== line) return;
    this.#lines.delete(line.guildId);
    const adapter = this.#adapters.get(line.guildId);
    // The voice side sends its Update Voice State (channel: none) before it answers: then the adapter goes.
    void this.call({ op: 'leave', guildId: line.guildId })
      .catch(() => {})
      .finally(() => {
        adapter?.destroy();
        if (this.#adapters.get(line.guildId) === adapter) this.#adapters.delete(line.guildId);
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
      return adapter.sendPayload({ op: GatewayOpcodes.VoiceStateUpdate, d: { guild_id: guild.id, channel_id: null, self_mute: false, self_deaf: false } });
    } finally {
      adapter.destroy();
    }
  }

  call(call: VoiceCall): Promise<unknown> {
    const id = (this.#nextCall += 1);
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#transport.send({ type: 'call', id, call });
    });
  }

  async close(): Promise<void> {
    this.#closing = true;
    for (const line of [...this.#lines.values()]) this.leave(line);
    await this.#transport.close();
  }

  /** The voice side on this thread, asynchronous both ways as across a thread: no caller sees an answer before it returns. */
  #inThisThread(): Transport {
    const core = createVoiceCore((message) => queueMicrotask(() => this.#receive(message)));
    return {
      send: (message) => queueMicrotask(() => core.receive(message)),
      close: async () => core.close(),
    };
  }

  #receive(message: FromVoice): void {
    switch (message.type) {
      case 'result': {
        const pending = this.#pending.get(message.id);
        this.#pending.delete(message.id);
        if (message.error === undefined) pending?.resolve(message.value);
        else pending?.reject(new Error(message.error));
        return;
      }
      case 'payload':
        this.#adapters.get(message.guildId)?.sendPayload(message.payload);
        return;
      case 'ended': {
        const line = this.#lines.get(message.guildId);
        if (line && message.end.playId === line.playId) line.onEnded(message.end);
        return;
      }
      case 'gone':
        this.#lines.get(message.guildId)?.onGone();
        return;
      case 'log':
        this.#options.logger[message.level](message.fields, message.msg);
        return;
    }
  }

  #start(): Transport {
    const worker = startVoiceThread();
    let ready = false;
    worker.on('message', (message: FromVoice | { type: 'ready' }) => {
      if (message.type !== 'ready') return this.#receive(message);
      ready = true;
      unsent.length = 0;
    });
    worker.on('error', (error) => this.#options.logger.error({ err: error }, 'the voice thread failed'));
    worker.on('exit', (code) => {
      if (this.#closing) return;
      if (!ready) {
        // It never started (a platform without worker threads): the same code on this thread.
        this.#options.logger.warn({ code }, 'the voice thread did not start; voice runs on the main thread');
        this.#transport = this.#inThisThread();
        for (const message of unsent.splice(0)) this.#transport.send(message);
        return;
      }
      // Every connection went with it: the players end, and a new thread takes the next joins.
      this.#options.logger.error({ code }, 'the voice thread exited; its players end');
      for (const pending of this.#pending.values()) pending.reject(new Error('the voice thread exited'));
      this.#pending.clear();
      const lines = [...this.#lines.values()];
      this.#lines.clear();
      for (const adapter of this.#adapters.values()) adapter.destroy();
      this.#adapters.clear();
      this.#transport = this.#start();
      for (const line of lines) line.onGone();
    });
    // What is sent before the thread runs waits in its port; kept here too, for a thread that never starts.
    const unsent: ToVoice[] = [];
    return {
      send: (message) => {
        if (!ready) unsent.push(message);
        worker.postMessage(message);
      },
      close: async () => {
        worker.postMessage({ type: 'close' });
        const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
        const timeout = new Promise<void>((resolve) => setTimeout(resolve, 2_000).unref());
        await Promise.race([exited, timeout]);
        await worker.terminate();
      },
    };
  }
}

/**
 * The voice thread. Run from TypeScript sources (`node --import tsx`), it registers tsx itself:
 * a worker does not inherit the loader hooks of the thread that starts it.
 */
function startVoiceThread(): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./thread.js', import.meta.url));
  // Its ESM entry, read from its exports map: resolved from here, 'tsx/esm/api' gives the CommonJS one.
  const manifest = createRequire(import.meta.url).resolve('tsx/package.json');
  const api = (JSON.parse(readFileSync(manifest, 'utf8')) as { exports: Record<string, { import: { default: string } }> }).exports['./esm/api']!.import.default;
  const tsx = pathToFileURL(path.join(path.dirname(manifest), api)).href;
  const entry = new URL('./thread.ts', import.meta.url).href;
  const code = `import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(code, { eval: true });
}
