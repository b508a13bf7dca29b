/**
 * The only reader of the environment. Everything the bot can be told from outside is parsed
 * here, once, by one zod schema, into a frozen object that the composition root passes on.
 */
import { existsSync, readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { z } from 'zod';
import { MAX_WEBHOOK_URL_LENGTH, SPEC_MODELS } from './music-api-spec.js';
import { MAX_PUBLIC_URL_LENGTH, WEBHOOK_ROUTE_PREFIX, webhookUrlFor } from './webhook-address.js';

/** The spec's `mv` values: the default of MUSIC_MODELS. */
export const SPEC_MODEL_LIST = SPEC_MODELS;

export const ROLES = ['all', 'gateway', 'worker', 'http'] as const;
export type Role = (typeof ROLES)[number];

/** How Discord brings interactions: over the gateway, or POSTed to the http role's `/interactions`. */
export const INTERACTION_MODES = ['gateway', 'http'] as const;
export type InteractionMode = (typeof INTERACTION_MODES)[number];

/** What a request meets when the moderation service cannot answer: refused, or allowed with a warning. */
export const MODERATION_WHEN_DOWN = ['refuse', 'allow'] as const;
export type ModerationWhenDown = (typeof MODERATION_WHEN_DOWN)[number];

/** Groups of variables that only some entry points need (migrations need no bot token). */
export type ConfigPart = 'discord' | 'musicApi';

/** http://localhost, 127.x.x.x or [::1]: where a local simulator may call plain-HTTP webhooks. */
const LOOPBACK_HTTP = /^http:\/\/(localhost|127(\.\d{1,3}){3}|\[::1\])(:\d+)?(\/|$)/;

const snowflake = z.string().regex(/^\d{17,20}$/, 'a Discord id (17 to 20 digits)');

const httpUrl = z
  .string()
  .url('an absolute URL such as https://example.com')
  .refine((value) => /^https?:\/\//.test(value), 'an http:// or https:// URL')
  .transform((value) => value.replace(/\/+$/, ''));

const postgresUrl = z
  .string()
  .refine((value) => /^postgres(ql)?:\/\//.test(value), 'a postgres:// connection URL');

/** A Redis server, a sentinel or a cluster node. */
export interface RedisNode {
  readonly host: string;
  readonly port: number;
}

/**
 * Where the bot's Redis is: one server; a primary that sentinels watch and replace when it
 * fails; or a cluster, reached through any of its nodes. Passwords are secrets: never logged.
 */
export type RedisTarget =
  | { readonly mode: 'single'; readonly url: string; readonly password?: string | undefined }
  | {
      readonly mode: 'sentinel';
      readonly sentinels: readonly RedisNode[];
      /** The primary's name in the sentinels' `sentinel monitor <name> …`. */
      readonly name: string;
      readonly db: number;
      readonly username?: string | undefined;
      readonly password?: string | undefined;
      readonly sentinelPassword?: string | undefined;
    }
  | { readonly mode: 'cluster'; readonly nodes: readonly RedisNode[]; readonly username?: string | undefined; readonly password?: string | undefined };

const HOST_PORT = /^(\[[0-9A-Fa-f:.]+\]|[^\s:,/@[\]]+):(\d{1,5})$/;

function redisNode(value: string): RedisNode | undefined {
  const match = HOST_PORT.exec(value.trim());
  const port = Number(match?.[2]);
  if (!match || port < 1 || port > 65_535) return undefined;
  return { host: match[1]!.replace(/^\[(.*)\]$/, '$1'), port };
}

interface NodesUrl {
  readonly mode: 'sentinel' | 'cluster';
  readonly nodes: RedisNode[];
  readonly name: string | undefined;
  readonly db: number;
  readonly username: string | undefined;
  readonly password: string | undefined;
  readonly sentinelPassword: string | undefined;
}

/**
 * `redis+sentinel://[[user]:password@]host:port,…/<name>[/<db>][?sentinelPassword=…]` or
 * `redis+cluster://[[user]:password@]host:port,…`; undefined when it is neither.
 */
function parseNodesUrl(value: string): NodesUrl | undefined {
  const match = /^redis\+(sentinel|cluster):\/\/(?:([^:@/]*)(?::([^@/]*))?@)?([^/?#@]+)(?:\/([^/?#]+))?(?:\/(\d+))?\/?(?:\?([^#]*))?$/.exec(value);
  if (!match) return undefined;
  const [, mode, username, password, hosts, name, db, query] = match;
  const nodes = hosts!.split(',').map(redisNode);
  if (nodes.some((node) => node === undefined)) return undefined;
  if ((mode === 'sentinel') !== (name !== undefined) || (mode === 'cluster' && db !== undefined)) return undefined;
  try {
    const decode = (part: string | undefined) => (part === undefined || part === '' ? undefined : decodeURIComponent(part));
    const sentinelPassword = new URLSearchParams(query ?? '').get('sentinelPassword') ?? undefined;
    return { mode: mode as NodesUrl['mode'], nodes: nodes as RedisNode[], name: decode(name), db: Number(db ?? 0), username: decode(username), password: decode(password), sentinelPassword };
  } catch {
    return undefined;
  }
}

const redisUrl = z
  .string()
  .refine((value) => /^(rediss?|redis\+sentinel|redis\+cluster):\/\//.test(value), 'a redis:// connection URL (redis+sentinel:// or redis+cluster:// for sentinels or a cluster)')
  .refine(
    (value) => !value.startsWith('redis+') || parseNodesUrl(value) !== undefined,
    'redis+sentinel://[[user]:password@]host:port,…/<primary name>[/<db>] or redis+cluster://[[user]:password@]host:port,…',
  );

/** `host:port,host:port`: sentinels, or a cluster's nodes. */
const redisNodes = (example: string) =>
  commaList
    .refine((items) => items.length > 0 && items.every((item) => redisNode(item) !== undefined), `a list of host:port such as ${example}`)
    .transform((items) => items.map((item) => redisNode(item)!));

/**
 * Whether `prefix` carries a Redis hash tag (`{…}`, not empty): a cluster then keeps every key
 * that starts with it in one slot, as BullMQ's scripts and the bot's transactions need.
 */
export function hasHashTag(prefix: string): boolean {
  return /\{[^{}]+\}/.test(prefix);
}

const positiveInt = (fallback: number) => z.coerce.number().int('a whole number').positive('a number above 0').default(fallback);
const nonNegativeInt = (fallback: number) => z.coerce.number().int('a whole number').min(0, 'a number of 0 or more').default(fallback);

const booleanFlag = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0', 'yes', 'no'], { error: 'true or false' })
    .default(fallback ? 'true' : 'false')
    .transform((value) => value === 'true' || value === '1' || value === 'yes');

const commaList = z
  .string()
  .transform((value) => value.split(',').map((item) => item.trim()).filter((item) => item.length > 0));

/**
 * Shard ids: `0,1`, `0-3` or both (`0-3,7`); sorted, each once. A range runs from its first
 * to its last id, both included.
 */
const shardIdList = z
  .string()
  .regex(/^\s*\d+(\s*-\s*\d+)?(\s*,\s*\d+(\s*-\s*\d+)?)*\s*$/, 'shard ids such as 0,1 or 0-3')
  .transform((value) => {
    const ids = new Set<number>();
    for (const part of value.split(',')) {
      const [first, last = first] = part.split('-').map((bound) => Number(bound.trim()));
      for (let id = first!; id <= last!; id += 1) ids.add(id);
    }
    return [...ids].sort((a, b) => a - b);
  })
  .refine((ids) => ids.length > 0, 'shard ids such as 0,1 or 0-3 (a range from low to high)');

const blankToUndefined = (value: unknown) => (typeof value === 'string' && value.trim() === '' ? undefined : value);

/** `<sku_id>:<credits>,…`: SKU ids of the developer portal, each with a whole number of credits. */
function skuCredits(name: string) {
  return z
    .string()
    .regex(/^\s*\d{17,20}\s*:\s*\d+\s*(,\s*\d{17,20}\s*:\s*\d+\s*)*,?\s*$/, `a list such as 1234567890123456789:100,… (a SKU id from the developer portal, a colon, its credits)`)
    .transform((value) =>
      value
        .split(',')
        .filter((pair) => pair.trim() !== '')
        .map((pair) => {
          const [skuId, credits] = pair.split(':');
          return { skuId: skuId!.trim(), credits: Number(credits) };
        }),
    )
    .refine((list) => list.every((entry) => entry.credits > 0), `credits above 0 for every SKU of ${name}`)
    .refine((list) => new Set(list.map((entry) => entry.skuId)).size === list.length, 'each SKU once');
}

function optional<T extends z.ZodType>(schema: T) {
  return z.preprocess(blankToUndefined, schema.optional());
}

function defaulted<T extends z.ZodType>(schema: T) {
  return z.preprocess(blankToUndefined, schema);
}

const envSchema = z.object({
  DISCORD_TOKEN: optional(z.string().min(20, 'the bot token from the Discord developer portal')),
  DISCORD_APPLICATION_ID: optional(snowflake),
  DISCORD_API_URL: defaulted(httpUrl.default('https://discord.com/api')),
  DISCORD_REST_REQUESTS_PER_SECOND: defaulted(positiveInt(45)),
  DISCORD_CDN_URLS: defaulted(
    commaList
      .pipe(z.array(httpUrl).min(1, 'at least one address'))
      .default(['https://cdn.discordapp.com', 'https://media.discordapp.net']),
  ),
  DISCORD_DEV_GUILD_ID: optional(snowflake),
  DISCORD_CLIENT_SECRET: optional(z.string().regex(/^[\x21-\x7e]{16,}$/, "the application's client secret from the developer portal's OAuth2 page")),
  DISCORD_WEB_URL: defaulted(httpUrl.default('https://discord.com')),
  DASHBOARD_SESSION_HOURS: defaulted(z.coerce.number().int('a whole number').min(1, 'at least 1').max(168, 'at most 168 (a week)').default(12)),
  DASHBOARD_ACCESS_MAX_AGE_SECONDS: defaulted(z.coerce.number().int('a whole number').min(0, 'a number of 0 or more').max(60, 'at most 60: a moderator whose role is taken loses access within a minute').default(60)),
  INTERACTIONS: defaulted(z.enum(INTERACTION_MODES, { error: `one of ${INTERACTION_MODES.join(', ')}` }).default('gateway')),
  DISCORD_PUBLIC_KEY: optional(
    z
      .string()
      .trim()
      .regex(/^[0-9a-fA-F]{64}$/, "the application's public key from the developer portal (64 hexadecimal characters)")
      .transform((value) => value.toLowerCase()),
  ),
  BOT_OWNER_IDS: defaulted(
    commaList
      .pipe(z.array(snowflake))
      .default([]),
  ),

  MUSIC_API_URL: optional(httpUrl),
  MUSIC_API_KEY: optional(z.string().min(1, 'the API key of the music service')),
  // Unset: the spec's list (see musicModelsFromSpec).
  MUSIC_MODELS: optional(commaList.pipe(z.array(z.string()).min(1, 'at least one model name'))),
  MUSIC_API_TIMEOUT_MS: defaulted(positiveInt(30_000)),
  PERSONA_SONG_COST: defaulted(positiveInt(10)),

  MODERATION_URL: optional(httpUrl),
  MODERATION_API_KEY: optional(z.string().min(1, 'the API key of the moderation service')),
  MODERATION_TIMEOUT_MS: defaulted(positiveInt(2_000)),
  MODERATION_WHEN_DOWN: defaulted(z.enum(MODERATION_WHEN_DOWN, { error: `one of ${MODERATION_WHEN_DOWN.join(', ')}` }).default('refuse')),

  DATABASE_URL: optional(postgresUrl),
  DATABASE_POOL_SIZE: defaulted(z.coerce.number().int('a whole number').min(1, 'a number above 0').max(500, 'at most 500').default(20)),
  MIGRATE_ON_START: defaulted(booleanFlag(true)),
  DATABASE_STATEMENT_TIMEOUT_MS: defaulted(nonNegativeInt(60_000)),
  DATABASE_CONNECT_TIMEOUT_MS: defaulted(nonNegativeInt(5_000)),
  MIGRATION_LOCK_TIMEOUT_MS: defaulted(nonNegativeInt(10_000)),
  WEBHOOK_EVENTS_RETENTION_DAYS: defaulted(positiveInt(7)),
  MODERATION_RETENTION_DAYS: defaulted(positiveInt(90)),
  REDIS_URL: optional(redisUrl),
  REDIS_SENTINELS: optional(redisNodes('10.0.0.1:26379,10.0.0.2:26379,10.0.0.3:26379')),
  REDIS_SENTINEL_NAME: optional(z.string().regex(/^[\x21-\x7e]{1,128}$/, 'the name the sentinels know the primary by (their sentinel monitor <name>), such as mymaster')),
  REDIS_SENTINEL_PASSWORD: optional(z.string().min(1, 'the password of the sentinels')),
  REDIS_CLUSTER_NODES: optional(redisNodes('10.0.0.1:6379,10.0.0.2:6379,10.0.0.3:6379')),
  REDIS_PASSWORD: optional(z.string().min(1, 'the password of the Redis servers')),
  DATA_DIR: defaulted(z.string().min(1).default('./data')),
  PUBLIC_URL: optional(
    httpUrl.refine(
      (value) => value.startsWith('https://') || LOOPBACK_HTTP.test(value),
      'an https:// URL (the music service only calls HTTPS webhooks; plain http only to a loopback address for local runs)',
    ),
  ),
  HTTP_PORT: defaulted(z.coerce.number().int('a whole number').min(0).max(65_535, 'a port from 0 to 65535').default(8080)),
  METRICS_PORT: optional(z.coerce.number().int('a whole number').min(0).max(65_535, 'a port from 0 to 65535')),
  METRICS_HOST: defaulted(z.string().min(1, 'an address to listen on, such as 127.0.0.1').default('0.0.0.0')),
  METRICS_TOKEN: optional(
    z.string().regex(/^[\x21-\x7e]{16,}$/, 'a secret of at least 16 printable characters without spaces, such as the output of openssl rand -hex 32'),
  ),
  LOG_LEVEL: defaulted(
    z
      .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
        error: 'one of fatal, error, warn, info, debug, trace, silent',
      })
      .default('info'),
  ),
  QUEUE_PREFIX: defaulted(
    z
      .string()
      .regex(/^(?=.{1,64}$)[A-Za-z0-9_-]*(\{[A-Za-z0-9_-]+\})?[A-Za-z0-9_-]*$/, 'letters, digits, _ or - (at most 64), with at most one hash tag in braces such as {musicbot}')
      .default('musicbot'),
  ),
  ROLE: defaulted(z.enum(ROLES, { error: `one of ${ROLES.join(', ')}` }).default('all')),
  WORKERS_IN_THREAD: defaulted(booleanFlag(false)),
  SHARD_COUNT: optional(z.coerce.number().int('a whole number').positive('a number above 0')),
  SHARD_IDS: optional(shardIdList),
  GATEWAY_REPLICAS: optional(z.coerce.number().int('a whole number').positive('a number above 0')),
  GATEWAY_ORDINAL: optional(z.string().trim().regex(/^\d+$/, "this replica's index from 0, such as a StatefulSet pod's apps.kubernetes.io/pod-index").transform(Number)),
  GATEWAY_READY_GRACE_MS: defaulted(nonNegativeInt(60_000)),
  GATEWAY_IDENTIFY_WINDOW_MS: defaulted(z.coerce.number().int('a whole number').min(1_000, 'at least 1000').default(5_000)),
  GATEWAY_HEARTBEAT_MS: defaulted(z.coerce.number().int('a whole number').min(1_000, 'at least 1000').default(10_000)),
  SHUTDOWN_LIMIT_MS: defaulted(z.coerce.number().int('a whole number').min(5_000, 'at least 5000').max(600_000, 'at most 600000').default(30_000)),
  SHUTDOWN_DRAIN_MS: defaulted(
    z.coerce.number().int('a whole number').min(0, 'a number of 0 or more').max(20_000, 'at most 20000').default(5_000),
  ),
  LIVEZ_STALL_MS: defaulted(positiveInt(5_000)),
  ANSWER_BUDGET_MS: defaulted(
    z.coerce.number().int('a whole number').min(0, 'a number of 0 or more').max(2_500, 'at most 2500: Discord waits 3 seconds').default(1_500),
  ),

  QUEUE_LOCK_MS: defaulted(z.coerce.number().int('a whole number').min(5_000, 'at least 5000: a busy worker renews its locks every half of it').default(30_000)),
  UPSTREAM_MAX_IN_FLIGHT: defaulted(positiveInt(10)),
  SUBMIT_CONCURRENCY: defaulted(positiveInt(50)),
  POLL_DEADLINE_MINUTES: defaulted(positiveInt(30)),
  POLL_MAX_PER_SECOND: defaulted(positiveInt(20)),
  POLL_INTERVAL_MIN_MS: defaulted(positiveInt(5_000)),
  POLL_INTERVAL_MAX_MS: defaulted(positiveInt(60_000)),
  EXPECTED_SECONDS: defaulted(
    z
      .string()
      .regex(
        /^\s*[a-z_]+\s*=\s*\d+(\.\d+)?\s*(,\s*[a-z_]+\s*=\s*\d+(\.\d+)?\s*)*$/,
        'a list such as song=60,voice=120 (kinds: song, lyrics, video, upload, download, voice, persona_song)',
      )
      .transform((value) =>
        Object.fromEntries(
          value.split(',').map((pair) => {
            const [kind, seconds] = pair.split('=');
            return [kind!.trim(), Number(seconds)];
          }),
        ),
      )
      .pipe(z.partialRecord(z.enum(['song', 'lyrics', 'video', 'upload', 'download', 'voice', 'persona_song']), z.number()))
      .optional(),
  ),
  ATTACH_AUDIO: defaulted(booleanFlag(true)),
  STARTING_CREDITS: defaulted(nonNegativeInt(0)),
  ACCOUNT_LOW_CREDITS: defaulted(nonNegativeInt(0)),
  ACCOUNT_ALERT_CHANNEL_ID: optional(snowflake),
  FFMPEG_PATH: defaulted(z.string().min(1, 'the path of the ffmpeg binary').default('ffmpeg')),
  VOICE_IDLE_SECONDS: defaulted(positiveInt(120)),
  VOICE_LEASE_MS: defaulted(z.coerce.number().int('a whole number').min(3_000, 'at least 3000: it is renewed every third of it, at most once a second').default(15_000)),
  VOICE_THREADS: defaulted(z.coerce.number().int('a whole number').min(1, 'at least 1').max(16, 'at most 16').default(2)),
  CREDIT_PACKS: optional(skuCredits('CREDIT_PACKS')),
  SUBSCRIPTION_ALLOWANCES: optional(skuCredits('SUBSCRIPTION_ALLOWANCES')),
  PACK_CLAIM_MINUTES: defaulted(nonNegativeInt(10)),
  ENTITLEMENT_CHECK_SECONDS: defaulted(positiveInt(3_600)),
  NOTIFY_AFTER_SECONDS: defaulted(nonNegativeInt(60)),
  CONTEST_DAY_SECONDS: defaulted(positiveInt(86_400)),
  CHART_POST_CHECK_SECONDS: defaulted(positiveInt(60)),
});

type Env = z.infer<typeof envSchema>;

function redisTargetOf(e: Env): RedisTarget | undefined {
  const url = e.REDIS_URL === undefined ? undefined : parseNodesUrl(e.REDIS_URL);
  const password = url?.password ?? e.REDIS_PASSWORD;
  if (url?.mode === 'sentinel') {
    const sentinelPassword = url.sentinelPassword ?? e.REDIS_SENTINEL_PASSWORD;
    return { mode: 'sentinel', sentinels: url.nodes, name: url.name!, db: url.db, username: url.username, password, sentinelPassword };
  }
  if (url?.mode === 'cluster') return { mode: 'cluster', nodes: url.nodes, username: url.username, password };
  if (e.REDIS_URL !== undefined) return { mode: 'single', url: e.REDIS_URL, password: e.REDIS_PASSWORD };
  if (e.REDIS_SENTINELS !== undefined) {
    return { mode: 'sentinel', sentinels: e.REDIS_SENTINELS, name: e.REDIS_SENTINEL_NAME ?? '', db: 0, password, sentinelPassword: e.REDIS_SENTINEL_PASSWORD };
  }
  if (e.REDIS_CLUSTER_NODES !== undefined) return { mode: 'cluster', nodes: e.REDIS_CLUSTER_NODES, password };
  return undefined;
}

/**
 * The shards of gateway replica `ordinal` of `replicas`: one contiguous range each, as even as
 * whole shards allow (the first `shardCount % replicas` replicas hold one more), together
 * covering 0..shardCount-1 exactly once.
 */
export function shardIdsForOrdinal(shardCount: number, replicas: number, ordinal: number): number[] {
  if (!Number.isInteger(replicas) || replicas < 1 || replicas > shardCount) throw new RangeError(`replicas must be from 1 to the shard count (${shardCount}), not ${replicas}`);
  if (!Number.isInteger(ordinal) || ordinal < 0 || ordinal >= replicas) throw new RangeError(`ordinal must be from 0 to ${replicas - 1}, not ${ordinal}`);
  const size = Math.floor(shardCount / replicas);
  const larger = shardCount % replicas;
  const first = ordinal * size + Math.min(ordinal, larger);
  return Array.from({ length: size + (ordinal < larger ? 1 : 0) }, (_, index) => first + index);
}

/** SHARD_IDS, or the range of GATEWAY_ORDINAL; loadConfig refuses the combinations this cannot read. */
function shardIdsOf(e: Env): number[] | undefined {
  if (e.SHARD_IDS !== undefined) return [...e.SHARD_IDS];
  const { SHARD_COUNT: count, GATEWAY_REPLICAS: replicas, GATEWAY_ORDINAL: ordinal } = e;
  if (count === undefined || replicas === undefined || ordinal === undefined || replicas > count || ordinal >= replicas) return undefined;
  return shardIdsForOrdinal(count, replicas, ordinal);
}

const freezeShardIds = (ids: number[] | undefined): readonly number[] | undefined => (ids === undefined ? undefined : Object.freeze(ids));

/** The environment, camel-cased and frozen: what the composition root passes on. */
const configSchema = envSchema.superRefine(checkAcrossVariables, { when: (payload) => payload.issues.length === 0 }).transform((e) =>
  Object.freeze({
    discordToken: e.DISCORD_TOKEN ?? '',
    discordApplicationId: e.DISCORD_APPLICATION_ID ?? '',
    discordApiUrl: e.DISCORD_API_URL,
    /** REST requests under Discord's global limit that all processes together send in any second. */
    discordRestRequestsPerSecond: e.DISCORD_REST_REQUESTS_PER_SECOND,
    /** Where Discord keeps attachments: the only addresses a member's attachment is downloaded from. */
    discordCdnUrls: Object.freeze([...e.DISCORD_CDN_URLS]),
    discordDevGuildId: e.DISCORD_DEV_GUILD_ID,
    /** `http`: Discord POSTs interactions to the http role's /interactions, and no process routes them from the gateway. */
    interactions: e.INTERACTIONS,
    /** The application's Ed25519 public key, hex: what /interactions checks each request's signature with. */
    discordPublicKey: e.DISCORD_PUBLIC_KEY,
    botOwnerIds: Object.freeze([...e.BOT_OWNER_IDS]),
    /**
     * The moderators' dashboard at PUBLIC_URL/dashboard (src/dashboard): set when both
     * DISCORD_CLIENT_SECRET and PUBLIC_URL are; undefined: not served.
     */
    dashboard:
      e.DISCORD_CLIENT_SECRET === undefined || e.PUBLIC_URL === undefined
        ? undefined
        : Object.freeze({
            publicUrl: e.PUBLIC_URL,
            clientId: e.DISCORD_APPLICATION_ID ?? '',
            clientSecret: e.DISCORD_CLIENT_SECRET,
            webUrl: e.DISCORD_WEB_URL,
            sessionHours: e.DASHBOARD_SESSION_HOURS,
            accessMaxAgeMs: e.DASHBOARD_ACCESS_MAX_AGE_SECONDS * 1000,
          }),
    musicApiUrl: e.MUSIC_API_URL ?? '',
    musicApiKey: e.MUSIC_API_KEY ?? '',
    musicModels: Object.freeze([...(e.MUSIC_MODELS ?? SPEC_MODEL_LIST)]),
    /** MUSIC_MODELS was not set: the models offered are the spec's placeholder names (see `modelListNotice`). */
    musicModelsFromSpec: e.MUSIC_MODELS === undefined,
    musicApiTimeoutMs: e.MUSIC_API_TIMEOUT_MS,
    personaSongCost: e.PERSONA_SONG_COST,
    /** The text classifier every request's texts go to before anything is reserved; undefined: none (src/safety/moderation-service.ts). */
    moderation:
      e.MODERATION_URL === undefined
        ? undefined
        : Object.freeze({ url: e.MODERATION_URL, apiKey: e.MODERATION_API_KEY, timeoutMs: e.MODERATION_TIMEOUT_MS, whenDown: e.MODERATION_WHEN_DOWN }),
    databaseUrl: e.DATABASE_URL,
    /** Postgres connections of each pool: the front's, and the workers' where a process runs both. */
    databasePoolSize: e.DATABASE_POOL_SIZE,
    /** Apply the committed migrations at start; off where a one-shot `npm run db:migrate` does it. */
    migrateOnStart: e.MIGRATE_ON_START,
    /** Postgres's `statement_timeout` on every pooled connection; 0: none. */
    databaseStatementTimeoutMs: e.DATABASE_STATEMENT_TIMEOUT_MS,
    /** How long opening one Postgres connection may take; 0: no limit. */
    databaseConnectTimeoutMs: e.DATABASE_CONNECT_TIMEOUT_MS,
    /** How long a migration may wait for a table's lock before it gives up; 0: no limit. */
    migrationLockTimeoutMs: e.MIGRATION_LOCK_TIMEOUT_MS,
    /** Days a webhook's de-duplication record is kept. */
    webhookEventsRetentionDays: e.WEBHOOK_EVENTS_RETENTION_DAYS,
    /** Days the texts of removed results and the reasons of reports are kept; who and when stay. */
    moderationRetentionDays: e.MODERATION_RETENTION_DAYS,
    redisUrl: e.REDIS_URL,
    /** How the bot reaches Redis; undefined: an embedded redis-server under DATA_DIR. */
    redis: redisTargetOf(e),
    dataDir: e.DATA_DIR,
    publicUrl: e.PUBLIC_URL,
    httpPort: e.HTTP_PORT,
    /** Where this process serves /metrics, /healthz and /readyz, off the public port; undefined: on HTTP_PORT for the http role, nowhere for the others. */
    metricsPort: e.METRICS_PORT,
    metricsHost: e.METRICS_HOST,
    /** When set, every /metrics of this process answers only `Authorization: Bearer <token>`. */
    metricsToken: e.METRICS_TOKEN,
    logLevel: e.LOG_LEVEL,
    role: e.ROLE,
    /** Where a process that runs a front (gateway or http) runs the workers too: on a thread of their own (true) or on the front's event loop. */
    workersInThread: e.WORKERS_IN_THREAD,
    /** Shards of the whole bot: undefined for what Discord recommends (GET /gateway/bot). */
    shardCount: e.SHARD_COUNT,
    /** The shards this process runs (SHARD_IDS, or its replica's range of SHARD_COUNT): undefined for all of them. */
    shardIds: freezeShardIds(shardIdsOf(e)),
    /** How long a shard of this process may be other than ready before its /readyz fails. */
    gatewayReadyGraceMs: e.GATEWAY_READY_GRACE_MS,
    /** How often a gateway process writes its shards' heartbeats for /healthz; three missed, a shard counts as missing. */
    gatewayHeartbeatMs: e.GATEWAY_HEARTBEAT_MS,
    /** Discord's identify window (5 s): one IDENTIFY per bucket in it, across every process. */
    gatewayIdentifyWindowMs: e.GATEWAY_IDENTIFY_WINDOW_MS,
    /** How long a handler may take to decide before the router defers its first answer. */
    answerBudgetMs: e.ANSWER_BUDGET_MS,
    /** After SIGTERM, how long the public server keeps answering (its /readyz already 503) before it closes. */
    shutdownDrainMs: e.SHUTDOWN_DRAIN_MS,
    /** How long a stop may take from the signal to the exit: the supervisor's grace period (Kubernetes: 30 s). */
    shutdownLimitMs: e.SHUTDOWN_LIMIT_MS,
    /** /livez fails while the event loop stalled longer than this within the last 10 s. */
    livezStallMs: e.LIVEZ_STALL_MS,
    queuePrefix: e.QUEUE_PREFIX,
    /** How long a worker's hold on a queue entry lasts unrenewed: the entries of a worker that died are taken over this long after. */
    queueLockMs: e.QUEUE_LOCK_MS,
    upstreamMaxInFlight: e.UPSTREAM_MAX_IN_FLIGHT,
    /** Submissions one worker process makes at once (each mostly waits on the service). */
    submitConcurrency: e.SUBMIT_CONCURRENCY,
    pollDeadlineMinutes: e.POLL_DEADLINE_MINUTES,
    pollMaxPerSecond: e.POLL_MAX_PER_SECOND,
    pollIntervalMs: Object.freeze({ min: e.POLL_INTERVAL_MIN_MS, max: Math.max(e.POLL_INTERVAL_MIN_MS, e.POLL_INTERVAL_MAX_MS) }),
    /** Per-kind overrides of the expected upstream duration, in seconds. */
    expectedSeconds: Object.freeze({ ...e.EXPECTED_SECONDS }),
    attachAudio: e.ATTACH_AUDIO,
    startingCredits: e.STARTING_CREDITS,
    /** The music service account's balance below which the owners are told, once per fall; 0: never. */
    accountLowCredits: e.ACCOUNT_LOW_CREDITS,
    /** Where that alert goes; undefined: a DM to each of BOT_OWNER_IDS. */
    accountAlertChannelId: e.ACCOUNT_ALERT_CHANNEL_ID,
    /** The ffmpeg that decodes songs for voice playback (and encodes their Opus); a bare name is looked up on PATH. */
    ffmpegPath: e.FFMPEG_PATH,
    /** How long the bot stays in a voice channel with no listener before it leaves. */
    voiceIdleSeconds: e.VOICE_IDLE_SECONDS,
    /** How long a process's hold on a guild's player outlives the process when it dies without letting go. */
    voiceLeaseMs: e.VOICE_LEASE_MS,
    /** How many threads play the voice connections, each guild on the one with the fewest. */
    voiceThreads: e.VOICE_THREADS,
    /** Consumable SKUs sold as credit packs, and the credits each adds. */
    creditPacks: Object.freeze((e.CREDIT_PACKS ?? []).map((entry) => Object.freeze(entry))),
    /** Guild subscription SKUs, and the monthly allowance each gives. */
    subscriptionAllowances: Object.freeze((e.SUBSCRIPTION_ALLOWANCES ?? []).map((entry) => Object.freeze(entry))),
    /** How long a bought pack waits for its buyer to choose a server before it goes to the default one. */
    packClaimMinutes: e.PACK_CLAIM_MINUTES,
    /** How often the application's entitlements are listed, to catch purchases whose events never came. */
    entitlementCheckSeconds: e.ENTITLEMENT_CHECK_SECONDS,
    /** A job that takes at least this long from request to end is "long": a member who asked is told by direct message. */
    notifyAfterSeconds: e.NOTIFY_AFTER_SECONDS,
    /** How long a contest's "day" lasts: 86400, or a few seconds for a playground or a test. */
    contestDaySeconds: e.CONTEST_DAY_SECONDS,
    /** How often the workers look for weekly chart posts that are due: a minute, or a second for a test. */
    chartPostCheckSeconds: e.CHART_POST_CHECK_SECONDS,
  }),
);

export type Config = z.output<typeof configSchema>;

/** Thrown with one readable line per bad variable; entry points print the lines and exit 1. */
export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.join('\n')}`);
    this.name = 'ConfigError';
  }
}

const REQUIRED_BY_PART: Record<ConfigPart, ReadonlyArray<{ name: keyof Env; expected: string }>> = {
  discord: [
    { name: 'DISCORD_TOKEN', expected: 'the bot token from the Discord developer portal' },
    { name: 'DISCORD_APPLICATION_ID', expected: "the application's id (17 to 20 digits)" },
  ],
  musicApi: [
    { name: 'MUSIC_API_URL', expected: 'the base address of the music service, such as https://api.example.com' },
    { name: 'MUSIC_API_KEY', expected: 'the API key of the music service' },
  ],
};

/** Reads `.env` from `cwd` when present; variables already in the environment win. */
export function readEnvironment(
  processEnv: NodeJS.ProcessEnv = process.env,
  envFile = '.env',
): Record<string, string | undefined> {
  const fromFile = existsSync(envFile) ? parseEnv(readFileSync(envFile, 'utf8')) : {};
  return { ...fromFile, ...processEnv };
}

export interface LoadConfigOptions {
  /** Which groups of variables must be present. Default: all of them (running the bot). */
  readonly require?: readonly ConfigPart[];
  readonly env?: Record<string, string | undefined>;
}

export function loadConfig(options: LoadConfigOptions = {}): Config {
  const env = options.env ?? readEnvironment();
  const parts = options.require ?? (['discord', 'musicApi'] as const);
  const parsed = configSchema.safeParse(env);

  // One line per variable: the first thing wrong with it is enough to fix it.
  const byVariable = new Map<string, string>();
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const name = String(issue.path[0] ?? 'environment');
      const line = issue.code === 'custom' && issue.params?.['line'] === true ? issue.message : `${name}: expected ${issue.message}`;
      if (!byVariable.has(name)) byVariable.set(name, line);
    }
  }
  const problems = [...byVariable.values()];
  for (const part of parts) {
    for (const { name, expected } of REQUIRED_BY_PART[part]) {
      const present = env[name] !== undefined && env[name]?.trim() !== '';
      if (!present) problems.push(`${name} is not set: expected ${expected}`);
    }
  }
  if (problems.length > 0 || !parsed.success) throw new ConfigError(problems);
  return parsed.data;
}

/**
 * What no single variable shows: the variables that must agree. Each problem is one whole line
 * under the variable to change, checked once every variable has parsed on its own.
 */
function checkAcrossVariables(e: Env, context: z.RefinementCtx): void {
  const problems: Array<[string, string]> = [];
  if (e.SHARD_COUNT !== undefined && e.SHARD_IDS?.some((id) => id >= e.SHARD_COUNT!)) {
    problems.push(['SHARD_IDS', `SHARD_IDS: expected ids below SHARD_COUNT (${e.SHARD_COUNT}), from 0 to ${e.SHARD_COUNT - 1}`]);
  }
  if (e.INTERACTIONS === 'http' && e.DISCORD_PUBLIC_KEY === undefined) {
    problems.push(['DISCORD_PUBLIC_KEY', "DISCORD_PUBLIC_KEY is not set: INTERACTIONS=http needs the application's public key from the developer portal (64 hexadecimal characters)"]);
  }
  if (e.PUBLIC_URL !== undefined && e.PUBLIC_URL.length > MAX_PUBLIC_URL_LENGTH) {
    const length = webhookUrlFor(e.PUBLIC_URL, '00000000-0000-0000-0000-000000000000').length;
    problems.push([
      'PUBLIC_URL',
      `PUBLIC_URL: expected at most ${MAX_PUBLIC_URL_LENGTH} characters: the webhook address it makes (PUBLIC_URL${WEBHOOK_ROUTE_PREFIX}/<job id>) would be ${length}, and the music service takes at most ${MAX_WEBHOOK_URL_LENGTH}`,
    ]);
  }
  if (e.DISCORD_CLIENT_SECRET !== undefined && e.PUBLIC_URL !== undefined && e.DISCORD_APPLICATION_ID === undefined) {
    problems.push(['DISCORD_APPLICATION_ID', 'DISCORD_APPLICATION_ID is not set: the dashboard (DISCORD_CLIENT_SECRET with PUBLIC_URL) signs members in with it as the OAuth2 client id']);
  }
  if (e.ACCOUNT_LOW_CREDITS > 0 && e.ACCOUNT_ALERT_CHANNEL_ID === undefined && e.BOT_OWNER_IDS.length === 0) {
    problems.push(['ACCOUNT_LOW_CREDITS', 'ACCOUNT_LOW_CREDITS: expected somewhere to send the alert: ACCOUNT_ALERT_CHANNEL_ID, or BOT_OWNER_IDS for direct messages']);
  }
  const packs = new Set((e.CREDIT_PACKS ?? []).map((entry) => entry.skuId));
  const both = (e.SUBSCRIPTION_ALLOWANCES ?? []).filter((entry) => packs.has(entry.skuId));
  if (both.length > 0) problems.push(['SUBSCRIPTION_ALLOWANCES', `SUBSCRIPTION_ALLOWANCES: expected SKUs other than CREDIT_PACKS' (${both.map((entry) => entry.skuId).join(', ')} is in both)`]);
  if (e.MODERATION_API_KEY !== undefined && e.MODERATION_URL === undefined) {
    problems.push(['MODERATION_URL', 'MODERATION_URL is not set: MODERATION_API_KEY is the key of a moderation service, such as https://api.openai.com/v1/moderations']);
  }
  if (e.SHUTDOWN_DRAIN_MS > e.SHUTDOWN_LIMIT_MS - 2_000) {
    problems.push(['SHUTDOWN_DRAIN_MS', `SHUTDOWN_DRAIN_MS: expected at most ${e.SHUTDOWN_LIMIT_MS - 2_000}, 2 s under SHUTDOWN_LIMIT_MS (${e.SHUTDOWN_LIMIT_MS}): the parts stop after the drain, within the limit`]);
  }
  problems.push(...redisProblems(e), ...gatewayReplicaProblems(e));
  for (const [name, line] of problems) context.addIssue({ code: 'custom', path: [name], message: line, params: { line: true } });
}

/** What is wrong with how Redis is asked for, by variable: one way to reach it, and what that way needs. */
function redisProblems(e: Env): Array<[string, string]> {
  const ways = (['REDIS_URL', 'REDIS_SENTINELS', 'REDIS_CLUSTER_NODES'] as const).filter((name) => e[name] !== undefined);
  const problems: Array<[string, string]> = [];
  if (ways.length > 1) problems.push([ways[1]!, `${ways[1]}: expected one way to reach Redis, but ${ways.join(' and ')} are both set: REDIS_URL, REDIS_SENTINELS or REDIS_CLUSTER_NODES`]);
  if (e.REDIS_SENTINELS !== undefined && e.REDIS_SENTINEL_NAME === undefined) {
    problems.push(['REDIS_SENTINEL_NAME', 'REDIS_SENTINEL_NAME is not set: REDIS_SENTINELS needs the name the sentinels know the primary by, such as mymaster']);
  }
  if (e.REDIS_SENTINEL_NAME !== undefined && e.REDIS_SENTINELS === undefined) problems.push(['REDIS_SENTINEL_NAME', 'REDIS_SENTINEL_NAME: expected REDIS_SENTINELS too, the sentinels that know it']);
  if (redisTargetOf(e)?.mode === 'cluster' && !hasHashTag(e.QUEUE_PREFIX)) {
    problems.push([
      'QUEUE_PREFIX',
      `QUEUE_PREFIX: expected a hash tag such as {${e.QUEUE_PREFIX.replace(/[{}]/g, '')}} on a Redis Cluster, so that each queue's keys stay in one slot; "${e.QUEUE_PREFIX}" has none`,
    ]);
  }
  return problems;
}

/** What is wrong with a gateway replica's place (GATEWAY_REPLICAS, GATEWAY_ORDINAL), by variable. */
function gatewayReplicaProblems(e: Env): Array<[string, string]> {
  const { GATEWAY_REPLICAS: replicas, GATEWAY_ORDINAL: ordinal, SHARD_COUNT: shardCount } = e;
  if (replicas === undefined && ordinal === undefined) return [];
  if (replicas === undefined) return [['GATEWAY_REPLICAS', 'GATEWAY_REPLICAS is not set: GATEWAY_ORDINAL needs the number of gateway replicas it is one of']];
  if (ordinal === undefined) return [['GATEWAY_ORDINAL', "GATEWAY_ORDINAL is not set: GATEWAY_REPLICAS needs this replica's index from 0, such as a StatefulSet pod's apps.kubernetes.io/pod-index"]];
  if (e.SHARD_IDS !== undefined) return [['SHARD_IDS', 'SHARD_IDS: expected SHARD_IDS or GATEWAY_REPLICAS with GATEWAY_ORDINAL, not both: each says which shards this process runs']];
  if (shardCount === undefined) return [['SHARD_COUNT', 'SHARD_COUNT is not set: GATEWAY_REPLICAS splits a fixed shard count between the replicas, so every replica must be given the same one']];
  if (replicas > shardCount) return [['GATEWAY_REPLICAS', `GATEWAY_REPLICAS: expected at most SHARD_COUNT (${shardCount}): a replica without a shard has nothing to run`]];
  if (ordinal >= replicas) return [['GATEWAY_ORDINAL', `GATEWAY_ORDINAL: expected an index below GATEWAY_REPLICAS (${replicas}), from 0 to ${replicas - 1}; ${ordinal} is past them (is GATEWAY_REPLICAS behind the replica count?)`]];
  return [];
}

/** Whether `url` names this machine by a loopback name or address (localhost, 127.x.x.x, [::1]). */
export function isLoopbackUrl(url: string): boolean {
  try {
    const { hostname } = new URL(url);
    return hostname === 'localhost' || hostname === '[::1]' || /^127(\.\d{1,3}){3}$/.test(hostname);
  } catch {
    return false;
  }
}

/**
 * One line for the operator when the bot offers the spec's model names to a service that is
 * not a local simulator: the spec writes its model families as placeholders (`ModelA`,
 * `ModelB`), which the real service refuses. Undefined when MUSIC_MODELS is set, or the
 * service is on a loopback address.
 */
export function modelListNotice(config: Pick<Config, 'musicModelsFromSpec' | 'musicModels' | 'musicApiUrl'>): string | undefined {
  if (!config.musicModelsFromSpec || config.musicApiUrl === '' || isLoopbackUrl(config.musicApiUrl)) return undefined;
  return `MUSIC_MODELS is not set, so the spec's model names are offered (${config.musicModels.join(', ')}); they are placeholders the service at ${config.musicApiUrl} may refuse: set MUSIC_MODELS to its real model names`;
}

/** Every variable the bot reads, for documentation checks. */
export const CONFIG_VARIABLES: readonly string[] = Object.freeze(Object.keys(envSchema.shape));
