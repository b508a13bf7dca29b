/**
 * `/healthz` (alive; 503 only when Postgres or Redis is unreachable, `degraded` otherwise) and
 * `/readyz` (ready for this role's traffic: only the dependencies its work needs; 503 from the
 * moment `stop()` begins) and `/livez` (the event loop turns; no dependency). Checks run side by side,
 * each with its own limit, so an answer comes within about {@link CHECK_TIMEOUT_MS}.
 * docs/operations.md says what each answers.
 */
import type { FastifyInstance } from 'fastify';
import { sql } from 'drizzle-orm';
import type { RedisClient } from '../queue/connection.js';
import type { Database } from '../db/client.js';
import { heardFrom, readGatewayRecord, readServiceRecord, shardCoverage, type GatewayRecord, type ServiceRecord } from '../queue/health-records.js';
import type { Queues } from '../queue/queues.js';
import type { ShardWatch } from '../discord/shard-watch.js';

/** Each dependency's check gives up after this long and reports it down. */
export const CHECK_TIMEOUT_MS = 1_000;
/** The music service counts as failing once every answer for this long was a failure. */
export const SERVICE_FAILING_AFTER_MS = 5 * 60_000;

/** Where the process is in its life, as the composition root tells it. */
export type Lifecycle = 'starting' | 'running' | 'stopping';

export interface HealthDeps {
  readonly db: Database;
  readonly redis: RedisClient;
  readonly queues: Pick<Queues, 'prefix'>;
  /** @defaultValue () => 'running' */
  readonly lifecycle?: () => Lifecycle;
  /** This process runs a gateway, so a missing heartbeat is a gateway down, not a deployment without one. */
  readonly expectGateway?: boolean;
  /** This process's own shards, when it runs the gateway: `/readyz` says `not_yet` until each has been ready once, and fails while one is down past its grace. */
  readonly shards?: Pick<ShardWatch, 'readiness'>;
  /** @defaultValue CHECK_TIMEOUT_MS */
  readonly checkTimeoutMs?: number;
  /**
   * Asks Postgres whether it answers, on a connection of its own (`connectHealthProbe`), so that
   * a busy pool is not reported as Postgres down. @defaultValue `select 1` through `db`
   */
  readonly pingPostgres?: () => Promise<unknown>;
  /**
   * What this process's work needs to be reachable for `/readyz` to say ready (both are still
   * reported). docs/operations.md gives each role's. @defaultValue both
   */
  readonly readyNeeds?: { readonly postgres: boolean; readonly redis: boolean };
  /** Whether the event loop kept turning, for `/livez` (./liveness.ts). @defaultValue always live */
  readonly liveness?: () => { readonly live: boolean; readonly stallMs: number } | undefined;
}

type Reachable = 'ok' | 'down';
/** `absent`: no gateway reports, and none is expected here (an http process, interactions over HTTP). */
type GatewayStatus = 'ok' | 'degraded' | 'down' | 'absent' | 'unknown';
type ServiceStatus = 'ok' | 'failing' | 'unknown';

export interface HealthReport {
  readonly status: 'ok' | 'degraded' | 'down';
  readonly postgres: Reachable;
  readonly redis: Reachable;
  readonly gateway: {
    /** `degraded` while a shard is missing or not ready, `down` while every shard is missing. */
    readonly status: GatewayStatus;
    /** The deployment's shard count, as its gateway processes publish it; 0 when none has. */
    readonly shardCount: number;
    /** The shards in 0..shardCount-1 that no live gateway process holds. */
    readonly missingShards: readonly number[];
    /** `downForSeconds`: how long a shard has not been `ready`, as its gateway last wrote. */
    readonly shards: ReadonlyArray<{ id: number; status: string; pingMs: number; seenSecondsAgo: number; downForSeconds?: number }>;
  };
  readonly musicApi: {
    readonly status: ServiceStatus;
    readonly lastAnswerSecondsAgo?: number;
    readonly lastError?: string;
    readonly failingForSeconds?: number;
  };
}

