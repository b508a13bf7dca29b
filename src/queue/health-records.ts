/**
 * Health records in Redis, written by the process that knows and read by the one serving
 * `/healthz`: `<prefix>:health:gateway` (a hash, one `shard:<id>` field per shard, refreshed every
 * GATEWAY_HEARTBEAT_MS; older than the window it names means a gateway died uncleanly;
 * and `shardCount`, the count the last writer runs, kept when its shards are taken out)
 * and `<prefix>:health:music-api` (the service's last answer, success, failure, failing since).
 */
import type { Queue } from 'bullmq';
import type { RedisClient } from './connection.js';
import { z } from 'zod';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import { TRANSIENT_KINDS, type MusicApiErrorKind } from '../music-api/errors.js';

/** How often a gateway writes its shards' heartbeats, unless GATEWAY_HEARTBEAT_MS says otherwise. */
export const HEARTBEAT_EVERY_MS = 10_000;
/** A shard not heard from for three of its heartbeats is reported down. */
export const MISSED_HEARTBEATS = 3;
/** The window of a heartbeat that names none: three of the default heartbeats. */
export const SHARD_STALE_MS = MISSED_HEARTBEATS * HEARTBEAT_EVERY_MS;
/**
 * The gateway record outlives a dead gateway by a day, so that a crash keeps showing until
 * someone looks, yet a deployment that dropped the gateway for good stops reporting it.
 */
const GATEWAY_RECORD_TTL_MS = 24 * 3600_000;
/** The service's record is rewritten at most this often per process while nothing changes. */
export const SERVICE_RECORD_EVERY_MS = 5_000;

export function healthKeys(prefix: string) {
  return { gateway: `${prefix}:health:gateway`, musicApi: `${prefix}:health:music-api` } as const;
}

const shardSchema = z.object({
  id: z.number().int().min(0),
  /** discord.js's shard status, in words: `ready`, `connecting`, `reconnecting`, `idle`, … */
  status: z.string(),
  /** The last heartbeat's round trip to Discord; -1 before the first. */
  pingMs: z.number(),
  /** When this record was written (ms since the epoch). */
  at: z.number(),
  /** Since when the shard has not been `ready` (ms since the epoch); absent while it is. */
  downSince: z.number().optional(),
  /** How many shards the deployment has, as the writing process was told (SHARD_COUNT or Discord's recommendation). */
  shardCount: z.number().int().positive().optional(),
  /** How long after `at` the shard counts as not held: three of its writer's heartbeats; {@link SHARD_STALE_MS} when absent. */
  staleAfterMs: z.number().positive().optional(),
});
export type ShardHeartbeat = z.infer<typeof shardSchema>;

/** Whether the shard's process was heard from within the window its own heartbeat names. */
export function heardFrom(shard: ShardHeartbeat, now: number): boolean {
  return now - shard.at <= (shard.staleAfterMs ?? SHARD_STALE_MS);
}

/** The gateway record: the heartbeats, and the shard count last published. */
export interface GatewayRecord {
  readonly shards: readonly ShardHeartbeat[];
  readonly shardCount: number | undefined;
}

export async function writeShardHeartbeats(redis: RedisClient, prefix: string, shards: readonly ShardHeartbeat[]): Promise<void> {
  if (shards.length === 0) return;
  const key = healthKeys(prefix).gateway;
  const counts = shards.flatMap((shard) => (shard.shardCount === undefined ? [] : [shard.shardCount]));
  const fields: Record<string, string> = Object.fromEntries(shards.map((shard) => [`shard:${shard.id}`, JSON.stringify(shard)]));
  if (counts.length > 0) fields['shardCount'] = String(Math.max(...counts));
  await redis.multi().hset(key, fields).pexpire(key, GATEWAY_RECORD_TTL_MS).exec();
}

/**
 * A gateway that stops cleanly takes its shards out at once; the shard count stays, so they
 * count as missing until a process holds them again (docs/decisions/gateway-health.md).
 */
export async function removeShardHeartbeats(redis: RedisClient, prefix: string, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  await redis.hdel(healthKeys(prefix).gateway, ...ids.map((id) => `shard:${id}`));
}

export async function readGatewayRecord(redis: RedisClient, prefix: string): Promise<GatewayRecord> {
  const fields = await redis.hgetall(healthKeys(prefix).gateway);
  const shards: ShardHeartbeat[] = [];
  for (const [field, value] of Object.entries(fields)) {
    if (!field.startsWith('shard:')) continue;
    const parsed = shardSchema.safeParse(parseJson(value));
    if (parsed.success) shards.push(parsed.data);
  }
  const count = Number(fields['shardCount']);
  return { shards: shards.sort((a, b) => a.id - b.id), shardCount: Number.isInteger(count) && count > 0 ? count : undefined };
}

export interface ShardCoverage {
  /** 0 when no gateway has published a count. */
  readonly shardCount: number;
  /** Ascending, each in 0..shardCount-1. */
  readonly missing: readonly number[];
}

/**
 * Which shards of the deployment no live process holds. The count is the largest a live
 * heartbeat carries (the record's own while none is live); a shard is held by a heartbeat
 * still within its window ({@link heardFrom}) for that count. A count of 0: no gateway has
 * published one, so nothing can be missing.
 */
