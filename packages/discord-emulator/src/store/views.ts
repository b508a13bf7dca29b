/** The store's records in Discord's shapes: roles, members, channels, threads and guilds as the API and gateway send them. */
import {
  ChannelType,
  GuildDefaultMessageNotifications,
  GuildExplicitContentFilter,
  GuildMFALevel,
  GuildNSFWLevel,
  GuildPremiumTier,
  GuildSystemChannelFlags,
  GuildVerificationLevel,
} from 'discord-api-types/v10';
import type {
  APIChannel,
  APIGuild,
  APIGuildMember,
  APIInteractionGuildMember,
  APIRole,
  APIThreadChannel,
  APIThreadMember,
  ChannelFlags,
  GatewayGuildCreateDispatchData,
  GatewayVoiceState,
  GuildMemberFlags,
  RoleFlags,
  ThreadMemberFlags,
} from 'discord-api-types/v10';
import { canSeeThread, channelPermissions } from './permissions.js';
import type { StoredChannel, StoredGuild, StoredMember, StoredVoiceState } from './records.js';
import type { StoreState } from './state.js';

/** Discord's "no flags set"; the flag enums have no zero member. */
const NO_FLAGS = 0;

export function apiRole(id: string, input: { name: string; permissions: bigint; position: number; managed?: boolean; botId?: string }): APIRole {
  return {
    id,
    name: input.name,
    color: 0,
    colors: { primary_color: 0, secondary_color: null, tertiary_color: null },
    hoist: false,
    icon: null,
    unicode_emoji: null,
    position: input.position,
    permissions: input.permissions.toString(),
    managed: input.managed ?? false,
    mentionable: false,
    flags: NO_FLAGS as RoleFlags,
    ...(input.botId ? { tags: { bot_id: input.botId } } : {}),
  };
}

export function apiMember(state: StoreState, guild: StoredGuild, member: StoredMember): APIGuildMember {
  const user = state.users.get(member.userId);
  if (!user) throw new Error(`member ${member.userId} has no user`);
  return {
    user,
    nick: member.nick,
    avatar: null,
    banner: null,
    roles: member.roles,
    joined_at: member.joinedAt,
    premium_since: null,
    deaf: false,
    mute: false,
    flags: NO_FLAGS as GuildMemberFlags,
    pending: false,
    communication_disabled_until: null,
  };
}

export function interactionMember(state: StoreState, guild: StoredGuild, channel: StoredChannel, userId: string): APIInteractionGuildMember {
  const member = guild.members.get(userId);
  if (!member) throw new Error(`user ${userId} is not a member of guild ${guild.id}; add them with addMember first`);
  return { ...apiMember(state, guild, member), permissions: channelPermissions(state, guild, channel, userId).toString() };
}

/** A channel object; its exact shape depends on the channel type, hence one documented cast. */
export function apiChannel(state: StoreState, channel: StoredChannel): APIChannel {
  if (channel.type === ChannelType.DM) {
    return {
      id: channel.id,
      type: ChannelType.DM,
      name: null,
      last_message_id: channel.lastMessageId,
      recipients: channel.recipientIds.flatMap((id) => {
        const user = state.users.get(id);
        return user ? [user] : [];
      }),
      flags: NO_FLAGS as ChannelFlags,
    };
  }
  const common = {
    id: channel.id,
    type: channel.type,
    guild_id: channel.guildId ?? undefined,
    name: channel.name ?? '',
    position: channel.position,
    permission_overwrites: channel.overwrites,
    parent_id: channel.parentId,
    nsfw: channel.nsfw,
    flags: 0,
  };
  if (channel.type === ChannelType.GuildCategory) return common as APIChannel;
  if (channel.thread) {
    const thread = channel.thread;
    const parent = channel.parentId ? state.channels.get(channel.parentId) : undefined;
    return {
      id: channel.id,
      type: channel.type,
      guild_id: channel.guildId ?? undefined,
      name: channel.name ?? '',
      parent_id: channel.parentId,
      owner_id: thread.ownerId,
      last_message_id: channel.lastMessageId,
      last_pin_timestamp: null,
      rate_limit_per_user: 0,
      flags: NO_FLAGS as ChannelFlags,
      message_count: thread.messageCount,
      // Discord stops counting at 50.
      member_count: Math.min(thread.memberIds.size, 50),
      total_message_sent: thread.totalMessageSent,
      thread_metadata: {
        archived: false,
        archive_timestamp: thread.createdAt,
        auto_archive_duration: 1440,
        locked: false,
        create_timestamp: thread.createdAt,
        ...(channel.type === ChannelType.PrivateThread ? { invitable: thread.invitable } : {}),
      },
      ...(parent?.type === ChannelType.GuildForum ? { applied_tags: [] } : {}),
    } as APIThreadChannel;
  }
  if (channel.type === ChannelType.GuildForum) {
    return {
      ...common,
      topic: channel.topic,
      last_message_id: channel.lastMessageId,
      rate_limit_per_user: 0,
      default_auto_archive_duration: 1440,
      default_thread_rate_limit_per_user: 0,
      available_tags: [],
      default_reaction_emoji: null,
      default_sort_order: null,
      default_forum_layout: 0,
    } as APIChannel;
  }
  if (channel.type === ChannelType.GuildVoice || channel.type === ChannelType.GuildStageVoice) {
    return { ...common, bitrate: channel.bitrate ?? 64_000, user_limit: channel.userLimit ?? 0, rtc_region: null, last_message_id: channel.lastMessageId, rate_limit_per_user: 0 } as APIChannel;
  }
  return {
    ...common,
    topic: channel.topic,
    last_message_id: channel.lastMessageId,
    rate_limit_per_user: 0,
    last_pin_timestamp: null,
    default_auto_archive_duration: 1440,
    default_thread_rate_limit_per_user: 0,
  } as APIChannel;
}

