/** Gateway discovery, users (the bot, others, DM channels) and the bot's own application. */
import { DiscordErrors } from '../errors.js';
import { isRecord, ok } from './context.js';
import type { RouteContext } from './context.js';

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
  api.route('GET', '/users/@me', true, () => ok(store.botUser));
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