export function registerHealthRoutes(app: FastifyInstance, deps: HealthDeps): void {
  app.get('/healthz', async (_request, reply) => {
    const report = await checkHealth(deps);
    return reply.code(report.status === 'down' ? 503 : 200).send(report);
  });

  // The process alone, never a dependency: see ./liveness.ts.
  app.get('/livez', async (_request, reply) => {
    const loop = deps.liveness?.() ?? { live: true, stallMs: 0 };
    return reply.code(loop.live ? 200 : 503).send({ status: loop.live ? 'live' : 'stalled', stallMs: loop.stallMs });
  });

  app.get('/readyz', async (_request, reply) => {
    const phase = deps.lifecycle?.() ?? 'running';
    if (phase !== 'running') return reply.code(503).send({ status: phase });
    const timeoutMs = deps.checkTimeoutMs ?? CHECK_TIMEOUT_MS;
    const [postgres, redis] = await Promise.all([reach(pingPostgres(deps), timeoutMs), reach(deps.redis.ping(), timeoutMs)]);
    const gateway = deps.shards?.readiness();
    // Checked again: stop() may have begun while the checks ran.
    const needs = deps.readyNeeds ?? { postgres: true, redis: true };
    const reachable = (postgres === 'ok' || !needs.postgres) && (redis === 'ok' || !needs.redis);
    const ready = reachable && (gateway?.ready ?? true) && (deps.lifecycle?.() ?? 'running') === 'running';
    // `not_yet`: nothing wrong, the shards are still identifying (in turn, 5 s apart per bucket).
    const notYet = !ready && reachable && gateway?.starting !== undefined && !gateway.shardsDown.some((shard) => shard.overGrace);
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : notYet ? 'not_yet' : 'not_ready', postgres, redis, ...(gateway && { gateway }) });
  });
}

export async function checkHealth(deps: HealthDeps, now = Date.now()): Promise<HealthReport> {
  const timeoutMs = deps.checkTimeoutMs ?? CHECK_TIMEOUT_MS;
  const prefix = deps.queues.prefix;
  const [postgres, redis, record, service] = await Promise.all([
    reach(pingPostgres(deps), timeoutMs),
    reach(deps.redis.ping(), timeoutMs),
    within(readGatewayRecord(deps.redis, prefix), timeoutMs).catch(() => undefined),
    within(readServiceRecord(deps.redis, prefix), timeoutMs).catch(() => undefined),
  ]);
  const gateway = gatewayHealth(record, deps.expectGateway ?? false, now);
  const musicApi = serviceHealth(service, now);
  const status =
    postgres === 'down' || redis === 'down' ? 'down' : gateway.status === 'down' || gateway.status === 'degraded' || musicApi.status === 'failing' ? 'degraded' : 'ok';
  return { status, postgres, redis, gateway, musicApi };
}

/**
 * The gateway as the record in Redis shows it. With a published shard count, a shard is missing
 * whatever the reason (killed, stopped, never started); without one (no gateway yet, or one from
 * before counts), only the heartbeats present are judged.
 */
export function gatewayHealth(record: GatewayRecord | undefined, expected: boolean, now: number): HealthReport['gateway'] {
  if (record === undefined) return { status: 'unknown', shardCount: 0, missingShards: [], shards: [] };
  const { shards } = record;
  const { shardCount, missing } = shardCoverage(record, now);
  const seconds = (ms: number) => Math.max(0, Math.round(ms / 1000));
  const seen = shards.map((shard) => ({
    id: shard.id,
    status: shard.status,
    pingMs: shard.pingMs,
    seenSecondsAgo: seconds(now - shard.at),
    ...(shard.downSince !== undefined && { downForSeconds: seconds(now - shard.downSince) }),
  }));
  const coverage = { shardCount, missingShards: missing, shards: seen };
  const alive = shards.filter((shard) => heardFrom(shard, now));
  const notReady = alive.some((shard) => shard.status !== 'ready');
  if (shardCount > 0) {
    const status = missing.length === shardCount ? 'down' : missing.length > 0 || notReady ? 'degraded' : 'ok';
    return { status, ...coverage };
  }
  if (seen.length === 0) return { status: expected ? 'down' : 'absent', ...coverage };
  const status = alive.length === 0 ? 'down' : alive.length < shards.length || notReady ? 'degraded' : 'ok';
  return { status, ...coverage };
}

export function serviceHealth(record: ServiceRecord | undefined, now: number): HealthReport['musicApi'] {
  if (record?.lastAnswerAt === undefined) return { status: 'unknown' };
  const seconds = (ms: number) => Math.max(0, Math.round(ms / 1000));
  const failingFor = record.failingSince === undefined ? undefined : now - record.failingSince;
  return {
    status: failingFor !== undefined && failingFor >= SERVICE_FAILING_AFTER_MS ? 'failing' : 'ok',
    lastAnswerSecondsAgo: seconds(now - record.lastAnswerAt),
    ...(record.lastError !== undefined && { lastError: record.lastError }),
    ...(failingFor !== undefined && { failingForSeconds: seconds(failingFor) }),
  };
}

function pingPostgres(deps: Pick<HealthDeps, 'db' | 'pingPostgres'>): Promise<unknown> {
  return deps.pingPostgres ? deps.pingPostgres() : deps.db.execute(sql`select 1`);
}

async function reach(check: Promise<unknown>, timeoutMs: number): Promise<Reachable> {
  return within(check, timeoutMs).then(
    () => 'ok' as const,
    () => 'down' as const,
  );
}

/** The promise, or a rejection after `ms`; the promise itself runs on (a queued Redis command cannot be taken back). */
export function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  // A late rejection of the check must not become an unhandled one.
  promise.catch(() => {});
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
