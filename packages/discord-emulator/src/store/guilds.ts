/** Users, guilds, roles, members, channels and DM channels: creating them, and the bot joining and leaving a guild. */
import { ChannelType, GatewayDispatchEvents, GatewayIntentBits, Locale, OverwriteType, PermissionFlagsBits } from 'discord-api-types/v10';
import type { APIOverwrite, APIRole, APIUser } from 'discord-api-types/v10';
import { DEFAULT_BOT_PERMISSIONS, DEFAULT_EVERYONE_PERMISSIONS } from './permissions.js';
import { isThread, type StoredChannel, type StoredGuild, type StoredMember } from './records.js';
import { dispatch, requireChannel, requireGuild } from './state.js';
import type { StoreState } from './state.js';
import { apiChannel, apiMember, apiRole } from './views.js';

export function addUser(state: StoreState, input: { id?: string; username: string; globalName?: string | null; bot?: boolean }): APIUser {
  const existing = input.id ? state.users.get(input.id) : undefined;
  if (existing) return existing;
  const user: APIUser = {
    id: input.id ?? state.ids.next(),
    username: input.username,
    discriminator: '0',
    global_name: input.globalName ?? null,
    avatar: null,
    bot: input.bot ?? false,
  };
  state.users.set(user.id, user);
  return user;
}

export interface CreateGuildInput {
  id?: string;
  name: string;
  ownerId?: string;
  botPermissions?: bigint;
  everyonePermissions?: bigint;
  locale?: Locale;
  /** A text channel made with the guild and named its system channel, as Discord makes #general. */
  systemChannel?: string;
}

export function createGuild(state: StoreState, input: CreateGuildInput): StoredGuild {
  const id = input.id ?? state.ids.next();
  if (state.guilds.has(id)) throw new Error(`guild ${id} already exists`);
  const owner = input.ownerId
    ? (state.users.get(input.ownerId) ?? addUser(state, { id: input.ownerId, username: `owner-${input.ownerId}` }))
    : addUser(state, { username: `${input.name.toLowerCase().replace(/[^a-z0-9]+/g, '-')}-owner` });
  const everyone = apiRole(id, { name: '@everyone', permissions: input.everyonePermissions ?? DEFAULT_EVERYONE_PERMISSIONS, position: 0 });
  const botRole = apiRole(state.ids.next(), {
    name: state.botUser.username,
    permissions: input.botPermissions ?? DEFAULT_BOT_PERMISSIONS,
    position: 1,
    managed: true,
    botId: state.botUser.id,
  });
  const now = state.clock.iso();
  const guild: StoredGuild = {
    id,
    name: input.name,
    ownerId: owner.id,
    botRoleId: botRole.id,
    joinedAt: now,
    locale: input.locale ?? Locale.EnglishUS,
    channelIds: [],
    threadIds: [],
    roles: new Map([
      [everyone.id, everyone],
      [botRole.id, botRole],
    ]),
    members: new Map([
      [owner.id, { userId: owner.id, roles: [], nick: null, joinedAt: now }],
      [state.botUser.id, { userId: state.botUser.id, roles: [botRole.id], nick: null, joinedAt: now }],
    ]),
    systemChannelId: null,
    botRemoved: false,
    voiceStates: new Map(),
  };
  state.guilds.set(id, guild);
  if (input.systemChannel !== undefined) {
    // Part of the guild the bot joins: told in GUILD_CREATE, not by CHANNEL_CREATE.
    guild.systemChannelId = addChannel(state, guild, { name: input.systemChannel }).id;
  }
  dispatch(state, GatewayDispatchEvents.GuildCreate, null, GatewayIntentBits.Guilds, guild.id);
  return guild;
}

/** The bot is kicked from the guild: GUILD_DELETE (not unavailable), and it is left out of READY. */
export function removeBot(state: StoreState, guildId: string): void {
  const guild = requireGuild(state, guildId);
  guild.botRemoved = true;
  dispatch(state, GatewayDispatchEvents.GuildDelete, { id: guildId }, GatewayIntentBits.Guilds);
}

/** The bot is invited back: GUILD_CREATE with the guild as it is now. */
export function addBot(state: StoreState, guildId: string): void {
  const guild = requireGuild(state, guildId);
  guild.botRemoved = false;
  guild.joinedAt = state.clock.iso();
  dispatch(state, GatewayDispatchEvents.GuildCreate, null, GatewayIntentBits.Guilds, guild.id);
}

