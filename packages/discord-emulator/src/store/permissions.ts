/** Permissions as Discord computes them: roles, channel overwrites, ownership and Administrator; and who sees a thread. */
import { ChannelType, OverwriteType, PermissionFlagsBits } from 'discord-api-types/v10';
import type { APIOverwrite } from 'discord-api-types/v10';
import type { StoredChannel, StoredGuild } from './records.js';
import type { StoreState } from './state.js';

/** Every permission bit Discord defines: what owners and administrators have. */
export const ALL_PERMISSIONS = Object.values(PermissionFlagsBits).reduce((all, bit) => all | bit, 0n);

/** What the bot's managed role grants unless a test says otherwise. */
export const DEFAULT_BOT_PERMISSIONS =
  PermissionFlagsBits.ViewChannel |
  PermissionFlagsBits.SendMessages |
  PermissionFlagsBits.SendMessagesInThreads |
  PermissionFlagsBits.EmbedLinks |
  PermissionFlagsBits.AttachFiles |
  PermissionFlagsBits.ReadMessageHistory |
  PermissionFlagsBits.AddReactions |
  PermissionFlagsBits.UseExternalEmojis |
  PermissionFlagsBits.UseApplicationCommands;

/** What @everyone may do in a new guild. */
export const DEFAULT_EVERYONE_PERMISSIONS = DEFAULT_BOT_PERMISSIONS | PermissionFlagsBits.Connect | PermissionFlagsBits.Speak;

export function basePermissions(guild: StoredGuild, userId: string): bigint {
  if (userId === guild.ownerId) return ALL_PERMISSIONS;
  const member = guild.members.get(userId);
  if (member?.permissionsOverride !== undefined) return member.permissionsOverride;
  let permissions = BigInt(guild.roles.get(guild.id)?.permissions ?? '0');
  for (const roleId of member?.roles ?? []) permissions |= BigInt(guild.roles.get(roleId)?.permissions ?? '0');
  return (permissions & PermissionFlagsBits.Administrator) !== 0n ? ALL_PERMISSIONS : permissions;
}

export function channelPermissions(state: StoreState, guild: StoredGuild, channel: StoredChannel, userId: string): bigint {
  // A thread has no overwrites of its own: its permissions are its parent's.
  const parent = channel.thread && channel.parentId ? state.channels.get(channel.parentId) : undefined;
  if (parent) return channelPermissions(state, guild, parent, userId);
  let permissions = basePermissions(guild, userId);
  if ((permissions & PermissionFlagsBits.Administrator) !== 0n || userId === guild.ownerId) return ALL_PERMISSIONS;
  const member = guild.members.get(userId);
  const apply = (overwrite: APIOverwrite | undefined): void => {
    if (!overwrite) return;
    permissions &= ~BigInt(overwrite.deny);
    permissions |= BigInt(overwrite.allow);
  };
  apply(channel.overwrites.find((overwrite) => overwrite.id === guild.id));
  let roleAllow = 0n;
  let roleDeny = 0n;
  for (const overwrite of channel.overwrites) {
    if (overwrite.type === OverwriteType.Role && member?.roles.includes(overwrite.id)) {
      roleAllow |= BigInt(overwrite.allow);
      roleDeny |= BigInt(overwrite.deny);
    }
  }
  permissions = (permissions & ~roleDeny) | roleAllow;
  apply(channel.overwrites.find((overwrite) => overwrite.type === OverwriteType.Member && overwrite.id === userId));
  return permissions;
}

/** Whether `userId` sees the thread: the parent's View Channel, and for a private thread membership or Manage Threads. */
export function canSeeThread(state: StoreState, guild: StoredGuild, thread: StoredChannel, userId: string): boolean {
  const permissions = channelPermissions(state, guild, thread, userId);
  if ((permissions & PermissionFlagsBits.ViewChannel) === 0n) return false;
  if (thread.type !== ChannelType.PrivateThread) return true;
  return thread.thread?.memberIds.has(userId) === true || (permissions & PermissionFlagsBits.ManageThreads) !== 0n;
}
