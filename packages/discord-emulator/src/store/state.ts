/** The state the store's parts share, and the one way they tell bots about a change. */
import type { EventEmitter } from 'node:events';
import type { APIAutoModerationRule, APIUser, GatewayDispatchEvents } from 'discord-api-types/v10';
import type { EmulatorClock } from '../clock.js';
import type { SnowflakeGenerator } from '../snowflake.js';
import type { StoreDispatch, StoredChannel, StoredGuild, StoredMessage } from './records.js';

/** A file on the emulator's CDN: its bytes, or where the CDN sends a client instead. */
export interface CdnFile {
  readonly data: Buffer;
  readonly contentType: string;
  readonly redirectTo?: string;
}

export interface StoreState {
  readonly users: Map<string, APIUser>;
  readonly guilds: Map<string, StoredGuild>;
  readonly channels: Map<string, StoredChannel>;
  readonly messages: Map<string, StoredMessage>;
  readonly channelMessageIds: Map<string, string[]>;
  readonly deniedChannels: Set<string>;
  readonly cdn: Map<string, CdnFile>;
  /** Each guild's Auto Moderation rules, by rule id. */
  readonly automodRules: Map<string, Map<string, APIAutoModerationRule>>;
  /** `dispatch` (StoreDispatch), `message` (StoredMessage, 'create' | 'update'), `message-delete` (StoredMessage). */
  readonly events: EventEmitter;
  readonly botUser: APIUser;
  readonly ids: SnowflakeGenerator;
  readonly clock: EmulatorClock;
  /** The origin attachment URLs start with. */
  readonly cdnBase: () => string;
}

/**
 * Emits a gateway event for bots holding `intent`. For GUILD_CREATE, `guildCreateId` names the
 * guild and the gateway builds each session's payload.
 */
export function dispatch(state: StoreState, t: GatewayDispatchEvents, d: unknown, intent: number, guildCreateId?: string): void {
  state.events.emit('dispatch', { t, d: guildCreateId ?? d, intent } satisfies StoreDispatch);
}

/** {@link dispatch} of data made by `make` only if a session holds `intent` (e.g. a message's copy). */
export function dispatchLazily(state: StoreState, t: GatewayDispatchEvents, make: () => unknown, intent: number, guildId: string | undefined): void {
  state.events.emit('dispatch', { t, d: make, intent, ...(guildId !== undefined && { guildId }) } satisfies StoreDispatch);
}

export function requireGuild(state: StoreState, guildId: string): StoredGuild {
  const guild = state.guilds.get(guildId);
  if (!guild) throw new Error(`the emulator has no guild ${guildId}`);
  return guild;
}

export function requireChannel(state: StoreState, channelId: string): StoredChannel {
  const channel = state.channels.get(channelId);
  if (!channel) throw new Error(`the emulator has no channel ${channelId}`);
  return channel;
}
