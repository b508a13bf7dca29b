/**
 * The discord.js client: the gateway with the Guilds intent (interactions need no other),
 * GuildVoiceStates (who is in which voice channel, and the voice connections) and
 * AutoModerationConfiguration (a server's AutoMod rules changed), in the shards SHARD_COUNT and SHARD_IDS name, REST pointed at `config.discordApiUrl`
 * (Discord, a proxy or the emulator), and the interaction router attached.
 */
import { once } from 'node:events';
import { REST } from '@discordjs/rest';
import { Client, Events, GatewayIntentBits, Options, Partials, type Entitlement, type GuildMember, type User, type WebSocketOptions } from 'discord.js';
import { Routes, type RESTGetAPIGatewayBotResult } from 'discord-api-types/v10';
import type { Command } from './command.js';
import type { Config } from '../config.js';
import { INTERACTION_REST } from '../discord-rest/discord-delivery.js';
import type { MakeRequest } from '../discord-rest/rest-requests.js';
import type { BaseCommandContext } from './context.js';
import { loggableError } from '../logger.js';
import { createInteractionRouter } from './router.js';
import { welcomeGuild } from './welcome.js';
import { entitlementNotice } from './entitlement-notice.js';

export interface GatewayOptions {
  /** The client's: its token, REST address and shards. */
  readonly config: Config;
  readonly context: BaseCommandContext;
  /** The slash commands to route: the entry points hand over `commands/`. */
  readonly commands: readonly Command[];
  /** When each shard may identify: the deployment's shared queue (identify-throttler.ts). @defaultValue discord.js's, for this process alone */
  readonly buildIdentifyThrottler?: WebSocketOptions['buildIdentifyThrottler'];
  /** False with `INTERACTIONS=http`: they arrive at /interactions, and the gateway is kept for guild joins and voice. @defaultValue true */
  readonly routeInteractions?: boolean;
  /** How its REST requests are sent: through the deployment's shared budget, counted (src/discord-rest/rest-requests.ts). */
  readonly makeRequest?: MakeRequest;
  /** Told of every AutoMod rule created, changed or deleted, by guild: every process must read that guild's rules again. */
  readonly onAutomodRuleChange?: (guildId: string) => Promise<void>;
}

export interface Gateway {
  /** Logged in and connecting; its shards identify in turn, so it may be far from ready. */
  readonly client: Client;
  /**
   * Every shard of this process ready (discord.js's ClientReady), however long identifying
   * takes; rejects if the gateway stops or fails first.
   */
  readonly ready: Promise<Client<true>>;
  stop(): Promise<void>;
}

/** Which shards this process runs, and of how many: every shard of Discord's recommended count unless told. */
export type ShardPlan = { readonly shards: 'auto' } | { readonly shards: readonly number[]; readonly shardCount: number };

/**
 * SHARD_COUNT and SHARD_IDS as discord.js takes them. Neither set: `auto` (discord.js asks
 * GET /gateway/bot). Ids without a count: the recommended count, asked here. discord.js's
 * gateway (@discordjs/ws) identifies the shards within `session_start_limit.max_concurrency`.
 */
export async function shardPlan(config: Pick<Config, 'shardCount' | 'shardIds' | 'discordApiUrl' | 'discordToken'>): Promise<ShardPlan> {
  if (config.shardCount === undefined && config.shardIds === undefined) return { shards: 'auto' };
  const shardCount =
    config.shardCount ??
    ((await new REST({ api: config.discordApiUrl }).setToken(config.discordToken).get(Routes.gatewayBot())) as RESTGetAPIGatewayBotResult).shards;
  const shards = config.shardIds ?? Array.from({ length: shardCount }, (_, id) => id);
  const beyond = shards.filter((id) => id >= shardCount);
  if (beyond.length > 0) throw new Error(`SHARD_IDS ${beyond.join(', ')} are not below the shard count, ${shardCount} (Discord's recommendation)`);
  return { shards, shardCount };
}

/** Users and members kept in memory at most, each: the most recent, enough for any handler. */
export const CACHED_PEOPLE_LIMIT = 10_000;

/**
 * What discord.js keeps: users and members bounded (the bot's own always kept), since
 * discord.js never empties those caches and every interaction adds to them; no messages.
 * Handlers read the member from the interaction itself, so nothing is lost.
 */
export const CACHE_LIMITS = {
  makeCache: Options.cacheWithLimits({
    ...Options.DefaultMakeCacheSettings,
    MessageManager: 0,
    UserManager: { maxSize: CACHED_PEOPLE_LIMIT, keepOverLimit: (user: User) => user.id === user.client.user?.id },
    GuildMemberManager: { maxSize: CACHED_PEOPLE_LIMIT, keepOverLimit: (member: GuildMember) => member.id === member.client.user?.id },
  }),
};

