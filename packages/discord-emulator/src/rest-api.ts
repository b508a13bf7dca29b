/** Discord's REST API v10 behind the HTTP layer (./http-server.ts): its routes, checks and records. */
import { ChannelType, PermissionFlagsBits } from 'discord-api-types/v10';
import type { Logger } from 'pino';
import type { EmulatorClock } from './clock.js';
import type { CommandRegistry } from './commands.js';
import { DiscordErrors, DiscordHttpError, FormErrors } from './errors.js';
import type { ParsedBody } from './http-body.js';
import type { InteractionRegistry } from './interactions.js';
import { checkCommand, checkCommandList, checkMessagePayload } from './limits.js';
import type { CheckedBody, OpenApiSpec } from './openapi.js';
import type { RateLimitDecision, RateLimitHit, RateLimiter } from './rate-limits.js';
import { RouteTable } from './routes.js';
import type { EmulatorStore } from './store.js';
import type { MessageWrite, StoredChannel, StoredMessage, Upload } from './store/records.js';
import type { Finding, RecordedRequest } from './types.js';

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

interface HandlerContext {
  params: Record<string, string>;
  query: URLSearchParams;
  body: unknown;
  uploads: Upload[];
}

interface HandlerResult {
  status: number;
  body?: unknown;
}

interface RouteDefinition {
  /** Whether the route needs the bot token (interaction and webhook-token routes do not). */
  auth: boolean;
  handler: (context: HandlerContext) => HandlerResult | Promise<HandlerResult>;
}

/** Which requests `rateLimitNext` answers with 429. */
export type RouteMatcher = string | RegExp | ((request: { method: string; path: string; route: string | null }) => boolean);

export interface RateLimitOptions {
  /** Seconds the bot is told to wait. @defaultValue 0.1 */
  retryAfterSeconds?: number;
  /** Answer as a global rate limit. @defaultValue false */
  global?: boolean;
}

interface RateLimitRule {
  matcher: RouteMatcher;
  remaining: number;
  retryAfterSeconds: number;
  global: boolean;
}

/** One request under `/api/v10`, as the HTTP layer hands it over. */
export interface RestCall {
  method: string;
  url: URL;
  authorization: string | undefined;
  body: ParsedBody;
  /** Emulator clock time of arrival. */
  arrivedAt: number;
}

/** What to answer; `rateLimitHeaders` go on the answer whatever it is (the route's bucket). */
export interface RestAnswer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  rateLimitHeaders?: Record<string, string>;
}

export interface RestApiOptions {
  store: EmulatorStore;
  interactions: InteractionRegistry;
  commands: CommandRegistry;
  clock: EmulatorClock;
  logger: Logger;
  applicationId: string;
  botToken: string;
  attachmentSizeLimit: number;
  /** `/api`: the path of DISCORD_API_URL. */
  apiPrefix: string;
  gatewayUrl: () => string;
  /** What `GET /gateway/bot` tells about shards: the recommended count, and `max_concurrency`. */
  shards: { recommended: number; maxConcurrency: number };
  /** The OpenAPI description, or null when checking is off. Loaded on first use. */
  spec: () => OpenApiSpec | null;
  requests: RecordedRequest[];
  findings: Finding[];
  /** Discord's buckets and global limit, or null when they are off. */
  rateLimiter: RateLimiter | null;
  /** Every 429 answered, scripted or earned. */
  rateLimited: RateLimitHit[];
  /** The application's public key, hex (`verify_key`): the key interactions by HTTP are signed with. */
  verifyKey: string;
  /** Resolves once an interaction's HTTP response, if on its way, has been applied (its token's webhook waits for it). */
  deliverySettled: (token: string) => Promise<void>;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Discord's REST API v10, as far as a bot uses it, with Discord's errors and limits. */
export class RestApi {
  readonly #routes = new RouteTable<Partial<Record<Method, RouteDefinition>>>();
  readonly #byTemplate = new Map<string, Partial<Record<Method, RouteDefinition>>>();
  readonly #rateLimits: RateLimitRule[] = [];
  readonly #options: RestApiOptions;
  #seq = 0;

  constructor(options: RestApiOptions) {
    this.#options = options;
    this.#register();
  }