export function apiGuild(guild: StoredGuild): APIGuild {
  return {
    id: guild.id,
    name: guild.name,
    icon: null,
    splash: null,
    discovery_splash: null,
    banner: null,
    owner_id: guild.ownerId,
    afk_channel_id: null,
    afk_timeout: 300,
    widget_enabled: false,
    widget_channel_id: null,
    verification_level: GuildVerificationLevel.None,
    default_message_notifications: GuildDefaultMessageNotifications.OnlyMentions,
    explicit_content_filter: GuildExplicitContentFilter.Disabled,
    roles: [...guild.roles.values()],
    emojis: [],
    stickers: [],
    features: [],
    mfa_level: GuildMFALevel.None,
    application_id: null,
    system_channel_id: guild.systemChannelId,
    system_channel_flags: GuildSystemChannelFlags.SuppressJoinNotifications,
    rules_channel_id: null,
    max_presences: null,
    max_members: 500000,
    vanity_url_code: null,
    description: null,
    premium_tier: GuildPremiumTier.None,
    premium_subscription_count: 0,
    preferred_locale: guild.locale,
    public_updates_channel_id: null,
    max_video_channel_users: 25,
    max_stage_video_channel_users: 50,
    nsfw_level: GuildNSFWLevel.Default,
    premium_progress_bar_enabled: false,
    hub_type: null,
    safety_alerts_channel_id: null,
    incidents_data: null,
  };
}

/** GUILD_CREATE as the bot receives it; without GUILD_MEMBERS only the bot's own member is listed. */
/** A voice state as Discord sends it: with `guild_id` in VOICE_STATE_UPDATE, without in GUILD_CREATE. */
export function apiVoiceState(state: StoreState, guild: StoredGuild, voice: StoredVoiceState): GatewayVoiceState {
  const member = guild.members.get(voice.userId);
  return {
    guild_id: guild.id,
    channel_id: voice.channelId,
    user_id: voice.userId,
    ...(member ? { member: apiMember(state, guild, member) } : {}),
    session_id: voice.sessionId,
    deaf: false,
    mute: false,
    self_deaf: voice.selfDeaf,
    self_mute: voice.selfMute,
    self_video: false,
    suppress: false,
    request_to_speak_timestamp: null,
  };
}

/** GUILD_CREATE for a session: every member with GUILD_MEMBERS (else the bot's own), voice states with GUILD_VOICE_STATES. */
export function guildCreatePayload(state: StoreState, guild: StoredGuild, allMembers: boolean, voiceStates = false): GatewayGuildCreateDispatchData {
  const members = [...guild.members.values()]
    .filter((member) => allMembers || member.userId === state.botUser.id)
    .map((member) => apiMember(state, guild, member));
  return {
    ...apiGuild(guild),
    joined_at: guild.joinedAt,
    large: false,
    unavailable: false,
    member_count: guild.members.size,
    voice_states: voiceStates
      ? [...guild.voiceStates.values()].map((voice) => {
          const { guild_id: _guildId, ...inGuild } = apiVoiceState(state, guild, voice);
          return inGuild;
        })
      : [],
    members,
    channels: guild.channelIds.flatMap((id) => {
      const channel = state.channels.get(id);
      return channel ? [apiChannel(state, channel)] : [];
    }) as GatewayGuildCreateDispatchData['channels'],
    // Active threads the bot can see; Discord lists them apart from the channels.
    threads: guild.threadIds.flatMap((id) => {
      const thread = state.channels.get(id);
      return thread && canSeeThread(state, guild, thread, state.botUser.id) ? [apiThreadFor(state, thread, state.botUser.id)] : [];
    }) as GatewayGuildCreateDispatchData['threads'],
    presences: [],
    stage_instances: [],
    guild_scheduled_events: [],
    soundboard_sounds: [],
  };
}

/** The thread as `userId` gets it over the gateway: with `member` when they were added to it. */
export function apiThreadFor(state: StoreState, thread: StoredChannel, userId: string): APIChannel {
  const api = apiChannel(state, thread);
  if (!thread.thread?.memberIds.has(userId)) return api;
  const member: APIThreadMember = { id: thread.id, user_id: userId, join_timestamp: thread.thread.createdAt, flags: NO_FLAGS as ThreadMemberFlags };
  return { ...(api as APIThreadChannel), member };
}