export interface CreateChannelInput {
  id?: string;
  name: string;
  type?: ChannelType;
  topic?: string;
  parentId?: string;
  /** Voice channels: members allowed at once (0, the default: no limit), and the bitrate (64000). */
  userLimit?: number;
  bitrate?: number;
  /** The channel's permission overwrites (e.g. denying the bot Connect or Speak). */
  permissionOverwrites?: APIOverwrite[];
  /** Age-restricted, Discord's `nsfw` flag. @defaultValue false */
  nsfw?: boolean;
}

function isVoice(type: ChannelType | undefined): boolean {
  return type === ChannelType.GuildVoice || type === ChannelType.GuildStageVoice;
}

export function createChannel(
  state: StoreState,
  guildId: string,
  input: CreateChannelInput,
): StoredChannel {
  const channel = addChannel(state, requireGuild(state, guildId), input);
  dispatch(state, GatewayDispatchEvents.ChannelCreate, apiChannel(state, channel), GatewayIntentBits.Guilds);
  return channel;
}

/** Adds a channel to the guild, telling no one (the caller dispatches, or GUILD_CREATE will). */
function addChannel(state: StoreState, guild: StoredGuild, input: CreateChannelInput): StoredChannel {
  if (input.id !== undefined && state.channels.has(input.id)) throw new Error(`channel ${input.id} already exists`);
  const channel: StoredChannel = {
    id: input.id ?? state.ids.next(),
    type: input.type ?? ChannelType.GuildText,
    name: input.name,
    guildId: guild.id,
    position: guild.channelIds.length,
    topic: input.topic ?? null,
    parentId: input.parentId ?? null,
    overwrites: input.permissionOverwrites ? structuredClone(input.permissionOverwrites) : [],
    nsfw: input.nsfw ?? false,
    recipientIds: [],
    lastMessageId: null,
    ...(isVoice(input.type) ? { userLimit: input.userLimit ?? 0, bitrate: input.bitrate ?? 64_000 } : {}),
  };
  state.channels.set(channel.id, channel);
  guild.channelIds.push(channel.id);
  return channel;
}

/** The DM channel between the bot and `userId`, created on first use. */
export function dmChannel(state: StoreState, userId: string): StoredChannel {
  for (const channel of state.channels.values()) {
    if (channel.type === ChannelType.DM && channel.recipientIds.includes(userId)) return channel;
  }
  const channel: StoredChannel = {
    id: state.ids.next(),
    type: ChannelType.DM,
    name: null,
    guildId: null,
    position: 0,
    topic: null,
    parentId: null,
    overwrites: [],
    nsfw: false,
    recipientIds: [userId],
    lastMessageId: null,
  };
  state.channels.set(channel.id, channel);
  return channel;
}

export function createRole(state: StoreState, guildId: string, input: { id?: string; name: string; permissions?: bigint | string; position?: number }): APIRole {
  const guild = requireGuild(state, guildId);
  if (input.id !== undefined && guild.roles.has(input.id)) throw new Error(`role ${input.id} already exists`);
  // On top by default; at `position`, the roles from there up move up one, as Discord moves them.
  const position = Math.min(Math.max(1, input.position ?? guild.roles.size), guild.roles.size);
  for (const other of [...guild.roles.values()]) {
    if (other.id === guild.id || other.position < position) continue;
    const moved: APIRole = { ...other, position: other.position + 1 };
    guild.roles.set(other.id, moved);
    dispatch(state, GatewayDispatchEvents.GuildRoleUpdate, { guild_id: guildId, role: moved }, GatewayIntentBits.Guilds);
  }
  const role = apiRole(input.id ?? state.ids.next(), {
    name: input.name,
    permissions: BigInt(input.permissions ?? 0n),
    position,
  });
  guild.roles.set(role.id, role);
  dispatch(state, GatewayDispatchEvents.GuildRoleCreate, { guild_id: guildId, role }, GatewayIntentBits.Guilds);
  return role;
}

export function addMember(
  state: StoreState,
  guildId: string,
  input: { userId?: string; username: string; globalName?: string; roles?: string[]; permissions?: bigint | string; nick?: string },
): StoredMember {
  const guild = requireGuild(state, guildId);
  for (const roleId of input.roles ?? []) {
    if (!guild.roles.has(roleId)) throw new Error(`guild ${guildId} has no role ${roleId}`);
  }
  const user = addUser(state, { id: input.userId, username: input.username, globalName: input.globalName ?? null });
  const member: StoredMember = {
    userId: user.id,
    roles: input.roles ?? [],
    nick: input.nick ?? null,
    joinedAt: state.clock.iso(),
    ...(input.permissions !== undefined ? { permissionsOverride: BigInt(input.permissions) } : {}),
  };
  guild.members.set(user.id, member);
  dispatch(state, GatewayDispatchEvents.GuildMemberAdd, { ...apiMember(state, guild, member), guild_id: guildId }, GatewayIntentBits.GuildMembers);
  return member;
}