  rateLimitNext(matcher: RouteMatcher, count: number, options: RateLimitOptions = {}): void {
    this.#rateLimits.push({
      matcher,
      remaining: count,
      retryAfterSeconds: options.retryAfterSeconds ?? 0.1,
      global: options.global ?? false,
    });
  }

  #route(method: Method, template: string, auth: boolean, handler: RouteDefinition['handler']): void {
    let methods = this.#byTemplate.get(template);
    if (!methods) {
      methods = {};
      this.#byTemplate.set(template, methods);
      this.#routes.add(template, methods);
    }
    methods[method] = { auth, handler };
  }

  // ---- answering ----

  /** The 404 for a path outside `/api/v10` (with a finding when it is under `/api/`); undefined for an API path. */
  outsideApi(method: string, pathname: string): RestAnswer | undefined {
    const versioned = `${this.#options.apiPrefix}/v10`;
    if (pathname === versioned || pathname.startsWith(`${versioned}/`)) return undefined;
    if (pathname.startsWith(`${this.#options.apiPrefix}/`)) {
      this.#finding({
        kind: 'unknown-route',
        method,
        path: pathname,
        route: null,
        operationId: null,
        message: `request outside ${versioned}: the emulator serves API v10 only`,
        details: [],
      });
    }
    return errorAnswer(DiscordErrors.notFound());
  }

  /**
   * Answers one request under `/api/v10`, its body already read, in Discord's order: rate limits,
   * unknown route, bot token, invalid JSON, upload size, then the route itself. Records the
   * request and any findings.
   */
  async answer(call: RestCall): Promise<RestAnswer> {
    const { method, url, body: parsed } = call;
    const path = url.pathname.slice(`${this.#options.apiPrefix}/v10`.length) || '/';
    const authorization = call.authorization;
    const authorized = authorization === undefined ? null : authorization === `Bot ${this.#options.botToken}`;
    let result: { status: number; body?: unknown; headers?: Record<string, string> };

    const match = this.#routes.match(path);
    const definition = match?.value[method as Method];
    const rateLimit = this.#takeRateLimit(method, path, match?.template ?? null);
    const limiter = this.#options.rateLimiter;
    // Discord counts a request against its bucket before looking at it; unknown routes have none.
    let limits: RateLimitDecision | undefined;
    if (!rateLimit && match && definition && limiter) {
      const identity = definition.auth ? (authorization ?? null) : null;
      limits = limiter.take({ method, route: match.template, params: match.params, identity, bot: authorized === true });
    }
    try {
      if (rateLimit) {
        const bucket = match && limiter ? limiter.bucketOf(method, match.template) : 'emulator-rate-limit';
        result = rateLimitResponse(rateLimit, this.#options.clock.now(), bucket);
      } else if (limits?.limited) {
        result = { status: 429, body: limits.body, headers: limits.headers };
      } else if (!match || !definition) {
        result = errorAnswer(DiscordErrors.notFound());
      } else if (definition.auth && authorized !== true) {
        result = errorAnswer(DiscordErrors.unauthorized());
      } else if (parsed.invalidJson) {
        result = errorAnswer(DiscordErrors.invalidJson());
      } else if (parsed.uploads.some((upload) => upload.data.length > this.#options.attachmentSizeLimit)) {
        result = errorAnswer(DiscordErrors.entityTooLarge());
      } else {
        result = await definition.handler({ params: match.params, query: url.searchParams, body: parsed.json, uploads: parsed.uploads });
      }
    } catch (error) {
      if (error instanceof DiscordHttpError) {
        result = errorAnswer(error);
      } else {
        this.#options.logger.error({ err: error, method, path }, 'discord emulator handler failed');
        result = { status: 500, body: { code: 0, message: '500: Internal Server Error' } };
      }
    }

    const seq = ++this.#seq;
    if (result.status === 429) this.#recordRateLimit(seq, method, path, match?.template ?? null, rateLimit, limits);
    const check = this.#checkAgainstSpec(method, path, url.searchParams, parsed, seq);
    if ((!match || !definition) && check.specKnows !== false) {
      this.#finding({
        kind: check.specKnows ? 'not-emulated' : 'unknown-route',
        method,
        path,
        route: check.route,
        operationId: check.operationId,
        message: check.specKnows
          ? `${method} ${check.route ?? path} is in Discord's API but not emulated; answered 404`
          : `${method} ${path} is unknown to the emulator; answered 404`,
        details: [],
        requestSeq: seq,
      });
    }
    this.#options.requests.push({
      seq,
      at: call.arrivedAt,
      method,
      path,
      query: Object.fromEntries(url.searchParams),
      route: check.route ?? match?.template ?? null,
      operationId: check.operationId,
      authorized,
      body: parsed.json,
      files: parsed.uploads.map((upload) => ({
        field: upload.field,
        filename: upload.filename,
        contentType: upload.contentType,
        size: upload.data.length,
      })),
      status: result.status,
      response: result.body,
    });
    this.#options.logger.debug({ method, path, status: result.status }, 'discord emulator request');
    return { ...result, rateLimitHeaders: limits?.headers };
  }

  #checkAgainstSpec(
    method: string,
    path: string,
    query: URLSearchParams,
    parsed: ParsedBody,
    seq: number,
  ): { route: string | null; operationId: string | null; specKnows: boolean | null } {
    const spec = this.#options.spec();
    if (!spec) return { route: null, operationId: null, specKnows: null };
    const body: CheckedBody =
      parsed.kind === 'none'
        ? { kind: 'none' }
        : parsed.kind === 'json'
          ? { kind: 'json', value: parsed.json }
          : parsed.kind === 'multipart'
            ? { kind: 'multipart', payload: parsed.json, hasPayloadJson: parsed.hasPayloadJson }
            : { kind: 'other', contentType: parsed.contentType };
    const result = spec.check(method, path, query, body);
    for (const issue of result.issues) {
      this.#finding({
        kind: issue.kind,
        method,
        path,
        route: result.route,
        operationId: result.operationId,
        message: issue.message,
        details: issue.details,
        requestSeq: seq,
      });
    }
    const specKnows = !result.issues.some((issue) => issue.kind === 'unknown-route' || issue.kind === 'unknown-method');
    return { route: result.route, operationId: result.operationId, specKnows };
  }

  #finding(finding: Finding): void {
    this.#options.findings.push(finding);
    this.#options.logger.warn({ finding }, 'discord emulator finding');
  }

  #recordRateLimit(
    seq: number,
    method: string,
    path: string,
    route: string | null,
    scripted: RateLimitRule | undefined,
    decision: RateLimitDecision | undefined,
  ): void {
    const at = this.#options.clock.now();
    if (scripted) {
      const scope = scripted.global ? 'global' : 'user';
      this.#options.rateLimited.push({ requestSeq: seq, at, method, path, route, bucket: null, scope, retryAfter: scripted.retryAfterSeconds, scripted: true });
    } else if (decision?.limited) {
      const { bucket, scope, retryAfter } = decision;
      this.#options.rateLimited.push({ requestSeq: seq, at, method, path, route, bucket, scope, retryAfter, scripted: false });
    }
  }

  #takeRateLimit(method: string, path: string, route: string | null): RateLimitRule | undefined {
    const rule = this.#rateLimits.find((candidate) => candidate.remaining > 0 && matches(candidate.matcher, method, path, route));
    if (rule) rule.remaining -= 1;
    return rule;
  }

  // ---- access helpers ----

  #readableChannel(channelId: string): StoredChannel {
    const store = this.#options.store;
    const channel = store.channels.get(channelId);
    if (!channel) throw DiscordErrors.unknownChannel();
    if (store.deniedChannels.has(channelId)) throw DiscordErrors.missingAccess();
    if (channel.guildId) {
      const guild = store.guild(channel.guildId);
      const permissions = store.channelPermissions(guild, channel, store.botUser.id);
      if ((permissions & PermissionFlagsBits.ViewChannel) === 0n) throw DiscordErrors.missingAccess();
    }
    return channel;
  }

  #requirePermission(channel: StoredChannel, permission: bigint): void {
    if (!channel.guildId) return;
    const store = this.#options.store;
    const permissions = store.channelPermissions(store.guild(channel.guildId), channel, store.botUser.id);
    if ((permissions & permission) === 0n) throw DiscordErrors.missingPermissions();
  }

  #channelMessage(channel: StoredChannel, messageId: string): StoredMessage {
    const stored = this.#options.store.messages.get(messageId);
    if (!stored || stored.api.channel_id !== channel.id || stored.ephemeral) throw DiscordErrors.unknownMessage();
    return stored;
  }

  #application(applicationId: string): void {
    if (applicationId !== this.#options.applicationId) throw DiscordErrors.missingAccess();
  }

  #guild(guildId: string): ReturnType<EmulatorStore['guild']> {
    const guild = this.#options.store.guilds.get(guildId);
    if (!guild) throw DiscordErrors.unknownGuild();
    return guild;
  }

  // ---- routes ----

  #register(): void {
    const { store, interactions, commands } = this.#options;
    const wire = (stored: StoredMessage): unknown => structuredClone(stored.api);
    const ok = (body: unknown): HandlerResult => ({ status: 200, body });
    const noContent: HandlerResult = { status: 204 };

    this.#route('GET', '/gateway', false, () => ok({ url: this.#options.gatewayUrl() }));
    this.#route('GET', '/gateway/bot', true, () =>
      ok({
        url: this.#options.gatewayUrl(),
        shards: this.#options.shards.recommended,
        session_start_limit: { total: 1000, remaining: 999, reset_after: 14_400_000, max_concurrency: this.#options.shards.maxConcurrency },
      }),
    );
    this.#route('GET', '/users/@me', true, () => ok(store.botUser));
    this.#route('GET', '/users/{user_id}', true, ({ params }) => {
      const user = store.users.get(params.user_id ?? '');
      if (!user) throw DiscordErrors.unknownUser();
      return ok(user);
    });
    this.#route('POST', '/users/@me/channels', true, ({ body }) => {
      const recipient = isRecord(body) ? String(body.recipient_id ?? '') : '';
      if (!store.users.has(recipient)) throw DiscordErrors.unknownUser();
      return ok(store.apiChannel(store.dmChannel(recipient)));
    });
    this.#route('GET', '/applications/@me', true, () =>
      ok({
        id: this.#options.applicationId,
        name: store.botUser.username,
        icon: null,
        description: 'Discord emulator application',
        bot_public: true,
        bot_require_code_grant: false,
        verify_key: this.#options.verifyKey,
        flags: 0,
        team: null,
        bot: store.botUser,
        summary: '',
        approximate_guild_count: store.guilds.size,
        integration_types_config: { 0: {} },
      }),
    );

    // Application commands, global and per guild.
    for (const scoped of [false, true]) {
      const base = scoped ? '/applications/{application_id}/guilds/{guild_id}/commands' : '/applications/{application_id}/commands';
      const scopeOf = (params: Record<string, string>): string | null => {
        this.#application(params.application_id ?? '');
        if (!scoped) return null;
        return this.#guild(params.guild_id ?? '').id;
      };
      this.#route('GET', base, true, ({ params }) => ok(commands.list(scopeOf(params))));
      this.#route('PUT', base, true, ({ params, body }) => {
        const scope = scopeOf(params);
        if (!Array.isArray(body)) {
          const errors = new FormErrors();
          errors.add([], 'BASE_TYPE_ARRAY', 'Must be an array.');
          throw DiscordErrors.invalidFormBody(errors);
        }
        checkCommandList(body).throwIfAny();
        return ok(commands.overwrite(scope, body));
      });
      this.#route('POST', base, true, ({ params, body }) => {
        const scope = scopeOf(params);
        const command = isRecord(body) ? body : {};
        const errors = new FormErrors();
        checkCommand(errors, [], command, typeof command.type === 'number' ? command.type : 1);
        errors.throwIfAny();
        const { command: saved, created } = commands.upsert(scope, command);
        return { status: created ? 201 : 200, body: saved };
      });
      this.#route('GET', `${base}/{command_id}`, true, ({ params }) => {
        const command = commands.get(scopeOf(params), params.command_id ?? '');
        if (!command) throw DiscordErrors.unknownCommand();
        return ok(command);
      });
      this.#route('DELETE', `${base}/{command_id}`, true, ({ params }) => {
        if (!commands.delete(scopeOf(params), params.command_id ?? '')) throw DiscordErrors.unknownCommand();
        return noContent;
      });
    }

    // Interaction callback and the interaction webhook.
    this.#route('POST', '/interactions/{interaction_id}/{interaction_token}/callback', false, ({ params, query, body, uploads }) =>
      interactions.respond(params.interaction_id ?? '', params.interaction_token ?? '', body, uploads, query.get('with_response') === 'true'),
    );
    // An interaction delivered by HTTP: its response left the bot before any of these requests.
    const webhook = async (params: Record<string, string>): Promise<ReturnType<InteractionRegistry['resolveWebhook']>> => {
      await this.#options.deliverySettled(params.webhook_token ?? '');
      return interactions.resolveWebhook(params.webhook_id ?? '', params.webhook_token ?? '');
    };
    this.#route('POST', '/webhooks/{webhook_id}/{webhook_token}', false, async ({ params, query, body, uploads }) => {
      const stored = interactions.followUp(await webhook(params), body, uploads);
      return query.get('wait') === 'true' ? ok(wire(stored)) : noContent;
    });
    for (const messagePath of ['/messages/@original', '/messages/{message_id}']) {
      const template = `/webhooks/{webhook_id}/{webhook_token}${messagePath}`;
      const messageId = (params: Record<string, string>): string => params.message_id ?? '@original';
      this.#route('GET', template, false, async ({ params }) => ok(wire(interactions.getMessage(await webhook(params), messageId(params)))));
      this.#route('PATCH', template, false, async ({ params, body, uploads }) =>
        ok(wire(interactions.editMessage(await webhook(params), messageId(params), body, uploads))),
      );
      this.#route('DELETE', template, false, async ({ params }) => {
        interactions.deleteMessage(await webhook(params), messageId(params));
        return noContent;
      });
    }

    // Channels and their messages.
    this.#route('GET', '/channels/{channel_id}', true, ({ params }) => ok(store.apiChannel(this.#readableChannel(params.channel_id ?? ''))));
    this.#route('POST', '/channels/{channel_id}/typing', true, ({ params }) => {
      this.#readableChannel(params.channel_id ?? '');
      return noContent;
    });
    this.#route('GET', '/channels/{channel_id}/messages', true, ({ params, query }) => {
      const channel = this.#readableChannel(params.channel_id ?? '');
      this.#requirePermission(channel, PermissionFlagsBits.ReadMessageHistory);
      return ok(listMessages(store.channelMessages(channel.id), query).map(wire));
    });
    this.#route('POST', '/channels/{channel_id}/messages', true, ({ params, body, uploads }) => {
      const channel = this.#readableChannel(params.channel_id ?? '');
      // A forum holds posts (threads), not messages.
      if (channel.type === ChannelType.GuildCategory || channel.type === ChannelType.GuildForum) {
        throw new DiscordHttpError(400, 50008, 'Cannot send messages in a non-text channel');
      }
      // In a thread, Send Messages in Threads (from the parent) takes the place of Send Messages.
      this.#requirePermission(channel, channel.thread ? PermissionFlagsBits.SendMessagesInThreads : PermissionFlagsBits.SendMessages);
      if (uploads.length > 0) this.#requirePermission(channel, PermissionFlagsBits.AttachFiles);
      const { errors, empty } = checkMessagePayload(body, { fileCount: uploads.length });
      errors.throwIfAny();
      if (empty) throw DiscordErrors.emptyMessage();
      const stored = store.createMessage({
        channelId: channel.id,
        author: store.botUser,
        body: (isRecord(body) ? body : {}) as MessageWrite,
        uploads,
      });
      return ok(wire(stored));
    });
    this.#route('GET', '/channels/{channel_id}/messages/{message_id}', true, ({ params }) => {
      const channel = this.#readableChannel(params.channel_id ?? '');
      return ok(wire(this.#channelMessage(channel, params.message_id ?? '')));
    });
    this.#route('PATCH', '/channels/{channel_id}/messages/{message_id}', true, ({ params, body, uploads }) => {
      const channel = this.#readableChannel(params.channel_id ?? '');
      const stored = this.#channelMessage(channel, params.message_id ?? '');
      if (stored.api.author.id !== store.botUser.id) throw DiscordErrors.cannotEditOthersMessage();
      checkMessagePayload(body, { isEdit: true, existingFlags: stored.api.flags ?? 0 }).errors.throwIfAny();
      return ok(wire(store.editMessage(stored, (isRecord(body) ? body : {}) as MessageWrite, uploads)));
    });
    this.#route('DELETE', '/channels/{channel_id}/messages/{message_id}', true, ({ params }) => {
      const channel = this.#readableChannel(params.channel_id ?? '');
      const stored = this.#channelMessage(channel, params.message_id ?? '');
      if (stored.api.author.id !== store.botUser.id) this.#requirePermission(channel, PermissionFlagsBits.ManageMessages);
      store.deleteMessage(stored);
      return noContent;
    });

    // Guilds.
    this.#route('GET', '/guilds/{guild_id}', true, ({ params, query }) => {
      const guild = this.#guild(params.guild_id ?? '');
      const counts = query.get('with_counts') === 'true' ? { approximate_member_count: guild.members.size, approximate_presence_count: 0 } : {};
      return ok({ ...store.apiGuild(guild), ...counts });
    });
    this.#route('GET', '/guilds/{guild_id}/channels', true, ({ params }) => {
      const guild = this.#guild(params.guild_id ?? '');
      return ok(guild.channelIds.flatMap((id) => {
        const channel = store.channels.get(id);
        return channel ? [store.apiChannel(channel)] : [];
      }));
    });
    this.#route('GET', '/guilds/{guild_id}/roles', true, ({ params }) => ok([...this.#guild(params.guild_id ?? '').roles.values()]));
    this.#route('GET', '/guilds/{guild_id}/members/{user_id}', true, ({ params }) => {
      const guild = this.#guild(params.guild_id ?? '');
      const member = guild.members.get(params.user_id ?? '');
      if (!member) throw DiscordErrors.unknownMember();
      return ok(store.apiMember(guild, member));
    });
    this.#route('GET', '/guilds/{guild_id}/members', true, ({ params, query }) => {
      const guild = this.#guild(params.guild_id ?? '');
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
}