export function shardCoverage(record: GatewayRecord, now: number): ShardCoverage {
  const live = record.shards.filter((shard) => heardFrom(shard, now));
  const liveCounts = live.flatMap((shard) => (shard.shardCount === undefined ? [] : [shard.shardCount]));
  const shardCount = liveCounts.length > 0 ? Math.max(...liveCounts) : (record.shardCount ?? 0);
  // A heartbeat without a count comes from a version before counts: it holds its id.
  const held = new Set(live.filter((shard) => (shard.shardCount ?? shardCount) === shardCount).map((shard) => shard.id));
  const missing = Array.from({ length: shardCount }, (_, id) => id).filter((id) => !held.has(id));
  return { shardCount, missing };
}

/**
 * The http role's gauges of the coverage: how many shards are missing, and each shard held or
 * not (a series per shard, so that an alert's `for:` follows one shard, not a count that a
 * rolling restart keeps above 0 while the shards it takes away change).
 */
export function setShardCoverageGauges(metrics: Pick<Metrics, 'gatewayShardsMissing' | 'gatewayShardHeld'>, coverage: ShardCoverage): void {
  metrics.gatewayShardsMissing.set(coverage.missing.length);
  const missing = new Set(coverage.missing);
  // A shard of a count no longer in use goes from the export.
  metrics.gatewayShardHeld.reset();
  for (let id = 0; id < coverage.shardCount; id += 1) metrics.gatewayShardHeld.set({ shard: String(id) }, missing.has(id) ? 0 : 1);
}

/** One finished request to the music service, as the client reports it. */
export interface ServiceAnswer {
  readonly at: number;
  /** Undefined when the service answered as it should (a refusal of bad input included). */
  readonly error?: { readonly kind: MusicApiErrorKind; readonly status: number | undefined };
}

/**
 * Errors that say the service (or the way to it, or our account) is not working, as opposed
 * to a request it rightly refused (`validation`, `not_found`) or one we cancelled (`aborted`).
 */
const SERVICE_FAILURES: ReadonlySet<MusicApiErrorKind> = new Set([...TRANSIENT_KINDS, 'unauthorized', 'insufficient_credits', 'endpoint_retired']);

export function isServiceFailure(kind: MusicApiErrorKind): boolean {
  return SERVICE_FAILURES.has(kind);
}

/**
 * Records the service's answers for `/healthz`. Returns the callback the music-API client
 * takes (`onAnswer`); it never throws and never waits: a failed write is logged at debug and
 * the next answer writes again. Writes when the answer changes from good to failing or back,
 * otherwise at most every {@link SERVICE_RECORD_EVERY_MS}, so a busy worker adds no Redis load.
 */
export function createServiceAnswerRecorder(redis: RedisClient, prefix: string, logger: Logger): (answer: ServiceAnswer) => void {
  const key = healthKeys(prefix).musicApi;
  let last: { at: number; failing: boolean } | undefined;
  return (answer) => {
    if (answer.error?.kind === 'aborted') return;
    const failing = answer.error !== undefined && isServiceFailure(answer.error.kind);
    if (last && last.failing === failing && answer.at - last.at < SERVICE_RECORD_EVERY_MS) return;
    last = { at: answer.at, failing };
    const at = String(answer.at);
    const write = redis.multi().hset(key, 'lastAnswerAt', at);
    if (failing) {
      const { kind, status } = answer.error!;
      write.hset(key, 'lastErrorAt', at, 'lastError', status === undefined ? kind : `${kind} (${status})`).hsetnx(key, 'failingSince', at);
    } else {
      write.hset(key, 'lastOkAt', at).hdel(key, 'failingSince');
    }
    write.exec().catch((err: unknown) => logger.debug({ err }, 'could not record the music service answer'));
  };
}

export interface ServiceRecord {
  readonly lastAnswerAt: number | undefined;
  readonly lastOkAt: number | undefined;
  readonly lastErrorAt: number | undefined;
  readonly lastError: string | undefined;
  /** Set while the latest answers are failures: the first of them. */
  readonly failingSince: number | undefined;
}

export async function readServiceRecord(redis: RedisClient, prefix: string): Promise<ServiceRecord> {
  const fields = await redis.hgetall(healthKeys(prefix).musicApi);
  const time = (name: string) => (fields[name] === undefined ? undefined : Number(fields[name]));
  return {
    lastAnswerAt: time('lastAnswerAt'),
    lastOkAt: time('lastOkAt'),
    lastErrorAt: time('lastErrorAt'),
    lastError: fields['lastError'],
    failingSince: time('failingSince'),
  };
}

/**
 * How long the oldest entry of `queue` has been due without a worker taking it, in seconds:
 * the oldest waiting entry (due when added, or when its delay ran out), or a delayed entry
 * whose time has passed (delayed entries move to waiting only while a worker runs, so with
 * every worker gone this is what grows). 0 when nothing is overdue. Two Redis reads; `redis`
 * is the queue's own server.
 */
export async function oldestWaitingSeconds(queue: Queue, redis: RedisClient, now = Date.now()): Promise<number> {
  const [[waiting], delayed] = await Promise.all([queue.getJobs(['waiting'], 0, 0, true), redis.zrange(queue.keys.delayed!, 0, 0, 'WITHSCORES')]);
  // A retried entry keeps its first timestamp: it was due no earlier than its last attempt.
  const waitingSince = waiting ? Math.max(waiting.timestamp + (waiting.delay ?? 0), waiting.processedOn ?? 0) : now;
  // BullMQ scores a delayed entry by its due time × 0x1000, plus a counter.
  const delayedDue = delayed[1] === undefined ? now : Math.floor(Number(delayed[1]) / 0x1000);
  return Math.max(0, now - Math.min(waitingSince, delayedDue)) / 1000;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
