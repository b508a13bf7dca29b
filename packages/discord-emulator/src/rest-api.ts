/** Discord's REST API v10 behind the HTTP layer (./http-server.ts): the pipeline every request goes through, and the access checks routes share. */
import { PermissionFlagsBits } from 'discord-api-types/v10';
import type { Logger } from 'pino';
import type { EmulatorClock } from './clock.js';
import type { CommandRegistry } from './commands.js';
import { registerAutoModerationRoutes } from './endpoints/auto-moderation.js';
import { registerChannelRoutes } from './endpoints/channels.js';
import { registerCommandRoutes } from './endpoints/commands.js';
import type { Caller, Method, RouteAuth, RouteContext, RouteHandler } from './endpoints/context.js';
import { registerGatewayAndUserRoutes } from './endpoints/gateway-users.js';
import { registerGuildRoutes } from './endpoints/guilds.js';
import { registerInteractionRoutes } from './endpoints/interactions.js';
import { registerMonetizationRoutes } from './endpoints/monetization.js';
import { registerOAuth2Routes } from './endpoints/oauth2.js';
import { DiscordErrors, DiscordHttpError } from './errors.js';
import type { ParsedBody } from './http-body.js';
import type { InteractionRegistry } from './interactions.js';
import type { OAuth2Authorizations } from './oauth2/authorizations.js';
import type { CheckedAuth, CheckedBody, OpenApiSpec } from './openapi.js';
import type { RateLimitDecision, RateLimitHit, RateLimiter } from './rate-limits.js';
import { RouteTable } from './routes.js';
import type { EmulatorStore } from './store.js';
import type { Monetization } from './store/monetization.js';
import type { StoredChannel, StoredGuild, StoredMessage } from './store/records.js';
import type { Finding, RecordedRequest } from './types.js';

interface RouteDefinition {
  auth: RouteAuth;
  handler: RouteHandler;
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
  monetization: Monetization;
  oauth2: OAuth2Authorizations;
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

/** Discord's REST API v10, as far as a bot uses it, with Discord's errors and limits. */
export class RestApi {
  readonly #routes = new RouteTable<Partial<Record<Method, RouteDefinition>>>();
  readonly #byTemplate = new Map<string, Partial<Record<Method, RouteDefinition>>>();
  readonly #rateLimits: RateLimitRule[] = [];
  readonly #options: RestApiOptions;
  #seq = 0;

  constructor(options: RestApiOptions) {
    this.#options = options;
    const context = this.#routeContext();
    registerGatewayAndUserRoutes(context);
    registerCommandRoutes(context);
    registerInteractionRoutes(context);
    registerChannelRoutes(context);
    registerGuildRoutes(context);
    registerAutoModerationRoutes(context);
    registerMonetizationRoutes(context);
    registerOAuth2Routes(context);
  }

  rateLimitNext(matcher: RouteMatcher, count: number, options: RateLimitOptions = {}): void {
    this.#rateLimits.push({
      matcher,
      remaining: count,
      retryAfterSeconds: options.retryAfterSeconds ?? 0.1,
      global: options.global ?? false,
    });
  }

  #route(method: Method, template: string, auth: RouteAuth, handler: RouteHandler): void {
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
    const bearer = /^Bearer\s+(\S+)$/i.exec(authorization ?? '')?.[1];
    let result: { status: number; body?: unknown; headers?: Record<string, string> };

    const match = this.#routes.match(path);
    const definition = match?.value[method as Method];
    const rateLimit = this.#takeRateLimit(method, path, match?.template ?? null);
    const limiter = this.#options.rateLimiter;
    // Discord counts a request against its bucket before looking at it; unknown routes have none.
    let limits: RateLimitDecision | undefined;
    const caller = definition ? this.#caller(definition.auth, authorized === true, bearer) : null;
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
      } else if (!caller) {
        result = errorAnswer(DiscordErrors.unauthorized());
      } else if (parsed.invalidJson) {
        result = errorAnswer(DiscordErrors.invalidJson());
      } else if (parsed.uploads.some((upload) => upload.data.length > this.#options.attachmentSizeLimit)) {
        result = errorAnswer(DiscordErrors.entityTooLarge());
      } else {
        result = await definition.handler({
          params: match.params,
          query: url.searchParams,
          body: parsed.json,
          uploads: parsed.uploads,
          form: parsed.form,
          authorization,
          caller,
        });
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
    const auth: CheckedAuth = authorized === true ? 'bot' : bearer !== undefined ? 'bearer' : 'none';
    const check = this.#checkAgainstSpec(method, path, url.searchParams, parsed, auth, seq);
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
    auth: CheckedAuth,
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
            : parsed.kind === 'form'
              ? { kind: 'form', fields: parsed.form ?? {} }
              : { kind: 'other', contentType: parsed.contentType };
    const result = spec.check(method, path, query, body, auth);
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

  /**
   * Who the request speaks for under the route's rule, or null for a 401: the bot token, or an
   * access token that is live and holds the route's scope (Discord answers 401 without it).
   */
  #caller(auth: RouteAuth, bot: boolean, bearer: string | undefined): Caller | null {
    if (auth === false) return bot ? { kind: 'bot' } : { kind: 'anonymous' };
    if (bot) return { kind: 'bot' };
    if (auth === true || bearer === undefined) return null;
    const grant = this.#options.oauth2.resolve(bearer);
    if (!grant || !grant.scopes.includes(auth.bearer)) return null;
    return { kind: 'user', userId: grant.userId, scopes: grant.scopes };
  }

  // ---- what route modules are handed ----

  #routeContext(): RouteContext {
    const { store, interactions, commands, monetization, oauth2, applicationId, verifyKey, gatewayUrl, shards, deliverySettled } = this.#options;
    return {
      route: (method, template, auth, handler) => this.#route(method, template, auth, handler),
      store,
      interactions,
      commands,
      monetization,
      oauth2,
      applicationId,
      verifyKey,
      gatewayUrl,
      shards,
      deliverySettled,
      readableChannel: (channelId) => this.#readableChannel(channelId),
      requirePermission: (channel, permission) => this.#requirePermission(channel, permission),
      channelMessage: (channel, messageId) => this.#channelMessage(channel, messageId),
      application: (id) => this.#application(id),
      guild: (guildId) => this.#guild(guildId),
    };
  }

  // ---- access checks ----

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

  #guild(guildId: string): StoredGuild {
    const guild = this.#options.store.guilds.get(guildId);
    if (!guild) throw DiscordErrors.unknownGuild();
    return guild;
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
