/** A guild's Auto Moderation rules: list, get, create, modify and delete, each requiring the bot to have Manage Server in the guild. */
import { AutoModerationActionType, PermissionFlagsBits } from 'discord-api-types/v10';
import { DiscordErrors } from '../errors.js';
import type { StoredGuild } from '../store/records.js';
import { isRecord, noContent, ok } from './context.js';
import type { RouteContext } from './context.js';

export function registerAutoModerationRoutes(api: RouteContext): void {
  const { store } = api;
  const base = '/guilds/{guild_id}/auto-moderation/rules';

  /** The guild, once the bot is known to hold `permission` there (Manage Server for every rule route). */
  const guildWith = (guildId: string, permission: bigint = PermissionFlagsBits.ManageGuild): StoredGuild => {
    const guild = api.guild(guildId);
    if ((store.basePermissions(guild, store.botUser.id) & permission) === 0n) throw DiscordErrors.missingPermissions();
    return guild;
  };
  /** A timeout action needs Moderate Members besides. */
  const checkActionPermissions = (guild: StoredGuild, body: unknown): void => {
    const actions = isRecord(body) && Array.isArray(body.actions) ? (body.actions as unknown[]) : [];
    if (actions.some((action) => isRecord(action) && action.type === AutoModerationActionType.Timeout)) guildWith(guild.id, PermissionFlagsBits.ModerateMembers);
  };

  api.route('GET', base, true, ({ params }) => ok(store.listAutoModerationRules(guildWith(params.guild_id ?? '').id)));
  api.route('GET', `${base}/{rule_id}`, true, ({ params }) => ok(store.autoModerationRule(guildWith(params.guild_id ?? '').id, params.rule_id ?? '')));
  api.route('POST', base, true, ({ params, body }) => {
    const guild = guildWith(params.guild_id ?? '');
    checkActionPermissions(guild, body);
    return ok(store.createAutoModerationRule(guild.id, store.botUser.id, isRecord(body) ? body : {}));
  });
  api.route('PATCH', `${base}/{rule_id}`, true, ({ params, body }) => {
    const guild = guildWith(params.guild_id ?? '');
    checkActionPermissions(guild, body);
    return ok(store.modifyAutoModerationRule(guild.id, params.rule_id ?? '', isRecord(body) ? body : {}));
  });
  api.route('DELETE', `${base}/{rule_id}`, true, ({ params }) => {
    store.deleteAutoModerationRule(guildWith(params.guild_id ?? '').id, params.rule_id ?? '');
    return noContent;
  });
}
