/**
 * Who may use the bot where: the guild's allowed channels, its required role, its cooldown,
 * and who counts as a moderator. Plain values in, plain answers out: no Discord types.
 */
import type { Executor } from '../db/client.js';
import { lastRequestAt } from '../pipeline/job-rows.js';
import type { GuildRow } from './settings.js';

export interface Member {
  readonly userId: string;
  readonly roleIds: readonly string[];
  /** Holds Manage Server (or Administrator) in this guild. */
  readonly canManageGuild: boolean;
}

export interface Place {
  readonly channelId: string;
  /** The channel a thread belongs to: a thread of an allowed channel is allowed too. */
  readonly parentChannelId?: string | null;
}

/** Manage Server, or the guild's moderator role. */
export function isModerator(guild: Pick<GuildRow, 'moderatorRoleId'>, member: Member): boolean {
  return member.canManageGuild || (guild.moderatorRoleId !== null && member.roleIds.includes(guild.moderatorRoleId));
}

export type AccessRefusal =
  | { readonly reason: 'channel_not_allowed'; readonly allowedChannelIds: readonly string[] }
  | { readonly reason: 'missing_role'; readonly roleId: string }
  | { readonly reason: 'cooldown'; readonly secondsLeft: number };

/** The allowed channels as a refusal names them: the first ten, as channel mentions. */
export function allowedChannelsText(allowedChannelIds: readonly string[]): string {
  return allowedChannelIds.slice(0, 10).map((id) => `<#${id}>`).join(', ');
}

/** The channel and role rules. Moderators need no role; the channel rule holds for everyone. */
export function checkPlaceAndRole(guild: GuildRow, place: Place, member: Member): AccessRefusal | undefined {
  const allowed = guild.allowedChannelIds;
  if (
    allowed.length > 0 &&
    !allowed.includes(place.channelId) &&
    !(place.parentChannelId != null && allowed.includes(place.parentChannelId))
  ) {
    return { reason: 'channel_not_allowed', allowedChannelIds: allowed };
  }
  if (guild.requiredRoleId !== null && !member.roleIds.includes(guild.requiredRoleId) && !isModerator(guild, member)) {
    return { reason: 'missing_role', roleId: guild.requiredRoleId };
  }
  return undefined;
}

/**
 * Seconds the member must still wait since their last request in this guild, or 0.
 * Moderators are not held to the cooldown.
 */
export async function cooldownLeft(executor: Executor, guild: GuildRow, member: Member, now: Date): Promise<number> {
  if (guild.cooldownSeconds <= 0 || isModerator(guild, member)) return 0;
  const last = await lastRequestAt(executor, guild.id, member.userId);
  if (!last) return 0;
  const elapsedMs = now.getTime() - last.getTime();
  return Math.max(0, Math.ceil(guild.cooldownSeconds - elapsedMs / 1000));
}