/**
 * A moderator gives a member a role (`give`) or takes it away, as Discord's Add and Remove Guild
 * Member Role do: GUILD_MEMBER_UPDATE with the member as it is now, to sessions with GUILD_MEMBERS.
 * Nothing is sent when the member already had (or lacked) the role.
 */
export function setMemberRole(state: StoreState, guildId: string, userId: string, roleId: string, give: boolean): StoredMember {
  const guild = requireGuild(state, guildId);
  const member = guild.members.get(userId);
  if (!member) throw new Error(`user ${userId} is not a member of guild ${guildId}`);
  const role = guild.roles.get(roleId);
  if (!role || roleId === guildId) throw new Error(`guild ${guildId} has no role ${roleId} to give or take`);
  if (role.managed) throw new Error(`role ${roleId} is managed by an integration: Discord refuses to give or take it`);
  if (member.roles.includes(roleId) === give) return member;
  member.roles = give ? [...member.roles, roleId] : member.roles.filter((id) => id !== roleId);
  dispatch(state, GatewayDispatchEvents.GuildMemberUpdate, { ...apiMember(state, guild, member), guild_id: guildId }, GatewayIntentBits.GuildMembers);
  return member;
}

/** Takes the bot's access to a channel away, as a permission overwrite on the channel. */
export function denyChannel(state: StoreState, channelId: string): void {
  const channel = requireChannel(state, channelId);
  state.deniedChannels.add(channelId);
  if (channel.guildId) {
    channel.overwrites = channel.overwrites.filter((overwrite) => overwrite.id !== state.botUser.id);
    channel.overwrites.push({
      id: state.botUser.id,
      type: OverwriteType.Member,
      allow: '0',
      deny: (PermissionFlagsBits.ViewChannel | PermissionFlagsBits.SendMessages).toString(),
    });
    dispatch(state, GatewayDispatchEvents.ChannelUpdate, apiChannel(state, channel), GatewayIntentBits.Guilds);
  }
}

/** Sets (or, with allow and deny both 0, removes) a channel's overwrite for a role or member: CHANNEL_UPDATE. */
export function setOverwrite(state: StoreState, channelId: string, overwrite: APIOverwrite): void {
  const channel = requireChannel(state, channelId);
  if (!channel.guildId) throw new Error(`channel ${channelId} is not in a guild`);
  channel.overwrites = channel.overwrites.filter((existing) => existing.id !== overwrite.id);
  if (BigInt(overwrite.allow) !== 0n || BigInt(overwrite.deny) !== 0n) channel.overwrites.push({ ...overwrite });
  dispatch(state, GatewayDispatchEvents.ChannelUpdate, apiChannel(state, channel), GatewayIntentBits.Guilds);
}

/** A moderator marks a channel age-restricted or not (its threads follow it): CHANNEL_UPDATE. */
export function setChannelNsfw(state: StoreState, channelId: string, nsfw: boolean): void {
  const channel = requireChannel(state, channelId);
  if (!channel.guildId || isThread(channel)) throw new Error(`channel ${channelId} cannot be age-restricted: only a guild channel that is not a thread can`);
  channel.nsfw = nsfw;
  dispatch(state, GatewayDispatchEvents.ChannelUpdate, apiChannel(state, channel), GatewayIntentBits.Guilds);
}

/** A moderator changes a role's permissions (the bot's managed role too): GUILD_ROLE_UPDATE. */
export function setRolePermissions(state: StoreState, guildId: string, roleId: string, permissions: bigint): APIRole {
  const guild = requireGuild(state, guildId);
  const role = guild.roles.get(roleId);
  if (!role) throw new Error(`guild ${guildId} has no role ${roleId}`);
  const updated: APIRole = { ...role, permissions: permissions.toString() };
  guild.roles.set(roleId, updated);
  dispatch(state, GatewayDispatchEvents.GuildRoleUpdate, { guild_id: guildId, role: updated }, GatewayIntentBits.Guilds);
  return updated;
}
