/**
 * Who is in which voice channel: members joining and leaving (scripted), and the bot's Update
 * Voice State (gateway op 4), checked as Discord checks it, answered with VOICE_STATE_UPDATE and
 * VOICE_SERVER_UPDATE.
 */
import { randomBytes } from 'node:crypto';
import { ChannelType, GatewayDispatchEvents, GatewayIntentBits, PermissionFlagsBits } from 'discord-api-types/v10';
import type { EmulatorStore } from '../store.js';
import type { StoredGuild, StoredVoiceState } from '../store/records.js';
import { dispatch } from '../store/state.js';
import { apiVoiceState } from '../store/views.js';
import type { VoiceServer } from './server.js';

/** Why an Update Voice State was not followed: Discord answers none of these, the emulator records them. */
export type VoiceRefusalReason = 'invalid-payload' | 'unknown-guild' | 'unknown-channel' | 'not-a-voice-channel' | 'missing-permissions' | 'channel-full';

export interface VoiceRefusal {
  /** Emulator clock time (ms). */
  at: number;
  guildId: string | null;
  channelId: string | null;
  reason: VoiceRefusalReason;
  /** For missing-permissions: the names of the missing permissions (`Connect`, `ViewChannel`). */
  missing: string[];
  message: string;
}

/** The gateway session that sent op 4. */
export interface VoiceRequester {
  sessionId: string;
  intents: number;
  /** Sends a dispatch to this session only. */
  reply: (t: GatewayDispatchEvents, d: unknown) => void;
}

const PERMISSION_NAMES = new Map(Object.entries(PermissionFlagsBits).map(([name, bit]) => [bit, name]));

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function isVoiceChannel(type: ChannelType): boolean {
  return type === ChannelType.GuildVoice || type === ChannelType.GuildStageVoice;
}

export class VoiceStates {
  readonly refusals: VoiceRefusal[] = [];
  readonly #store: EmulatorStore;
  readonly #server: VoiceServer;
  readonly #onFinding: (message: string, details: string[]) => void;

  readonly #dispatchToSession: (sessionId: string, t: GatewayDispatchEvents, d: unknown) => boolean;

  constructor(options: {
    store: EmulatorStore;
    server: VoiceServer;
    onFinding: (message: string, details: string[]) => void;
    dispatchToSession: (sessionId: string, t: GatewayDispatchEvents, d: unknown) => boolean;
  }) {
    this.#store = options.store;
    this.#server = options.server;
    this.#onFinding = options.onFinding;
    this.#dispatchToSession = options.dispatchToSession;
  }

  /** User ids in a voice channel, the bot included. */
  members(channelId: string): string[] {
    const channel = this.#store.channel(channelId);
    const guild = channel.guildId ? this.#store.guilds.get(channel.guildId) : undefined;
    if (!guild) return [];
    return [...guild.voiceStates.values()].filter((state) => state.channelId === channelId).map((state) => state.userId);
  }

  /**
   * A member joins (or moves to) a voice channel, or changes their mute and deafen. Members are
   * not held to permissions or the user limit: tests place them. For the bot, this is a
   * moderator moving it: it must already be in voice, and gets a new voice server.
   */
  join(userId: string, channelId: string, options: { selfMute?: boolean; selfDeaf?: boolean } = {}): void {
    const channel = this.#store.channel(channelId);
    if (!channel.guildId || !isVoiceChannel(channel.type)) throw new Error(`channel ${channelId} is not a guild voice channel`);
    const guild = this.#store.guild(channel.guildId);
    if (!guild.members.has(userId)) throw new Error(`user ${userId} is not a member of guild ${guild.id}`);
    const previous = guild.voiceStates.get(userId);
    if (userId === this.#store.botUser.id) {
      if (!previous) throw new Error('the bot joins voice through the gateway (op 4); joinVoice only moves it once it is in voice');
      if (previous.channelId !== channelId) this.#moveBot(guild, previous, channelId);
      return;
    }
    const state: StoredVoiceState = {
      userId,
      channelId,
      sessionId: previous?.sessionId ?? randomBytes(16).toString('hex'),
      selfMute: options.selfMute ?? previous?.selfMute ?? false,
      selfDeaf: options.selfDeaf ?? previous?.selfDeaf ?? false,
    };
    if (previous && previous.channelId === channelId && previous.selfMute === state.selfMute && previous.selfDeaf === state.selfDeaf) return;
    guild.voiceStates.set(userId, state);
    this.#dispatchState(guild, state);
    if (previous?.channelId === channelId) return;
    if (previous) this.#server.memberChanged(guild.id, previous.channelId, userId, false);
    this.#server.memberChanged(guild.id, channelId, userId, true);
  }

