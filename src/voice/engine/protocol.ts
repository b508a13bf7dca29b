/**
 * The messages between the bot's main thread and its voice thread (engine.ts, thread.ts). The
 * voice thread owns the voice connections, their players and the ffmpeg processes; the main
 * thread owns the gateway, so a connection's gateway traffic (its adapter) crosses here.
 */
import type { GatewayVoiceServerUpdateDispatchData, GatewayVoiceStateUpdateDispatchData } from 'discord-api-types/v10';

/** What a song's end reports: how long it played and how its decoder exited (null: still running, or killed for a skip). */
export interface SongEnd {
  readonly playId: number;
  readonly playedMs: number;
  readonly exitCode: number | null;
  readonly error: string;
}

/** Where a song starts and how loud it plays: a seek or a new volume starts its decoder again. */
export interface PlayFrom {
  /** Milliseconds into the song. @defaultValue 0 */
  readonly startMs?: number;
  /** Percent of the song's own loudness, 0 to 200. @defaultValue 100 */
  readonly volume?: number;
}

export type ToVoice =
  | { readonly type: 'call'; readonly id: number; readonly call: VoiceCall }
  | { readonly type: 'voice-server'; readonly guildId: string; readonly data: GatewayVoiceServerUpdateDispatchData }
  | { readonly type: 'voice-state'; readonly guildId: string; readonly data: GatewayVoiceStateUpdateDispatchData }
  | { readonly type: 'adapter-destroyed'; readonly guildId: string };

export type VoiceCall =
  | { readonly op: 'join'; readonly guildId: string; readonly channelId: string }
  | ({ readonly op: 'play'; readonly guildId: string; readonly playId: number; readonly url: string; readonly ffmpegPath: string; readonly libopus: boolean } & PlayFrom)
  | { readonly op: 'pause'; readonly guildId: string }
  | { readonly op: 'unpause'; readonly guildId: string }
  /** Ends the song playing; answers false when nothing was (no `ended` event follows then). */
  | { readonly op: 'stop-song'; readonly guildId: string }
  /** Where the song playing is, in ms from its start (a seek's start included). */
  | { readonly op: 'playback'; readonly guildId: string }
  | { readonly op: 'leave'; readonly guildId: string };

export type FromVoice =
  | { readonly type: 'result'; readonly id: number; readonly value?: unknown; readonly error?: string }
  | { readonly type: 'payload'; readonly guildId: string; readonly payload: unknown }
  | { readonly type: 'ended'; readonly guildId: string; readonly end: SongEnd }
  /** The connection was lost for good (kicked, channel deleted): it did not reconnect within 5 s. */
  | { readonly type: 'gone'; readonly guildId: string }
  | { readonly type: 'log'; readonly level: 'debug' | 'info' | 'warn'; readonly msg: string; readonly fields: Record<string, unknown> };
