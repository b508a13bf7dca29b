/**
 * Which gateway shards no live process holds, as `/healthz` and `/metrics` report them from the
 * heartbeats in a real Redis: gateway processes each write their own shards and the count they
 * were told; a shard with no heartbeat, or one not heard from for SHARD_STALE_MS (its process
 * killed), is missing. Each test writes under a key prefix of its own.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { buildHttpServer } from '../../../src/http/server.js';
import { silentLogger } from '../../../src/logger.js';
import { createMetrics } from '../../../src/metrics.js';
import { SHARD_STALE_MS, writeShardHeartbeats } from '../../../src/queue/health-records.js';
import { createQueues } from '../../../src/queue/queues.js';
import { createTestDatabase, testRedis, type TestDatabase } from '../../support/database.js';
import { parseSamples } from '../../support/metrics.js';

let db: TestDatabase;
let redis: Redis;

beforeAll(async () => {
  db = await createTestDatabase();
  redis = new Redis(testRedis().url, { maxRetriesPerRequest: null });
});
afterAll(async () => {
  await redis?.quit();
});

interface GatewayReport {
  status: string;
  shardCount: number;
  missingShards: number[];
  shards: Array<{ id: number }>;
}

/** The http role's server on a prefix of its own: what its `/healthz` and `/metrics` say. */
function httpRole() {
  const prefix = `test-${randomUUID()}`;
  const queues = createQueues(redis, { prefix });
  const server = buildHttpServer({ db: db.db, redis, queues, metrics: createMetrics(), logger: silentLogger });
  onTestFinished(async () => {
    await server.close();
    await queues.close();
    await redis.del(`${prefix}:health:gateway`);
  });
  return {
    /** One gateway process's heartbeat: these shards, of `shardCount`, last written `ageMs` ago. */
    heartbeat: (shardCount: number, ids: readonly number[], ageMs = 0) =>
      writeShardHeartbeats(
        redis,
        prefix,
        ids.map((id) => ({ id, status: 'ready', pingMs: 40, at: Date.now() - ageMs, shardCount })),
      ),
    async healthz() {
      const response = await server.inject({ method: 'GET', url: '/healthz' });
      return { code: response.statusCode, body: response.json<{ status: string; gateway: GatewayReport }>() };
    },
    async missingGauge() {
      return parseSamples((await server.inject({ method: 'GET', url: '/metrics' })).body).get('musicbot_gateway_shards_missing');
    },
    /** `musicbot_gateway_shard_held` by shard id. */
    async heldGauges() {
      const samples = parseSamples((await server.inject({ method: 'GET', url: '/metrics' })).body);
      return Object.fromEntries([...samples].flatMap(([name, value]) => (/^musicbot_gateway_shard_held\{shard="(\d+)"\}$/.exec(name) ? [[name.replace(/\D+/g, ''), value]] : [])));
    },
  };
}

describe('shard coverage', () => {
  it('names the shards of the count that no process writes a heartbeat for', async () => {
    const http = httpRole();
    // Two processes of a deployment of 6 shards: one holds 0-2, the other 4; nobody holds 3 or 5.
    await http.heartbeat(6, [0, 1, 2]);
    await http.heartbeat(6, [4]);

    const { code, body } = await http.healthz();
    expect(code).toBe(200);
    expect(body.status).toBe('degraded');
    expect(body.gateway).toMatchObject({ status: 'degraded', shardCount: 6, missingShards: [3, 5] });
    expect(await http.missingGauge()).toBe(2);
    expect(await http.heldGauges()).toEqual({ 0: 1, 1: 1, 2: 1, 3: 0, 4: 1, 5: 0 });
  });

  it('counts a shard whose process stopped writing (killed) as missing once its heartbeat is stale', async () => {
    const http = httpRole();
    await http.heartbeat(4, [0, 1]);
    await http.heartbeat(4, [2, 3], SHARD_STALE_MS - 5_000);
    expect((await http.healthz()).body.gateway).toMatchObject({ status: 'ok', shardCount: 4, missingShards: [] });

    // The second process was killed: its last heartbeat ages past SHARD_STALE_MS.
    await http.heartbeat(4, [2, 3], SHARD_STALE_MS + 1_000);
    expect((await http.healthz()).body.gateway).toMatchObject({ status: 'degraded', shardCount: 4, missingShards: [2, 3] });
    expect(await http.missingGauge()).toBe(2);
  });

  it('reports the gateway down when every shard is missing, and ok with none missing', async () => {
    const http = httpRole();
    await http.heartbeat(3, [0, 1, 2], SHARD_STALE_MS + 1_000);
    const down = await http.healthz();
    expect(down.code).toBe(200);
    expect(down.body).toMatchObject({ status: 'degraded', gateway: { status: 'down', shardCount: 3, missingShards: [0, 1, 2] } });
    expect(await http.missingGauge()).toBe(3);

    await http.heartbeat(3, [0, 1, 2]);
    expect((await http.healthz()).body).toMatchObject({ status: 'ok', gateway: { status: 'ok', shardCount: 3, missingShards: [] } });
  });

  it('reports no shard missing and a count of 0 where no gateway has published', async () => {
    const http = httpRole();
    expect((await http.healthz()).body.gateway).toEqual({ status: 'absent', shardCount: 0, missingShards: [], shards: [] });
    expect(await http.missingGauge()).toBe(0);
  });
});