function matches(matcher: RouteMatcher, method: string, path: string, route: string | null): boolean {
  if (typeof matcher === 'function') return matcher({ method, path, route });
  if (matcher instanceof RegExp) return matcher.test(`${method} ${path}`);
  const candidates = [path, `${method} ${path}`];
  if (route) candidates.push(route, `${method} ${route}`);
  return candidates.includes(matcher);
}

function errorAnswer(error: DiscordHttpError): RestAnswer {
  return { status: error.status, body: error.toBody(), headers: error.headers };
}

function rateLimitResponse(rule: RateLimitRule, now: number, bucket: string): { status: number; body: unknown; headers: Record<string, string> } {
  const retryAfter = rule.retryAfterSeconds;
  return {
    status: 429,
    body: { message: 'You are being rate limited.', retry_after: retryAfter, global: rule.global },
    headers: {
      'retry-after': String(retryAfter),
      'x-ratelimit-limit': '1',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': ((now + retryAfter * 1000) / 1000).toFixed(3),
      'x-ratelimit-reset-after': retryAfter.toFixed(3),
      'x-ratelimit-bucket': bucket,
      'x-ratelimit-scope': rule.global ? 'global' : 'user',
      ...(rule.global ? { 'x-ratelimit-global': 'true' } : {}),
    },
  };
}

/** GET /channels/{id}/messages: newest first, `limit` 1-100 (50), `before`/`after`/`around`. */
function listMessages(messages: StoredMessage[], query: URLSearchParams): StoredMessage[] {
  const limit = Math.min(Math.max(Number(query.get('limit') ?? 50) || 50, 1), 100);
  const newestFirst = [...messages].sort((a, b) => (BigInt(a.api.id) < BigInt(b.api.id) ? 1 : -1));
  const before = query.get('before');
  const after = query.get('after');
  const around = query.get('around');
  if (before) return newestFirst.filter((stored) => BigInt(stored.api.id) < BigInt(before)).slice(0, limit);
  if (after) {
    return newestFirst
      .filter((stored) => BigInt(stored.api.id) > BigInt(after))
      .slice(-limit);
  }
  if (around) {
    const index = newestFirst.findIndex((stored) => BigInt(stored.api.id) <= BigInt(around));
    const start = Math.max(0, (index === -1 ? newestFirst.length : index) - Math.floor(limit / 2));
    return newestFirst.slice(start, start + limit);
  }
  return newestFirst.slice(0, limit);
}