  /** A moderator moves the bot: its new state, a new voice server for its gateway session, the old voice session closed (4014). */
  #moveBot(guild: StoredGuild, previous: StoredVoiceState, channelId: string): void {
    const state: StoredVoiceState = { ...previous, channelId };
    guild.voiceStates.set(state.userId, state);
    this.#dispatchState(guild, state);
    const grant = { guildId: guild.id, channelId, userId: state.userId, sessionId: state.sessionId, token: randomBytes(8).toString('hex') };
    this.#server.grant(grant);
    this.#dispatchToSession(state.sessionId, GatewayDispatchEvents.VoiceServerUpdate, { token: grant.token, guild_id: guild.id, endpoint: this.#server.endpoint });
    this.#server.disconnect(guild.id, grant);
  }

  /**
   * A member leaves voice in the guild (nothing when they were in none). For the bot, a moderator
   * disconnecting it: VOICE_STATE_UPDATE with `channel_id: null`, its voice session closed with 4014.
   */
  leave(guildId: string, userId: string): void {
    const guild = this.#store.guild(guildId);
    const previous = guild.voiceStates.get(userId);
    if (!previous) return;
    guild.voiceStates.delete(userId);
    this.#dispatchState(guild, { ...previous, channelId: null });
    if (userId === this.#store.botUser.id) this.#server.disconnect(guildId);
    else this.#server.memberChanged(guildId, previous.channelId, userId, false);
  }

  #dispatchState(guild: StoredGuild, state: StoredVoiceState | (Omit<StoredVoiceState, 'channelId'> & { channelId: null })): void {
    const payload = apiVoiceState(this.#store, guild, state as StoredVoiceState);
    dispatch(this.#store, GatewayDispatchEvents.VoiceStateUpdate, { ...payload, channel_id: state.channelId }, GatewayIntentBits.GuildVoiceStates);
  }

  #refuse(reason: VoiceRefusalReason, guildId: string | null, channelId: string | null, message: string, missing: string[] = []): void {
    this.refusals.push({ at: this.#store.clock.now(), guildId, channelId, reason, missing, message });
  }

  /** Gateway op 4 from the bot. */
  update(requester: VoiceRequester, d: unknown): void {
    const data = isRecord(d) ? d : {};
    const problems: string[] = [];
    if (typeof data.guild_id !== 'string') problems.push('guild_id must be a snowflake string');
    if (data.channel_id !== null && typeof data.channel_id !== 'string') problems.push('channel_id must be a snowflake string or null');
    if (typeof data.self_mute !== 'boolean') problems.push('self_mute must be a boolean');
    if (typeof data.self_deaf !== 'boolean') problems.push('self_deaf must be a boolean');
    if (problems.length > 0) {
      this.#onFinding('Update Voice State (op 4) does not fit Discord\'s payload', problems);
      this.#refuse('invalid-payload', typeof data.guild_id === 'string' ? data.guild_id : null, null, problems.join('; '));
      return;
    }
    const guildId = data.guild_id as string;
    const channelId = data.channel_id as string | null;
    const guild = this.#store.guilds.get(guildId);
    if (!guild || guild.botRemoved) {
      this.#refuse('unknown-guild', guildId, channelId, `the bot is in no guild ${guildId}`);
      return;
    }
    if ((requester.intents & GatewayIntentBits.GuildVoiceStates) === 0) {
      this.#onFinding('Update Voice State (op 4) from a session without the GUILD_VOICE_STATES intent: it will never see its own voice state', [`guild ${guildId}`]);
    }
    const botId = this.#store.botUser.id;
    const previous = guild.voiceStates.get(botId);
    if (channelId === null) {
      if (!previous) return;
      guild.voiceStates.delete(botId);
      this.#dispatchState(guild, { ...previous, channelId: null, selfMute: data.self_mute as boolean, selfDeaf: data.self_deaf as boolean });
      this.#server.disconnect(guildId);
      return;
    }
    const channel = this.#store.channels.get(channelId);
    if (!channel || channel.guildId !== guildId) {
      this.#refuse('unknown-channel', guildId, channelId, `guild ${guildId} has no channel ${channelId}`);
      return;
    }
    if (!isVoiceChannel(channel.type)) {
      this.#refuse('not-a-voice-channel', guildId, channelId, `channel ${channelId} is of type ${channel.type}, not a voice channel`);
      return;
    }
    const permissions = this.#store.channelPermissions(guild, channel, botId);
    const missing = [PermissionFlagsBits.ViewChannel, PermissionFlagsBits.Connect].filter((bit) => (permissions & bit) === 0n);
    if (missing.length > 0) {
      const names = missing.map((bit) => PERMISSION_NAMES.get(bit) ?? bit.toString());
      this.#refuse('missing-permissions', guildId, channelId, `the bot lacks ${names.join(' and ')} in ${channelId}`, names);
      return;
    }
    const limit = channel.userLimit ?? 0;
    const others = this.members(channelId).filter((id) => id !== botId).length;
    if (previous?.channelId !== channelId && limit > 0 && others >= limit && (permissions & PermissionFlagsBits.MoveMembers) === 0n) {
      this.#refuse('channel-full', guildId, channelId, `channel ${channelId} is full (${others}/${limit}) and the bot lacks MoveMembers`);
      return;
    }
    const state: StoredVoiceState = {
      userId: botId,
      channelId,
      sessionId: requester.sessionId,
      selfMute: data.self_mute as boolean,
      selfDeaf: data.self_deaf as boolean,
    };
    guild.voiceStates.set(botId, state);
    this.#dispatchState(guild, state);
    if (previous?.channelId === channelId && previous.sessionId === requester.sessionId && this.#server.isConnected(guildId)) return;
    // A new channel, a new gateway session, or no voice connection up: a new voice server grant, and an old voice session ends.
    const grant = { guildId, channelId, userId: botId, sessionId: requester.sessionId, token: randomBytes(8).toString('hex') };
    this.#server.grant(grant);
    requester.reply(GatewayDispatchEvents.VoiceServerUpdate, { token: grant.token, guild_id: guildId, endpoint: this.#server.endpoint });
    this.#server.disconnect(guildId, grant);
  }
}
