/**
 * A member's right to a server's dashboard pages, decided on the server side at every request by
 * the same rule the slash commands use (`isModerator`: Manage Server, or the server's moderator
 * role), from the member's roles as the bot reads them (GuildReads, cached at most a minute).
 * What the browser's cookie or the sign-in said is never trusted for it.
 */
import { isModerator, type Member } from '../guilds/access.js';
import type { GuildRow } from '../guilds/settings.js';
import { canManageGuild, type GuildFacts, type GuildReads } from '../discord-rest/guild-reads.js';

export interface GuildAccess {
  /** The bot is in the server; when false, nothing else holds. */
  readonly botPresent: boolean;
  readonly guild: GuildFacts | undefined;
  readonly member: Member | undefined;
  readonly isModerator: boolean;
  readonly isOwner: boolean;
}

export interface AccessDeps {
  readonly reads: Pick<GuildReads, 'guild' | 'memberRoles'>;
  /** The server's row (its moderator role); undefined for a server that never used the bot. */
  findGuild(guildId: string): Promise<Pick<GuildRow, 'moderatorRoleId'> | undefined>;
  readonly ownerIds: readonly string[];
}

export type AccessCheck = (guildId: string, userId: string) => Promise<GuildAccess>;

export function createAccessCheck(deps: AccessDeps): AccessCheck {
  return async (guildId, userId) => {
    const isOwner = deps.ownerIds.includes(userId);
    const guild = await deps.reads.guild(guildId);
    if (!guild) return { botPresent: false, guild: undefined, member: undefined, isModerator: false, isOwner };
    const [roleIds, row] = await Promise.all([deps.reads.memberRoles(guildId, userId), deps.findGuild(guildId)]);
    if (roleIds === undefined) return { botPresent: true, guild, member: undefined, isModerator: false, isOwner };
    const member: Member = { userId, roleIds, canManageGuild: canManageGuild(guild, userId, roleIds) };
    return { botPresent: true, guild, member, isModerator: isModerator({ moderatorRoleId: row?.moderatorRoleId ?? null }, member), isOwner };
  };
}
