/**
 * Gateway discovery, users (the bot, others, DM channels), the bot's own application, and the
 * current user and their guilds as the bot or an OAuth2 access token (`identify`, `guilds`) sees them.
 */
import { OAuth2Scopes, UserPremiumType } from 'discord-api-types/v10';
import type { APIUser, RESTAPIPartialCurrentUserGuild, UserFlags } from 'discord-api-types/v10';
import { DiscordErrors, FormErrors } from '../errors.js';
import type { EmulatorStore } from '../store.js';
import type { StoredGuild } from '../store/records.js';
import { isRecord, ok } from './context.js';
import type { Caller, RouteContext } from './context.js';

const MAX_GUILDS_PAGE = 200;

export function registerGatewayAndUserRoutes(api: RouteContext): void {
  const { store } = api;

  api.route('GET', '/gateway', false, () => ok({ url: api.gatewayUrl() }));
  api.route('GET', '/gateway/bot', true, () =>
    ok({
      url: api.gatewayUrl(),
      shards: api.shards.recommended,
      session_start_limit: { total: 1000, remaining: 999, reset_after: 14_400_000, max_concurrency: api.shards.maxConcurrency },
    }),
  );
  api.route('GET', '/users/@me', { bearer: OAuth2Scopes.Identify }, ({ caller }) =>
    ok(caller.kind === 'user' ? oauth2User(store, caller.userId, caller.scopes) : store.botUser),
  );
  api.route('GET', '/users/@me/guilds', { bearer: OAuth2Scopes.Guilds }, ({ query, caller }) => ok(currentUserGuilds(store, caller, query)));
  api.route('GET', '/users/{user_id}', true, ({ params }) => {
    const user = store.users.get(params.user_id ?? '');
    if (!user) throw DiscordErrors.unknownUser();
    return ok(user);
  });
  api.route('POST', '/users/@me/channels', true, ({ body }) => {
    const recipient = isRecord(body) ? String(body.recipient_id ?? '') : '';
    if (!store.users.has(recipient)) throw DiscordErrors.unknownUser();
    return ok(store.apiChannel(store.dmChannel(recipient)));
  });
  api.route('GET', '/applications/@me', true, () =>
    ok({
      id: api.applicationId,
      name: store.botUser.username,
      icon: null,
      description: 'Discord emulator application',
      bot_public: true,
      bot_require_code_grant: false,
      verify_key: api.verifyKey,
      flags: 0,
      team: null,
      bot: store.botUser,
      summary: '',
      approximate_guild_count: store.guilds.size,
      integration_types_config: { 0: {} },
    }),
  );
}

/** The user behind an access token, as Get Current User answers it: `email` and `verified` only with the `email` scope. */
function oauth2User(store: EmulatorStore, userId: string, scopes: readonly string[]): APIUser {
  const user = store.users.get(userId);
  if (!user) throw DiscordErrors.unknownUser();
  return {
    ...user,
    banner: null,
    accent_color: null,
    flags: 0 as UserFlags,
    public_flags: 0 as UserFlags,
    premium_type: UserPremiumType.None,
    mfa_enabled: false,
    locale: store.userLocales.get(userId) ?? 'en-US',
    ...(scopes.includes(OAuth2Scopes.Email) && { email: null, verified: false }),
  };
}

/**
 * Get Current User Guilds: the guilds the user (or the bot) is in, by id, a page of `limit`
 * (1–200, default 200) after `after` or before `before`; each with the user's permissions there
 * as a string and `owner`, counts with `with_counts`.
 */
function currentUserGuilds(store: EmulatorStore, caller: Caller, query: URLSearchParams): RESTAPIPartialCurrentUserGuild[] {
  const limitText = query.get('limit');
  const limit = limitText === null || limitText === '' ? MAX_GUILDS_PAGE : Number(limitText);
  const errors = new FormErrors();
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_GUILDS_PAGE) errors.add(['limit'], 'NUMBER_TYPE_MAX', `int value should be between 1 and ${MAX_GUILDS_PAGE}.`);
  const before = query.get('before');
  const after = query.get('after');
  for (const [name, value] of [['before', before], ['after', after]] as const) {
    if (value !== null && value !== '' && !/^\d+$/.test(value)) errors.add([name], 'NUMBER_TYPE_COERCE', `Value "${value}" is not snowflake.`);
  }
  errors.throwIfAny();
  const userId = caller.kind === 'user' ? caller.userId : store.botUser.id;
  const guilds = [...store.guilds.values()]
    .filter((guild) => guild.members.has(userId) && !(caller.kind === 'bot' && guild.botRemoved))
    .sort((a, b) => compareIds(a.id, b.id));
  let page: StoredGuild[];
  if (before) {
    const earlier = guilds.filter((guild) => compareIds(guild.id, before) < 0);
    page = earlier.slice(Math.max(0, earlier.length - limit));
  } else {
    page = guilds.filter((guild) => !after || compareIds(guild.id, after) > 0).slice(0, limit);
  }
  const counts = query.get('with_counts') === 'true';
  return page.map((guild) => ({
    id: guild.id,
    name: guild.name,
    icon: null,
    banner: null,
    owner: guild.ownerId === userId,
    permissions: store.basePermissions(guild, userId).toString(),
    features: [],
    ...(counts && { approximate_member_count: guild.members.size, approximate_presence_count: 0 }),
  }));
}

function compareIds(a: string, b: string): number {
  const difference = BigInt(a) - BigInt(b);
  return difference < 0n ? -1 : difference > 0n ? 1 : 0;
}