/** A client configured as the bot runs it, not yet logged in; `makeRequest` puts its channel posts under the shared budget. */
export function createDiscordClient(config: Config, plan: ShardPlan = { shards: 'auto' }, makeRequest?: MakeRequest, ws: Pick<WebSocketOptions, 'buildIdentifyThrottler'> = {}): Client {
  return new Client({
    ...(plan.shards === 'auto' ? { shards: 'auto' } : { shards: [...plan.shards], shardCount: plan.shardCount }),
    intents: [GatewayIntentBits.Guilds, GatewayIntentBits.GuildVoiceStates, GatewayIntentBits.AutoModerationConfiguration],
    // An interaction carries its channel (for a thread: its type and parent). With this partial,
    // discord.js builds the channel from that when it is not cached (a private thread the bot was
    // never added to), so `interaction.channel` tells a thread of an allowed channel apart.
    partials: [Partials.Channel],
    // Its REST calls are mostly the interactions' answers, outside the global limit; the others
    // (welcomes, now-playing) take their permits from the shared budget in `makeRequest`.
    rest: { api: config.discordApiUrl, ...INTERACTION_REST, ...(makeRequest && { makeRequest }) },
    allowedMentions: { parse: [] },
    ...(ws.buildIdentifyThrottler && { ws: { buildIdentifyThrottler: ws.buildIdentifyThrottler } }),
    ...CACHE_LIMITS,
  });
}

/**
 * Attaches the router, logs in and resolves once the shards are connecting: Discord has given
 * the gateway and the session limit allows them, so what is left is each shard's turn to
 * identify. `ready` tells when they all are. A bad token or no sessions left rejects here.
 */
export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  const { context, config } = options;
  const { logger } = context;
  const plan = await shardPlan(config);
  // Connecting: the first shard asks for its turn to identify (or one is already ready or resumed).
  let connected!: () => void;
  const connecting = new Promise<void>((resolve) => (connected = resolve));
  const buildThrottler = options.buildIdentifyThrottler;
  const client = createDiscordClient(config, plan, options.makeRequest, {
    ...(buildThrottler && {
      buildIdentifyThrottler: (manager) => {
        connected();
        return buildThrottler(manager);
      },
    }),
  });
  const route = createInteractionRouter(context, options.commands);

  if (options.routeInteractions !== false) {
    client.on(Events.InteractionCreate, (interaction) => {
      void route(interaction);
    });
  }
  // An 'error' event without a listener would crash the process.
  client.on(Events.Error, (error) => logger.error({ err: loggableError(error) }, 'discord client error'));
  client.on(Events.Warn, (message) => logger.warn({ message }, 'discord client warning'));
  // Emitted for guilds the bot joins while connected, not for those it was already in.
  client.on(Events.GuildCreate, (guild) => {
    void welcomeGuild(guild, context);
  });
  // Purchases (no intent needed): each is confirmed through REST before anything moves.
  const { purchases } = context;
  if (purchases) {
    const receive = (entitlement: Entitlement, what: string) => {
      void purchases.receive(entitlementNotice(entitlement), 'gateway').catch((err: unknown) => logger.error({ err, entitlementId: entitlement.id, event: what }, 'entitlement event failed'));
    };
    client.on(Events.EntitlementCreate, (entitlement) => receive(entitlement, 'create'));
    client.on(Events.EntitlementUpdate, (_old, entitlement) => receive(entitlement, 'update'));
    client.on(Events.EntitlementDelete, (entitlement) => receive(entitlement, 'delete'));
  }
  const { onAutomodRuleChange } = options;
  if (onAutomodRuleChange) {
    const changed = (guildId: string, what: string) => {
      void onAutomodRuleChange(guildId).catch((err: unknown) => logger.error({ err, guildId, event: what }, 'AutoMod rule event failed'));
    };
    client.on(Events.AutoModerationRuleCreate, (rule) => changed(rule.guild.id, 'create'));
    client.on(Events.AutoModerationRuleUpdate, (_old, rule) => changed(rule.guild.id, 'update'));
    client.on(Events.AutoModerationRuleDelete, (rule) => changed(rule.guild.id, 'delete'));
  }
  client.on(Events.ShardDisconnect, (_event, shardId) => logger.warn({ shardId }, 'gateway disconnected'));
  client.on(Events.ShardReady, (shardId) => logger.info({ shardId }, 'shard ready'));
  for (const event of [Events.ShardReady, Events.ShardResume, Events.ShardReconnecting] as const) client.once(event, () => connected());

  const stopping = new AbortController();
  const ready = once(client, Events.ClientReady, { signal: stopping.signal }).then(() => client as Client<true>);
  // Whoever waits on it handles it; nobody waiting is no reason for an unhandled rejection.
  ready.catch(() => {});
  const login = client.login(config.discordToken);
  try {
    await Promise.race([login, connecting]);
  } catch (error) {
    stopping.abort(error);
    await client.destroy();
    throw error;
  }
  // After connecting, login settles once every shard is ready; a failure now leaves the client destroyed.
  login.catch((error: unknown) => {
    logger.error({ err: loggableError(error) }, 'gateway failed');
    stopping.abort(error);
  });
  logger.info({ shards: client.options.shards, shardCount: client.options.shardCount }, 'gateway connecting');

  return {
    client,
    ready,
    async stop() {
      stopping.abort(new Error('the gateway stopped before it was ready'));
      client.removeAllListeners(Events.InteractionCreate);
      await client.destroy();
    },
  };
}
