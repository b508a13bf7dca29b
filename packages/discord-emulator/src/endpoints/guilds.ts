/** Guilds as the bot reads them: the guild (with counts), its channels, its roles and its members; and giving a member a role. */
import { PermissionFlagsBits } from 'discord-api-types/v10';
import { DiscordErrors } from '../errors.js';
import { noContent, ok } from './context.js';
import type { RouteContext } from './context.js';

export function registerGuildRoutes(api: RouteContext): void {
  const { store } = api;

  api.route('GET', '/guilds/{guild_id}', true, ({ params, query }) => {
    const guild = api.guild(params.guild_id ?? '');
    const counts = query.get('with_counts') === 'true' ? { approximate_member_count: guild.members.size, approximate_presence_count: 0 } : {};
    return ok({ ...store.apiGuild(guild), ...counts });
  });
  api.route('GET', '/guilds/{guild_id}/channels', true, ({ params }) => {
    const guild = api.guild(params.guild_id ?? '');
    return ok(guild.channelIds.flatMap((id) => {
      const channel = store.channels.get(id);
      return channel ? [store.apiChannel(channel)] : [];
    }));
  });
  api.route('GET', '/guilds/{guild_id}/roles', true, ({ params }) => ok([...api.guild(params.guild_id ?? '').roles.values()]));
  api.route('GET', '/guilds/{guild_id}/members/{user_id}', true, ({ params }) => {
    const guild = api.guild(params.guild_id ?? '');
    const member = guild.members.get(params.user_id ?? '');
    if (!member) throw DiscordErrors.unknownMember();
    return ok(store.apiMember(guild, member));
  });
  // Add Guild Member Role: Manage Roles, and only a role below the bot's highest (Administrator
  // or not); an integration's role is never given.
  api.route('PUT', '/guilds/{guild_id}/members/{user_id}/roles/{role_id}', true, ({ params }) => {
    const guild = api.guild(params.guild_id ?? '');
    const member = guild.members.get(params.user_id ?? '');
    if (!member) throw DiscordErrors.unknownMember();
    const role = guild.roles.get(params.role_id ?? '');
    if (!role || role.id === guild.id) throw DiscordErrors.unknownRole();
    const botId = store.botUser.id;
    if ((store.basePermissions(guild, botId) & PermissionFlagsBits.ManageRoles) === 0n) throw DiscordErrors.missingPermissions();
    const botRoles = guild.members.get(botId)?.roles ?? [];
    const highest = Math.max(0, ...botRoles.map((id) => guild.roles.get(id)?.position ?? 0));
    if (role.managed || (guild.ownerId !== botId && role.position >= highest)) throw DiscordErrors.missingPermissions();
    store.setMemberRole(guild.id, member.userId, role.id, true);
    return noContent;
  });
  api.route('GET', '/guilds/{guild_id}/members', true, ({ params, query }) => {
    const guild = api.guild(params.guild_id ?? '');
    const limit = Math.min(Math.max(Number(query.get('limit') ?? 1), 1), 1000);
    const after = BigInt(query.get('after') ?? '0');
    const members = [...guild.members.values()]
      .filter((member) => BigInt(member.userId) > after)
      .sort((a, b) => (BigInt(a.userId) < BigInt(b.userId) ? -1 : 1))
      .slice(0, limit)
      .map((member) => store.apiMember(guild, member));
    return ok(members);
  });
}
