/** The Discord emulator: the `DiscordEmulator` class that tests and the playground script, and `startDiscordEmulator`. */
import { existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { ButtonStyle, ChannelType, ComponentType, PermissionFlagsBits, SKUType } from 'discord-api-types/v10';
import type { APIApplicationCommand, APIAutoModerationRule, GatewayDispatchEvents, APIEntitlement, APIOverwrite, APIRole, APISKU, APIUser, Locale } from 'discord-api-types/v10';
import type { FastifyInstance } from 'fastify';
import { pino, type Logger } from 'pino';
import { EmulatorClock } from './clock.js';
import { CommandRegistry } from './commands.js';
import { Gateway, RESUMABLE_CLOSE_CODE } from './gateway.js';
import type { GatewayStats } from './gateway.js';
import { InteractionRegistry } from './interactions.js';
import { DEFAULT_ATTACHMENT_SIZE_LIMIT } from './interactions/payload.js';
import { HttpInteractionDelivery, type HttpDeliveryStats } from './http-delivery.js';
import { createEmulatorHttp } from './http-server.js';
import { OAuth2Authorizations, type OAuth2Authorization } from './oauth2/authorizations.js';
import { registerAuthorizePage } from './oauth2/authorize-page.js';
import { DEFAULT_OPENAPI_URL, OpenApiSpec } from './openapi.js';
import { RateLimiter } from './rate-limits.js';
import type { RateLimitHit } from './rate-limits.js';
import { RestApi } from './rest-api.js';
import type { RateLimitOptions, RouteMatcher } from './rest-api.js';
import { SnowflakeGenerator } from './snowflake.js';
import { EmulatorStore, type EntitlementEvent } from './store.js';
import type { RuleInput } from './store/auto-moderation.js';
import type { CreateChannelInput } from './store/guilds.js';
import type { CreateSkuInput, EmulatorSubscription, EntitlementDelivery, EntitlementEventType, EntitlementOrder, EntitlementRecord } from './store/monetization.js';
import type { StoredChannel, StoredMessage } from './store/records.js';
import type {
  AutocompleteChoice,
  AutocompleteInput,
  CdnRequest,
  ClickButtonInput,
  RunMessageCommandInput,
  DiscordEmulatorOptions,
  EmulatorMessage,
  Finding,
  InteractionHandle,
  InteractionPlace,
  RecordedRequest,
  RunCommandInput,
  SelectOptionInput,
  SubmitModalInput,
  UncheckedInteractionInput,
} from './types.js';
import { waitUntil } from './wait.js';
import { WebhookEventDelivery } from './webhook-events.js';
import { createDaveListener } from './voice/dave-listener.js';
import type { DaveState } from './voice/dave.js';
import { compareEnvelope } from './voice/reception.js';
import type { EnvelopeComparison, VoiceAudioListener, VoiceReception } from './voice/reception.js';
import { VOICE_CA_PATH, VoiceServer } from './voice/server.js';
import { VoiceStates } from './voice/states.js';
import type { VoiceRefusal } from './voice/states.js';

const API_PREFIX = '/api';
const DEFAULT_HEARTBEAT_INTERVAL_MS = 41_250;
const DEFAULT_WAIT_MS = 5_000;

export interface EmulatorGuild {
  id: string;
  name: string;
  ownerId: string;
  /** The @everyone role, whose id is the guild's. */
  everyoneRoleId: string;
  /** The bot's managed role. */
  botRoleId: string;
  /** Where Discord posts join messages; null unless asked for with `systemChannel`. */
  systemChannelId: string | null;
}

export interface EmulatorChannel {
  id: string;
  guildId: string | null;
  name: string | null;
  type: ChannelType;
  /** A thread's channel (a forum post's forum), a channel's category. */
  parentId: string | null;
  /** Age-restricted (Discord's `nsfw`); always false for a thread, which follows its parent. */
  nsfw: boolean;
}

export interface CreateThreadInput {
  name: string;
  /** 11 (public, the default) or 12 (private); `private: true` says the same. */
  type?: ChannelType.PublicThread | ChannelType.PrivateThread;
  private?: boolean;
  /** Who starts it. @defaultValue the guild's first added member (else its owner) */
  ownerId?: string;
  /** Members added besides the owner; only they see a private thread. Add the bot's id for it to be told (THREAD_CREATE). */
  members?: string[];
}

export interface CreateForumPostInput {
  name: string;
  /** The post's first message: its text, or a message body. */
  message: string | { content?: string; embeds?: unknown[] };
  /** @defaultValue the guild's first added member (else its owner) */
  authorId?: string;
}

export interface EmulatorMember {
  /** The user's id. */
  id: string;
  guildId: string;
  user: APIUser;
  roles: string[];
}

/**
 * An emulated Discord for one bot: REST v10 under {@link DiscordEmulator.apiUrl}, a gateway,
 * a CDN for attachments, and a scripting API for tests. Start it with {@link startDiscordEmulator}.
 */
export class DiscordEmulator {
  /** All deadline checks use this clock; `clock.advance(ms)` jumps ahead. */
  readonly clock = new EmulatorClock();
  readonly applicationId: string;
  readonly botToken: string;
  readonly botUser: APIUser;
  /** Every REST request the bot made, in order. */
  readonly requests: RecordedRequest[] = [];
  /** Everything the bot sent that Discord's API description or gateway protocol does not accept. */
  readonly findings: Finding[] = [];
  /** Every 429 the emulator answered, in order: Discord's buckets and global limit, and `rateLimitNext`. */
  readonly rateLimited: RateLimitHit[] = [];
  /** Every ENTITLEMENT_* event sent (or withheld) and how: to gateway sessions, each webhook POST. */
  readonly entitlementDeliveries: EntitlementDeliveryRecord[] = [];
  /** Every request to the attachment CDN, in order. */
  readonly cdnRequests: CdnRequest[] = [];

  readonly #app: FastifyInstance;
  readonly #store: EmulatorStore;
  readonly #commands: CommandRegistry;
  readonly #interactions: InteractionRegistry;
  readonly #gateway: Gateway;
  readonly #http: HttpInteractionDelivery;
  readonly #rest: RestApi;
  readonly #logger: Logger;
  readonly #voiceServer: VoiceServer;
  readonly #voice: VoiceStates;
  readonly #webhookEvents: WebhookEventDelivery;
  readonly #oauth2: OAuth2Authorizations;
  readonly #clientSecret: string;
  /** Who is signed in to Discord's web in the browser, when a host (the playground) says so. */
  #webUserId: string | undefined;
  /** Late entitlement deliveries still to go. */
  readonly #lateDeliveries = new Set<NodeJS.Timeout>();
  #origin = '';

  /** Use {@link startDiscordEmulator}; the constructor does not listen. */
  constructor(options: DiscordEmulatorOptions = {}) {
    const ids = new SnowflakeGenerator(this.clock);
    this.#logger = options.logger ?? pino({ level: 'silent' });
    const botUserId = options.botUserId ?? ids.next();
    this.applicationId = options.applicationId ?? botUserId;
    this.botToken = options.botToken ?? 'emulator-bot-token';
    this.botUser = {
      id: botUserId,
      username: options.botUsername ?? 'Emulated Bot',
      discriminator: '0',
      global_name: null,
      avatar: null,
      bot: true,
    };
    const attachmentSizeLimit = options.attachmentSizeLimit ?? DEFAULT_ATTACHMENT_SIZE_LIMIT;
    this.#store = new EmulatorStore({
      ids,
      clock: this.clock,
      botUser: this.botUser,
      cdnBase: () => options.cdnUrl?.replace(/\/$/, '') ?? this.#origin,
      applicationId: this.applicationId,
    });
    this.#commands = new CommandRegistry(ids, this.applicationId);
    this.#gateway = new Gateway({
      store: this.#store,
      botToken: this.botToken,
      applicationId: this.applicationId,
      heartbeatIntervalMs: options.heartbeatIntervalMs ?? DEFAULT_HEARTBEAT_INTERVAL_MS,
      logger: this.#logger,
      resumeUrl: () => `${this.#wsOrigin()}/gateway/resume`,
      maxConcurrency: options.shards?.maxConcurrency ?? 1,
      onVoiceStateUpdate: (requester, d) => this.#voice.update(requester, d),
      identifyWindowMs: options.shards?.identifyWindowMs ?? 5_000,
      onFinding: (message, details) => {
        const finding: Finding = { kind: 'gateway-protocol', method: 'WS', path: '/gateway', route: null, operationId: null, message, details };
        this.findings.push(finding);
        this.#logger.warn({ finding }, 'discord emulator finding');
      },
    });
    const voiceFinding = (message: string, details: string[]): void => {
      const finding: Finding = { kind: 'voice-protocol', method: 'WS', path: '/voice', route: null, operationId: null, message, details };
      this.findings.push(finding);
      this.#logger.warn({ finding }, 'discord emulator finding');
    };
    this.#voiceServer = new VoiceServer({
      logger: this.#logger,
      clockNow: () => this.clock.now(),
      clockMonotonic: () => this.clock.monotonic(),
      onFinding: voiceFinding,
      decode: options.voice?.decode ?? true,
      receiveOnThread: options.voice?.receiveOnThread ?? false,
      heartbeatIntervalMs: options.voice?.heartbeatIntervalMs,
      canSpeak: (guildId, channelId) =>
        (this.#store.channelPermissions(this.#store.guild(guildId), this.#store.channel(channelId), this.botUser.id) & PermissionFlagsBits.Speak) !== 0n,
      othersInChannel: (channelId, botId) => this.#voice.members(channelId).filter((id) => id !== botId),
      createDave:
        options.voice?.dave === false
          ? undefined
          : (session) => createDaveListener({ ...session, listenerId: ids.next(), onFinding: voiceFinding, logger: this.#logger }),
    });
    this.#voice = new VoiceStates({
      store: this.#store,
      server: this.#voiceServer,
      onFinding: voiceFinding,
      dispatchToSession: (sessionId, t, d) => this.#gateway.dispatchToSession(sessionId, t, d),
    });
    this.#interactions = new InteractionRegistry({
      store: this.#store,
      commands: this.#commands,
      clock: this.clock,
      applicationId: this.applicationId,
      attachmentSizeLimit,
      dispatch: (payload) => (this.#http.endpoint ? this.#http.deliver(payload) : this.#gateway.dispatchInteraction(payload)),
    });
    this.#http = new HttpInteractionDelivery({
      applicationId: this.applicationId,
      respond: (id, token, body) => void this.#interactions.respond(id, token, body, [], false),
      onFailure: (interaction, message, details) => {
        const finding: Finding = { kind: 'interaction-response', method: 'POST', path: this.#http.endpoint ?? '', route: null, operationId: null, message, details };
        this.findings.push(finding);
        this.#logger.warn({ finding, interactionId: interaction.id }, 'discord emulator finding');
      },
    });
    this.#webhookEvents = new WebhookEventDelivery({
      applicationId: this.applicationId,
      sign: (body) => this.#http.signatureHeaders(body),
      retry: options.webhookEvents,
      onAttempt: (attempt) =>
        this.entitlementDeliveries.push({
          at: attempt.at,
          type: attempt.event as EntitlementEventType,
          entitlementId: attempt.dataId ?? '',
          via: 'webhook',
          attempt: attempt.attempt,
          status: attempt.status,
          ok: attempt.ok,
          final: attempt.final,
        }),
    });
    this.#store.events.on('entitlement', (event: EntitlementEvent) => this.#deliverEntitlement(event));
    for (const sku of options.skus ?? []) this.createSku(sku);
    this.#store.monetization.order = options.entitlementOrder ?? 'from-cursor';
    this.#clientSecret = options.oauth2?.clientSecret ?? 'emulator-client-secret';
    let ownerId = options.oauth2?.ownerId;
    this.#oauth2 = new OAuth2Authorizations({
      clock: this.clock,
      clientId: this.applicationId,
      clientSecret: this.#clientSecret,
      publicClient: options.oauth2?.publicClient ?? false,
      redirectUris: options.oauth2?.redirectUris ?? [],
      issuer: () => this.webUrl,
      ownerId: () => (ownerId ??= this.#store.addUser({ username: `${this.botUser.username.toLowerCase().replace(/[^a-z0-9]+/g, '-')}-owner` }).id),
    });
    const validate = options.validateRequests ?? true;
    const specLocation = options.openApiPath ?? DEFAULT_OPENAPI_URL;
    if (validate && !existsSync(specLocation instanceof URL ? fileURLToPath(specLocation) : specLocation)) {
      throw new Error(`Discord's OpenAPI description is not at ${specLocation.toString()}; pass openApiPath or validateRequests: false`);
    }
    this.#rest = new RestApi({
      store: this.#store,
      interactions: this.#interactions,
      commands: this.#commands,
      monetization: this.#store.monetization,
      oauth2: this.#oauth2,
      clock: this.clock,
      logger: this.#logger,
      applicationId: this.applicationId,
      botToken: this.botToken,
      attachmentSizeLimit,
      apiPrefix: API_PREFIX,
      gatewayUrl: () => `${this.#wsOrigin()}/gateway`,
      shards: { recommended: options.shards?.recommended ?? 1, maxConcurrency: options.shards?.maxConcurrency ?? 1 },
      spec: () => (validate ? OpenApiSpec.load(specLocation) : null),
      requests: this.requests,
      findings: this.findings,
      rateLimiter:
        options.rateLimits === false ? null : new RateLimiter(this.clock, options.rateLimits === true ? {} : options.rateLimits),
      rateLimited: this.rateLimited,
      verifyKey: this.#http.publicKey,
      deliverySettled: (token) => this.#http.settled(token),
    });
    this.#app = createEmulatorHttp({
      rest: this.#rest,
      attachment: (method, path) => {
        this.cdnRequests.push({ method, path, at: this.clock.now() });
        return this.#store.cdn.get(path);
      },
      clock: this.clock,
      apiBase: `${API_PREFIX}/v10`,
      // Room for a message's attachments at the limit each, and its JSON.
      bodyLimit: attachmentSizeLimit * 10 + 8 * 1024 * 1024,
      logger: this.#logger,
      registerWeb: (app) =>
        registerAuthorizePage(app, {
          oauth2: this.#oauth2,
          users: () => [...this.#store.users.values()].filter((user) => user.bot !== true),
          webUser: () => (this.#webUserId === undefined ? undefined : this.#store.users.get(this.#webUserId)),
          applicationName: () => this.botUser.username,
          webUrl: () => this.webUrl,
          apiUrl: () => this.apiUrl,
        }),
    });
    this.#app.server.on('upgrade', (request, socket, head) => {
      if (!this.#gateway.handleUpgrade(request, socket, head)) socket.destroy();
    });
  }

  /** Starts listening; resolves once the port is bound. */
  async listen(port = 0, host = '127.0.0.1'): Promise<this> {
    await this.#app.listen({ port, host });
    await this.#voiceServer.listen(host);
    const address = this.#app.server.address() as AddressInfo;
    const hostname = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    this.#origin = `http://${hostname}:${address.port}`;
    return this;
  }

  #wsOrigin(): string {
    return this.#origin.replace(/^http/, 'ws');
  }

  /** The HTTP origin, e.g. `http://127.0.0.1:PORT` (the CDN lives here). */
  get origin(): string {
    return this.#origin;
  }

  /** The value for DISCORD_API_URL (discord.js appends `/v10`). */
  get apiUrl(): string {
    return `${this.#origin}${API_PREFIX}`;
  }

  /**
   * The value for DISCORD_WEB_URL: where Discord's web pages are, `https://discord.com` on Discord
   * (the OAuth2 authorize page is `${webUrl}/oauth2/authorize`); the emulator's origin.
   */
  get webUrl(): string {
    return this.#origin;
  }

  /** The gateway address `GET /gateway/bot` hands out. */
  get gatewayUrl(): string {
    return `${this.#wsOrigin()}/gateway`;
  }

  get gatewayStats(): Readonly<GatewayStats> {
    return this.#gateway.stats;
  }

  /** The application's public key (hex): the bot's DISCORD_PUBLIC_KEY when interactions come by HTTP. */
  get publicKey(): string {
    return this.#http.publicKey;
  }

  /** Interactions POSTed to the endpoint, and how their responses went. */
  get httpDeliveryStats(): Readonly<HttpDeliveryStats> {
    return this.#http.stats;
  }

  /**
   * Sets the app's Interactions Endpoint URL, as the developer portal does: after a signed PING
   * answered with PONG and a forged request answered 401 (else it throws, saving nothing).
   * From then on interactions are POSTed there, signed with {@link publicKey}, and no gateway
   * session receives them. `null` goes back to the gateway.
   */
  async setInteractionsEndpoint(url: string | null): Promise<void> {
    await this.#http.setEndpoint(url);
  }

  /** Signature headers for `body`, as Discord signs an interaction (for tests of the bot's endpoint). */
  signInteraction(body: string, timestampSeconds?: number): Record<string, string> {
    return this.#http.signatureHeaders(body, timestampSeconds);
  }

  /**
   * Sets the app's Webhook Events URL, as the developer portal does: after a signed PING (type 0)
   * answered 204 with an empty body (else it throws, saving nothing). From then on the events
   * named in `events` (default the three ENTITLEMENT_* ones) are POSTed there signed with
   * {@link publicKey}, and retried with backoff until a 2xx comes within 3 s. Gateway sessions
   * still get ENTITLEMENT_* dispatches. `null` removes the URL.
   */
  async setWebhookEventsEndpoint(url: string | null, events: string[] = ['ENTITLEMENT_CREATE', 'ENTITLEMENT_UPDATE', 'ENTITLEMENT_DELETE']): Promise<void> {
    await this.#webhookEvents.setUrl(url, events);
  }

  // ---- Premium Apps: SKUs and entitlements ----

  /**
   * Adds a SKU to the application (the option `skus` does the same at start). A subscription is a
   * guild subscription (flags AVAILABLE | GUILD_SUBSCRIPTION) unless `flags` say otherwise, and
   * gets its SUBSCRIPTION_GROUP twin (type 6) as on Discord; the type 5 one is returned.
   */
  createSku(input: CreateSkuInput): APISKU {
    return this.#store.monetization.createSku(input);
  }

  /** The application's SKUs, as List SKUs answers them. */
  skus(): APISKU[] {
    return this.#store.monetization.listSkus();
  }

  /**
   * A member buys a one-time SKU (consumable or durable): a PURCHASE entitlement of the user's
   * (no guild_id, as on Discord), ENTITLEMENT_CREATE. Throws when the user still holds the
   * consumable unconsumed (Discord's checkout refuses it until the app consumes it) or owns the durable.
   */
  purchase(input: { userId: string; skuId: string; guildId?: string; delivery?: EntitlementDelivery }): APIEntitlement {
    this.#requireUser(input.userId);
    if (input.guildId !== undefined) this.#store.guild(input.guildId);
    return this.#store.monetization.purchase(input);
  }

  /**
   * A member subscribes the guild to a guild-subscription SKU: an APPLICATION_SUBSCRIPTION
   * entitlement with guild_id and user_id, starts_at now, ends_at null until it ends, and a
   * subscription (GET /skus/{sku_id}/subscriptions); ENTITLEMENT_CREATE.
   */
  subscribe(input: { userId: string; guildId: string; skuId: string; delivery?: EntitlementDelivery }): APIEntitlement {
    const guild = this.#store.guild(input.guildId);
    if (!guild.members.has(input.userId)) throw new Error(`user ${input.userId} is not a member of guild ${input.guildId}`);
    return this.#store.monetization.subscribe(input);
  }

  /** The subscription ends (now, or `endsAt`): ends_at set, ENTITLEMENT_UPDATE. */
  endSubscription(entitlementId: string, input: { endsAt?: Date; delivery?: EntitlementDelivery } = {}): APIEntitlement {
    return this.#store.monetization.endSubscription(entitlementId, input);
  }

  /** Discord refunds: the entitlement is deleted (`deleted: true`), ENTITLEMENT_DELETE; lists hide it unless `exclude_deleted=false`. */
  refund(entitlementId: string, input: { delivery?: EntitlementDelivery } = {}): void {
    this.#store.monetization.refund(entitlementId, input);
  }

  /** The order List Entitlements answers in from now on (Discord documents none): see {@link EntitlementOrder}. */
  setEntitlementOrder(order: EntitlementOrder): void {
    this.#store.monetization.order = order;
  }

  /** Every entitlement, deleted and ended ones included, oldest first. */
  entitlements(): APIEntitlement[] {
    return this.#store.monetization.all();
  }

  entitlement(entitlementId: string): APIEntitlement | undefined {
    return this.#store.monetization.find(entitlementId);
  }

  /** The subscription behind a subscription entitlement, as GET /skus/{sku_id}/subscriptions/{id} answers it. */
  subscription(skuId: string, subscriptionId: string): EmulatorSubscription | undefined {
    return this.#store.monetization.subscription(skuId, subscriptionId);
  }

  /** Sends the last event about the entitlement again (or the one named): a duplicate delivery. */
  redeliverEntitlementEvent(entitlementId: string, type?: 'create' | 'update' | 'delete'): void {
    this.#store.monetization.redeliver(entitlementId, type);
  }

  /** What happened to entitlements, in order: purchases, subscriptions, ends, refunds, consumes (repeated ones marked), test entitlements, redeliveries. */
  get entitlementRecords(): readonly EntitlementRecord[] {
    return this.#store.monetization.records;
  }

  /**
   * A member presses a premium button (style 6) on a message: checks that the message has one
   * for the SKU that the member sees (an ephemeral message only its recipient), then buys it:
   * `purchase` for a one-time SKU, `subscribe` in the message's guild for a subscription.
   * Discord sends the bot no interaction for it, only the entitlement.
   */
  clickPremiumButton(input: { messageId: string; skuId: string; userId: string; guildId?: string; delivery?: EntitlementDelivery }): APIEntitlement {
    const stored = this.#store.messages.get(input.messageId);
    if (!stored) throw new Error(`the emulator has no message ${input.messageId}`);
    if (stored.ephemeral && stored.api.interaction_metadata?.user.id !== input.userId) {
      throw new Error(`message ${input.messageId} is ephemeral: only its recipient sees its buttons`);
    }
    const guildId = input.guildId ?? stored.guildId ?? undefined;
    if (stored.guildId) {
      const guild = this.#store.guild(stored.guildId);
      const channel = this.#store.channel(stored.api.channel_id);
      if (!guild.members.has(input.userId) || (this.#store.channelPermissions(guild, channel, input.userId) & PermissionFlagsBits.ViewChannel) === 0n) {
        throw new Error(`user ${input.userId} cannot see message ${input.messageId}`);
      }
    }
    const button = findPremiumButton(stored.api.components, input.skuId);
    if (!button) throw new Error(`message ${input.messageId} has no premium button for SKU ${input.skuId}`);
    if (button.disabled === true) throw new Error(`the premium button for SKU ${input.skuId} on message ${input.messageId} is disabled`);
    const sku = this.skus().find((candidate) => candidate.id === input.skuId);
    if (sku?.type === SKUType.Subscription) {
      if (!guildId) throw new Error(`SKU ${input.skuId} is a subscription: it is bought in a guild`);
      return this.subscribe({ userId: input.userId, guildId, skuId: input.skuId, delivery: input.delivery });
    }
    return this.purchase({ userId: input.userId, skuId: input.skuId, delivery: input.delivery });
  }

  /**
   * Sends an entitlement event Discord never made (another application's, an unknown id, a
   * changed SKU) over the gateway, as an attacker on the wire or a confused proxy would: for
   * tests that the bot trusts only what REST confirms. Returns the sessions it reached.
   */
  forgeEntitlementEvent(type: EntitlementEventType, entitlement: Record<string, unknown> & { id: string }, guildId?: string): number {
    const sessions = this.#gateway.dispatchToShard(type as GatewayDispatchEvents, entitlement, guildId);
    this.entitlementDeliveries.push({ at: this.clock.now(), type, entitlementId: entitlement.id, via: 'gateway', sessions });
    return sessions;
  }

  #requireUser(userId: string): void {
    if (!this.#store.users.has(userId)) throw new Error(`the emulator has no user ${userId}`);
  }

  /** Sends an entitlement event as asked: once, twice, never, or late; to gateway sessions and the webhook events URL. */
  #deliverEntitlement(event: EntitlementEvent): void {
    const { type, entitlement, delivery } = event;
    if (delivery === 'never') {
      this.entitlementDeliveries.push({ at: this.clock.now(), type, entitlementId: entitlement.id, via: 'withheld' });
      return;
    }
    const timestamp = this.clock.iso();
    const send = (): void => {
      const sessions = this.#gateway.dispatchToShard(type as GatewayDispatchEvents, entitlement, entitlement.guild_id);
      this.entitlementDeliveries.push({ at: this.clock.now(), type, entitlementId: entitlement.id, via: 'gateway', sessions });
      this.#webhookEvents.send(type, entitlement, timestamp);
    };
    if (typeof delivery === 'object') {
      const timer = setTimeout(() => {
        this.#lateDeliveries.delete(timer);
        send();
      }, delivery.delayMs);
      this.#lateDeliveries.add(timer);
      return;
    }
    send();
    if (delivery === 'twice') send();
  }

  // ---- world building ----

  /**
   * `id` keeps a guild's id across runs (the playground's data outlives the emulator).
   * `botPermissions` are the bot role's, `everyonePermissions` the @everyone role's (the bot has both).
   */
  createGuild(input: {
    id?: string;
    name: string;
    ownerId?: string;
    botPermissions?: bigint | string;
    everyonePermissions?: bigint | string;
    locale?: Locale;
    /** Makes a text channel of this name with the guild, as its system channel (Discord's #general). */
    systemChannel?: string;
  }): EmulatorGuild {
    const guild = this.#store.createGuild({
      id: input.id,
      name: input.name,
      ownerId: input.ownerId,
      botPermissions: input.botPermissions === undefined ? undefined : BigInt(input.botPermissions),
      everyonePermissions: input.everyonePermissions === undefined ? undefined : BigInt(input.everyonePermissions),
      locale: input.locale,
      systemChannel: input.systemChannel,
    });
    return {
      id: guild.id,
      name: guild.name,
      ownerId: guild.ownerId,
      everyoneRoleId: guild.id,
      botRoleId: guild.botRoleId,
      systemChannelId: guild.systemChannelId,
    };
  }

  /** The guild removes the bot: GUILD_DELETE, and the guild is left out of later READYs. */
  removeBot(guildId: string): void {
    this.#store.removeBot(guildId);
  }

  /** The guild invites the bot (back): GUILD_CREATE with the guild as it is now. */
  addBot(guildId: string): void {
    this.#store.addBot(guildId);
  }

  /** `type: ChannelType.GuildVoice` makes a voice channel; `userLimit` (0: none) and `bitrate` apply to voice channels. */
  createChannel(guildId: string, input: CreateChannelInput): EmulatorChannel {
    return channelView(this.#store.createChannel(guildId, input));
  }

  /** A role, on top of the others, or at `position` (1: just above @everyone, so below the bot's role), those from there up moved up one. */
  createRole(guildId: string, input: { id?: string; name: string; permissions?: bigint | string; position?: number }): APIRole {
    return this.#store.createRole(guildId, input);
  }

  addMember(
    guildId: string,
    input: { userId?: string; username: string; globalName?: string; roles?: string[]; permissions?: bigint | string; nick?: string },
  ): EmulatorMember {
    return this.#memberView(guildId, this.#store.addMember(guildId, input));
  }

  /**
   * A moderator gives `userId` the role, as Add Guild Member Role does: GUILD_MEMBER_UPDATE to the
   * sessions with the GUILD_MEMBERS intent, and the member's next interaction carries the role.
   */
  addMemberRole(guildId: string, userId: string, roleId: string): EmulatorMember {
    return this.#memberView(guildId, this.#store.setMemberRole(guildId, userId, roleId, true));
  }

  /** A moderator takes the role from `userId`, as Remove Guild Member Role does: GUILD_MEMBER_UPDATE. */
  removeMemberRole(guildId: string, userId: string, roleId: string): EmulatorMember {
    return this.#memberView(guildId, this.#store.setMemberRole(guildId, userId, roleId, false));
  }

  /** `userId` in the guild as the scripting API shows members, or undefined when they are not one. */
  member(guildId: string, userId: string): EmulatorMember | undefined {
    const member = this.#store.guild(guildId).members.get(userId);
    return member ? this.#memberView(guildId, member) : undefined;
  }

  #memberView(guildId: string, member: { userId: string; roles: readonly string[] }): EmulatorMember {
    const user = this.#store.users.get(member.userId) as APIUser;
    return { id: user.id, guildId, user, roles: [...member.roles] };
  }

  /**
   * A member starts a thread in a text channel. The bot hears of it by THREAD_CREATE when it can
   * see it: a public thread of a channel it can view, a private one only when it is a member.
   * Permissions come from the parent channel.
   */
  createThread(channelId: string, input: CreateThreadInput): EmulatorChannel {
    const parent = this.#store.channel(channelId);
    const type = input.private === true ? ChannelType.PrivateThread : (input.type ?? ChannelType.PublicThread);
    if (input.private === false && type === ChannelType.PrivateThread) throw new Error('private: false contradicts type 12');
    const ownerId = input.ownerId ?? this.#place({ guildId: parent.guildId ?? undefined, channelId }).userId;
    return channelView(this.#store.createThread(channelId, { name: input.name, type, ownerId, memberIds: input.members }));
  }

  /** A member posts in a forum (type 15): a public thread under the forum, opened by the member's message. */
  createForumPost(forumId: string, input: CreateForumPostInput): { thread: EmulatorChannel; message: EmulatorMessage } {
    const forum = this.#store.channel(forumId);
    const authorId = input.authorId ?? this.#place({ guildId: forum.guildId ?? undefined, channelId: forumId }).userId;
    const message = typeof input.message === 'string' ? { content: input.message } : input.message;
    const { thread, starter } = this.#store.createForumPost(forumId, { name: input.name, authorId, message });
    return { thread: channelView(thread), message: this.#store.publicMessage(starter) };
  }

  /**
   * The user closes their DMs to the bot (server members' DMs off, or the bot blocked): the bot's
   * posts in their DM answer 403 50007 Cannot send messages to this user; `open` undoes it.
   */
  closeDirectMessages(userId: string, closed = true): void {
    if (closed) this.#store.closedDirectMessages.add(userId);
    else this.#store.closedDirectMessages.delete(userId);
  }

  /** Makes the bot lose access to a channel: its REST routes answer 403 50001 Missing Access. */
  denyChannel(channelId: string): void {
    this.#store.denyChannel(channelId);
  }

  /**
   * Sets a channel's permission overwrite for a role or member (`type` 0 role, 1 member; allow and
   * deny as bit strings; both "0" removes it), as a moderator would: CHANNEL_UPDATE. E.g. deny the
   * bot Speak in a voice channel.
   */
  setPermissionOverwrite(channelId: string, overwrite: APIOverwrite): void {
    this.#store.setOverwrite(channelId, overwrite);
  }

  /** Marks a guild channel age-restricted (Discord's `nsfw`) or not, as a moderator would: CHANNEL_UPDATE. Its threads follow it. */
  setChannelNsfw(channelId: string, nsfw: boolean): void {
    this.#store.setChannelNsfw(channelId, nsfw);
  }

  /**
   * Sets a role's permissions, as a moderator would in the server's settings: GUILD_ROLE_UPDATE.
   * The bot's managed role is `botRoleId` of {@link createGuild}'s answer (e.g. to grant it Manage Server).
   */
  setRolePermissions(guildId: string, roleId: string, permissions: bigint | string): APIRole {
    return this.#store.setRolePermissions(guildId, roleId, BigInt(permissions));
  }

  // ---- Auto Moderation, as a moderator sets it up ----

  /**
   * A moderator creates an Auto Moderation rule in the server's settings, with Create Auto
   * Moderation Rule's JSON params and Discord's checks and limits (a refusal throws Discord's
   * error): AUTO_MODERATION_RULE_CREATE to sessions with the AUTO_MODERATION_CONFIGURATION intent.
   * `by` (default the owner) must have Manage Server; it is the rule's `creator_id`.
   */
  createAutoModerationRule(guildId: string, input: RuleInput, options: { by?: string } = {}): APIAutoModerationRule {
    return this.#store.createAutoModerationRule(guildId, this.#moderator(guildId, options.by), input);
  }

  /** A moderator changes a rule (any of the create params but the trigger type): AUTO_MODERATION_RULE_UPDATE. */
  modifyAutoModerationRule(guildId: string, ruleId: string, input: RuleInput, options: { by?: string } = {}): APIAutoModerationRule {
    this.#moderator(guildId, options.by);
    return this.#store.modifyAutoModerationRule(guildId, ruleId, input);
  }

  /** A moderator deletes a rule: AUTO_MODERATION_RULE_DELETE. */
  deleteAutoModerationRule(guildId: string, ruleId: string, options: { by?: string } = {}): void {
    this.#moderator(guildId, options.by);
    this.#store.deleteAutoModerationRule(guildId, ruleId);
  }

  /** The guild's rules, as List Auto Moderation Rules answers them. */
  autoModerationRules(guildId: string): APIAutoModerationRule[] {
    return this.#store.listAutoModerationRules(guildId);
  }

  /** `userId` (default the owner) when they may manage the guild's rules; throws otherwise. */
  #moderator(guildId: string, userId: string | undefined): string {
    const guild = this.#store.guild(guildId);
    const actor = userId ?? guild.ownerId;
    if ((this.#store.basePermissions(guild, actor) & PermissionFlagsBits.ManageGuild) === 0n) {
      throw new Error(`user ${actor} lacks Manage Server in guild ${guildId}: only they manage Auto Moderation rules`);
    }
    return actor;
  }

  /** The DM channel between the bot and a user (created on first use). */
  dmChannel(userId: string): EmulatorChannel {
    return channelView(this.#store.dmChannel(userId));
  }

  /**
   * A member's permissions in a channel (roles, overwrites, Administrator and ownership
   * applied), as Discord computes them to decide which commands the member sees.
   */
  memberPermissions(channelId: string, userId: string): bigint {
    const channel = this.#store.channel(channelId);
    if (!channel.guildId) throw new Error(`channel ${channelId} is not in a guild`);
    return this.#store.channelPermissions(this.#store.guild(channel.guildId), channel, userId);
  }

  /** Commands the bot registered: global ones, or a guild's. */
  registeredCommands(guildId?: string): APIApplicationCommand[] {
    return structuredClone(this.#commands.list(guildId ?? null));
  }

  // ---- OAuth2 ----

  /** The OAuth2 client id: the application id, as on Discord. */
  get clientId(): string {
    return this.applicationId;
  }

  /** The OAuth2 client secret (DISCORD_CLIENT_SECRET); the option `oauth2.clientSecret` sets it. */
  get clientSecret(): string {
    return this.#clientSecret;
  }

  /** The registered OAuth2 redirects, in order. */
  get oauth2Redirects(): readonly string[] {
    return this.#oauth2.redirectUris;
  }

  /**
   * Replaces the registered OAuth2 redirects, as saving the developer portal's OAuth2 tab does;
   * the authorize page refuses any other redirect_uri. Each must be an absolute URL without a fragment.
   */
  setOAuth2Redirects(uris: readonly string[]): void {
    this.#oauth2.setRedirectUris(uris);
  }

  /** The authorizations users gave the app (and client credentials), the user's only when given; tokens are not shown. */
  oauth2Authorizations(userId?: string): OAuth2Authorization[] {
    return this.#oauth2.list(userId);
  }

  /**
   * A user on the authorize page for `authorizeUrl`, signed in as `userId`, presses Authorize (or
   * Cancel), with the page's checks; returns where the browser is sent (the redirect with `code`
   * and `state`, or with `error`). For tests and the playground that sign someone in without a
   * browser. Throws with the error page's message where the page would show one.
   */
  answerOAuth2Consent(authorizeUrl: string, userId: string, decision: 'approve' | 'cancel' = 'approve'): string {
    const user = this.#store.users.get(userId);
    if (!user || user.bot === true) throw new Error(`${userId} is not one of the emulator's users (bots cannot sign in)`);
    const check = this.#oauth2.checkAuthorize(new URL(authorizeUrl, this.webUrl).searchParams);
    if (check.kind === 'error-page') throw new Error(check.message);
    if (check.kind === 'error-redirect') return check.location;
    return decision === 'approve' ? this.#oauth2.approve(check.request, userId) : this.#oauth2.deny(check.request);
  }

  /**
   * Signs `userId` in to Discord's web, as the one person using this browser (the playground's
   * persona): the authorize page then shows them with Authorize and Cancel and no choice of user,
   * as Discord's does, and `prompt=none` skips it once they granted the scopes. `undefined` goes
   * back to the page's own choice of user (a select, remembered in a cookie).
   */
  signInWeb(userId: string | undefined): void {
    if (userId !== undefined) {
      const user = this.#store.users.get(userId);
      if (!user || user.bot === true) throw new Error(`${userId} is not one of the emulator's users (bots cannot sign in)`);
    }
    this.#webUserId = userId;
  }

  /** The user's client language: Discord's `locale` in their interactions and in `/users/@me` with an access token. */
  setUserLocale(userId: string, locale: Locale): void {
    this.#requireUser(userId);
    this.#store.userLocales.set(userId, locale);
  }

  /** The user removes the app under Settings, Authorized Apps: their tokens answer 401 and refresh fails from now on. */
  deauthorizeOAuth2(userId: string): number {
    return this.#oauth2.deauthorize(userId);
  }

  // ---- the gateway ----

  /** Resolves once a bot has identified and been sent its guilds. */
  waitForBotReady(timeoutMs = 10_000): Promise<void> {
    return waitUntil(this.#gateway.events, 'ready', () => (this.#gateway.readySessions > 0 ? true : undefined), timeoutMs, 'the bot to identify').then(
      () => undefined,
    );
  }

  /** Closes the bot's gateway connections with a resumable close code (4000); it should resume. */
  dropGatewayConnections(code: number = RESUMABLE_CLOSE_CODE): number {
    return this.#gateway.dropConnections(code);
  }

  /**
   * Takes the gateway down (false) or brings it back (true). While down, the bot's connections
   * are closed with 4000 and its reconnects refused, as in an outage at Discord or on the way
   * to it; sessions stay resumable.
   */
  setGatewayAvailable(available: boolean): void {
    this.#gateway.setAvailable(available);
  }

  /** Resolves on the next successful RESUME. */
  waitForResume(timeoutMs = 10_000): Promise<void> {
    const before = this.#gateway.stats.resumes;
    return waitUntil(this.#gateway.events, 'resumed', () => (this.#gateway.stats.resumes > before ? true : undefined), timeoutMs, 'a gateway RESUME').then(
      () => undefined,
    );
  }

  /** Sends opcode 1 so connected clients heartbeat at once. */
  requestHeartbeat(): void {
    this.#gateway.requestHeartbeat();
  }

  /** Resolves once the gateway has acknowledged `count` heartbeats in total. */
  waitForHeartbeats(count: number, timeoutMs = 10_000): Promise<void> {
    return waitUntil(this.#gateway.events, 'heartbeat', () => (this.#gateway.stats.heartbeatAcks >= count ? true : undefined), timeoutMs, `${count} heartbeats`).then(
      () => undefined,
    );
  }

  // ---- users acting ----

  /** A user runs a chat-input command; typed by the registered definition when there is one. */
  runCommand(input: RunCommandInput): InteractionHandle {
    return this.#interactions.runCommand({ ...input, ...this.#place(input) });
  }

  /** A user types into an autocompleted option; resolves with the choices the bot answered. */
  async autocomplete(input: AutocompleteInput): Promise<AutocompleteChoice[]> {
    return (await this.#interactions.autocomplete({ ...input, ...this.#place(input) })) as AutocompleteChoice[];
  }

  /** Fills omitted ids: the first guild, its first channel, its first added member (else its owner). */
  #place(input: InteractionPlace): { guildId: string; channelId: string; userId: string } {
    const guild = input.guildId ? this.#store.guild(input.guildId) : this.#store.guilds.values().next().value;
    if (!guild) throw new Error('the emulator has no guild yet; createGuild first');
    const channelId = input.channelId ?? guild.channelIds[0];
    if (!channelId) throw new Error(`guild ${guild.id} has no channel yet; createChannel first`);
    const userId =
      input.userId ??
      [...guild.members.keys()].find((id) => id !== guild.ownerId && id !== this.botUser.id) ??
      guild.ownerId;
    return { guildId: guild.id, channelId, userId };
  }

  clickButton(input: ClickButtonInput): InteractionHandle {
    return this.#interactions.clickButton(input);
  }

  /** A user picks one of the bot's message commands in the "Apps" menu of a message. */
  runMessageCommand(input: RunMessageCommandInput): InteractionHandle {
    return this.#interactions.runMessageCommand(input);
  }

  selectOption(input: SelectOptionInput): InteractionHandle {
    return this.#interactions.selectOption(input);
  }

  submitModal(input: SubmitModalInput): InteractionHandle {
    return this.#interactions.submitModal(input);
  }

  /**
   * Dispatches an interaction with `data` exactly as given, unchecked, for fuzzing the bot with
   * what Discord would never send (wrong option types, unknown custom ids, changed modal fields).
   * For what a member can do, use {@link runCommand}, {@link clickButton}, {@link selectOption}
   * and {@link submitModal}. Omitted ids default as in `runCommand`.
   */
  dispatchUnchecked(input: UncheckedInteractionInput): InteractionHandle {
    return this.#interactions.dispatchUnchecked({ ...input, ...this.#place(input) });
  }

  // ---- looking at messages ----

  /** Messages in a channel, oldest first (ephemeral ones only when asked). */
  channelMessages(channelId: string, options: { includeEphemeral?: boolean } = {}): EmulatorMessage[] {
    return this.#store.channelMessages(channelId, options.includeEphemeral ?? false).map((stored) => this.#store.publicMessage(stored));
  }

  /** Calls `listener` for every message the bot creates, edits or deletes; returns an unsubscribe function. */
  onMessage(listener: (message: EmulatorMessage, change: 'create' | 'update' | 'delete') => void): () => void {
    const onChange = (stored: StoredMessage, change: 'create' | 'update'): void => listener(this.#store.publicMessage(stored), change);
    const onDelete = (stored: StoredMessage): void => listener(this.#store.publicMessage(stored), 'delete');
    this.#store.events.on('message', onChange);
    this.#store.events.on('message-delete', onDelete);
    return () => {
      this.#store.events.off('message', onChange);
      this.#store.events.off('message-delete', onDelete);
    };
  }

  message(messageId: string): EmulatorMessage | undefined {
    const stored = this.#store.messages.get(messageId);
    return stored ? this.#store.publicMessage(stored) : undefined;
  }

  /** Puts back a (non-ephemeral) message kept from an earlier run; see the playground's history. */
  restoreMessage(message: EmulatorMessage): void {
    this.#store.restoreMessage(message);
  }

  /** Resolves with the first message in the channel (existing or new, edits included) that matches. */
  waitForMessage(
    channelId: string,
    predicate: (message: EmulatorMessage) => boolean = () => true,
    timeoutMs = DEFAULT_WAIT_MS,
  ): Promise<EmulatorMessage> {
    return waitUntil(
      this.#store.events,
      'message',
      () => this.channelMessages(channelId, { includeEphemeral: true }).find(predicate),
      timeoutMs,
      `a message in channel ${channelId}`,
    );
  }

  // ---- misbehaving like Discord ----

  /**
   * Answers the next `count` requests that match with 429 and rate-limit headers. A string
   * matches a path (`/channels/1/messages`), a template (`/channels/{channel_id}/messages`),
   * either prefixed by a method (`POST /channels/{channel_id}/messages`); a RegExp is tested
   * against `METHOD /path`.
   */
  rateLimitNext(matcher: RouteMatcher, count = 1, options: RateLimitOptions = {}): void {
    this.#rest.rateLimitNext(matcher, count, options);
  }

  /** Forgets recorded requests, findings and 429s (state, rate-limit windows included, stays). */
  clearRecords(): void {
    this.requests.length = 0;
    this.findings.length = 0;
    this.rateLimited.length = 0;
    this.entitlementDeliveries.length = 0;
    this.cdnRequests.length = 0;
    this.#store.monetization.records.length = 0;
  }

  // ---- voice ----

  /**
   * The voice gateway's certificate (self-signed, for 127.0.0.1 and localhost). A client trusts it
   * with `NODE_EXTRA_CA_CERTS=<this path>` in its environment at start (Node reads it once).
   */
  static readonly voiceCaPath = VOICE_CA_PATH;

  get voiceCaPath(): string {
    return VOICE_CA_PATH;
  }

  /** host:port of the voice gateway (what VOICE_SERVER_UPDATE's `endpoint` says). */
  get voiceEndpoint(): string {
    return this.#voiceServer.endpoint;
  }

  /** Voice gateway counters: connections, identifies, resumes, heartbeats. */
  get voiceStats(): Readonly<{ connections: number; identifies: number; resumes: number; heartbeats: number }> {
    return this.#voiceServer.stats;
  }

  /** Update Voice State requests (op 4) the emulator did not follow, and why; Discord answers none of them. */
  get voiceRefusals(): readonly VoiceRefusal[] {
    return this.#voice.refusals;
  }

  /**
   * A member joins a voice channel (or moves there, or mutes or deafens themselves):
   * VOICE_STATE_UPDATE to bots with GUILD_VOICE_STATES, and Clients Connect to the bot's voice
   * connection in that channel. With the bot's id: a moderator moves the bot (it must be in
   * voice already); it gets VOICE_STATE_UPDATE and a new VOICE_SERVER_UPDATE.
   */
  joinVoice(userId: string, channelId: string, options: { selfMute?: boolean; selfDeaf?: boolean } = {}): void {
    this.#voice.join(userId, channelId, options);
  }

  /**
   * A member leaves voice in the guild: VOICE_STATE_UPDATE with `channel_id: null`, Client
   * Disconnect. With the bot's id: a moderator disconnects the bot (its voice session closes with 4014).
   */
  leaveVoice(guildId: string, userId: string): void {
    this.#voice.leave(guildId, userId);
  }

  /** User ids in a voice channel, the bot included. */
  voiceMembers(channelId: string): string[] {
    return this.#voice.members(channelId);
  }

  /** The voice channel the user is in within the guild, or null. */
  voiceChannelOf(guildId: string, userId: string): string | null {
    return this.#store.guild(guildId).voiceStates.get(userId)?.channelId ?? null;
  }

  /** What the emulator heard of the bot in the guild since the last reset (counts, timing, loudness). */
  voiceReception(guildId: string): VoiceReception {
    return this.#voiceServer.reception(guildId).snapshot();
  }

  /** Forgets what was heard in the guild (the connection stays). */
  resetVoiceReception(guildId: string): void {
    this.#voiceServer.reception(guildId).reset();
  }

  /**
   * Calls `listener` with every 20 ms frame heard from the bot in the guild, decoded to 48 kHz
   * stereo interleaved 16-bit PCM (1920 samples); returns an unsubscribe function.
   */
  onVoiceAudio(guildId: string, listener: VoiceAudioListener): () => void {
    const reception = this.#voiceServer.reception(guildId);
    reception.listeners.add(listener);
    return () => reception.listeners.delete(listener);
  }

  /** Resolves, as the frame arrives, once the emulator has heard `frames` frames from the bot in the guild (since the last reset). */
  waitForVoiceFrames(guildId: string, frames = 1, timeoutMs = 10_000): Promise<VoiceReception> {
    const reception = this.#voiceServer.reception(guildId);
    if (reception.frames >= frames) return Promise.resolve(reception.snapshot());
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        reception.frameWatchers.delete(watcher);
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${frames} voice frames in guild ${guildId} (heard ${reception.frames})`));
      }, timeoutMs);
      const watcher = (count: number): void => {
        if (count < frames) return;
        clearTimeout(timer);
        reception.frameWatchers.delete(watcher);
        resolve(reception.snapshot());
      };
      reception.frameWatchers.add(watcher);
    });
  }

  /** The bot's `max_dave_protocol_version` from its last voice Identify in the guild (undefined: none yet). */
  voiceMaxDaveProtocolVersion(guildId: string): number | undefined {
    return this.#voiceServer.maxDaveProtocolVersion(guildId);
  }

  /**
   * The DAVE negotiation of the guild's voice connection (undefined when the session has no DAVE):
   * key packages received, welcomes sent, transitions, whether the listening member can open the
   * bot's frames, the voice privacy code.
   */
  voiceDave(guildId: string): Readonly<DaveState> | undefined {
    const state = this.#voiceServer.dave(guildId)?.state;
    return state ? { ...state } : undefined;
  }

  /** Closes the bot's voice WebSocket in the guild (4015 by default: the bot should resume); false when none is open. */
  dropVoiceConnection(guildId: string, code = 4015): boolean {
    return this.#voiceServer.drop(guildId, code);
  }

  /**
   * Whether a heard envelope is the reference's (durations within 5 %, envelopes correlated);
   * make the reference with {@link pcmEnvelope} from the file decoded to 48 kHz stereo s16le.
   */
  compareEnvelope(heard: readonly number[], reference: readonly number[], options?: Parameters<typeof compareEnvelope>[2]): EnvelopeComparison {
    return compareEnvelope(heard, reference, options);
  }

  async close(): Promise<void> {
    for (const timer of this.#lateDeliveries) clearTimeout(timer);
    this.#webhookEvents.close();
    await this.#voiceServer.close();
    this.#gateway.close();
    this.#app.server.closeAllConnections();
    await this.#app.close();
  }
}

/** One ENTITLEMENT_* event on its way: to the gateway sessions of its shard, one POST to the webhook events URL, or withheld (`delivery: 'never'`). */
export interface EntitlementDeliveryRecord {
  /** Emulator clock time (webhook POSTs: wall-clock time). */
  at: number;
  type: EntitlementEventType;
  entitlementId: string;
  via: 'gateway' | 'webhook' | 'withheld';
  /** Gateway: how many sessions it went to (0 when none was connected). */
  sessions?: number;
  /** Webhook: 1 for the first POST. */
  attempt?: number;
  /** Webhook: the endpoint's status, null when it did not answer within 3 s. */
  status?: number | null;
  ok?: boolean;
  /** Webhook: the last try (acknowledged, or given up). */
  final?: boolean;
}

interface ButtonLike {
  type?: unknown;
  style?: unknown;
  sku_id?: unknown;
  disabled?: unknown;
  components?: unknown;
  accessory?: unknown;
}

/** The premium button for the SKU among a message's components (action rows, containers, sections). */
function findPremiumButton(components: unknown, skuId: string): ButtonLike | undefined {
  if (!Array.isArray(components)) return undefined;
  for (const component of components as ButtonLike[]) {
    if (typeof component !== 'object' || component === null) continue;
    if (component.type === ComponentType.Button && component.style === ButtonStyle.Premium && component.sku_id === skuId) return component;
    const nested = findPremiumButton(component.components, skuId) ?? findPremiumButton(component.accessory ? [component.accessory] : [], skuId);
    if (nested) return nested;
  }
  return undefined;
}

function channelView(channel: StoredChannel): EmulatorChannel {
  return { id: channel.id, guildId: channel.guildId, name: channel.name, type: channel.type, parentId: channel.parentId, nsfw: channel.nsfw };
}

/**
 * Starts an emulated Discord on 127.0.0.1 (a free port unless `port` is given).
 * Point the bot at it with `DISCORD_API_URL = emulator.apiUrl` and `emulator.botToken`.
 */
export async function startDiscordEmulator(options: DiscordEmulatorOptions = {}): Promise<DiscordEmulator> {
  return new DiscordEmulator(options).listen(options.port ?? 0, options.host ?? '127.0.0.1');
}
