/**
 * `/healthz` and `/readyz` per dependency: Postgres and Redis taken away through proxies, a
 * gateway's heartbeat present, stale, missing or removed by a clean stop, and the music
 * service's last answer, good or failing. The bot runs its worker and http parts (the pipeline
 * harness); the dependency outages use a second HTTP server on connections through a proxy,
 * so the shared test servers stay up.
 */
import { Client, Events, GatewayIntentBits } from 'discord.js';
import { once } from 'node:events';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { connectDatabase, connectHealthProbe } from '../../../src/db/client.js';
import { publishShardHealth } from '../../../src/discord/shard-heartbeat.js';
import { ShardWatch } from '../../../src/discord/shard-watch.js';
import { buildHttpServer, type HttpServerDeps } from '../../../src/http/server.js';
import { silentLogger } from '../../../src/logger.js';
import { createMetrics } from '../../../src/metrics.js';
import { closeRedis, connectRedis } from '../../../src/queue/connection.js';
import { healthKeys, removeShardHeartbeats, SERVICE_RECORD_EVERY_MS, writeShardHeartbeats } from '../../../src/queue/health-records.js';
import { createQueues } from '../../../src/queue/queues.js';
import type { SubmitResult } from '../../../src/pipeline/requests.js';
import { found } from '../../support/found.js';
import { jobRow } from '../../support/ledger.js';
import { parseSamples } from '../../support/metrics.js';
import { startHarness, type Harness } from '../../support/pipeline-harness.js';
import { tcpProxy } from '@music-bot/test-world';

let h: Harness;
let redis: Redis;

beforeAll(async () => {
  // The gateway tests log in clients of their own beside the harness's: none waits for a
  // 5-second identify window.
  h = await startHarness({ webhooks: false, startingCredits: 500, emulator: { shards: { identifyWindowMs: 0 } } });
  redis = new Redis(h.redisUrl);
});
afterAll(async () => {
  await redis?.quit();
  await h?.close();
});

interface Health {
  status: string;
  postgres: string;
  redis: string;
  gateway: { status: string; shardCount: number; missingShards: number[]; shards: Array<{ id: number; status: string; pingMs: number; seenSecondsAgo: number }> };
  musicApi: { status: string; lastAnswerSecondsAgo?: number; lastError?: string; failingForSeconds?: number };
}

async function healthz(url = h.app.httpUrl): Promise<{ code: number; body: Health }> {
  const response = await fetch(`${url}/healthz`);
  return { code: response.status, body: (await response.json()) as Health };
}

async function finished(jobId: string) {
  return vi.waitFor(async () => {
    const job = await jobRow(h.db.db, jobId);
    return found(job && job.deliveryState !== 'pending' ? job : undefined, `job ${jobId} delivered`);
  }, 20_000);
}

/** A second HTTP server of the bot's, on its own connections (through `overrides`), answering by inject. */
function serverWith(overrides: Partial<HttpServerDeps>): FastifyInstance {
  const { db, queues } = h.app.deps;
  const server = buildHttpServer({ db, redis: h.app.deps.redis, queues, metrics: createMetrics(), logger: silentLogger, ...overrides });
  onTestFinished(() => server.close());
  return server;
}

describe('/healthz', () => {
  it('reports Postgres, Redis, no gateway, and when the music service last answered', async () => {
    const started = Date.now();
    const { result } = await h.request({ kind: 'song', prompt: 'health check' });
    expect((await finished((result as SubmitResult).jobId)).state).toBe('succeeded');

    const { code, body } = await vi.waitFor(async () => {
      const health = await healthz();
      return found(health.body.musicApi.status === 'ok' ? health : undefined, 'the service answer recorded');
    }, 10_000);
    expect(code).toBe(200);
    expect(body).toMatchObject({ status: 'ok', postgres: 'ok', redis: 'ok', gateway: { status: 'absent', shards: [] } });
    // The service's last answer was to this test's song, or one recorded at most
    // SERVICE_RECORD_EVERY_MS before it (answers are written no more often).
    expect(body.musicApi.lastAnswerSecondsAgo).toBeLessThanOrEqual(Math.round((Date.now() - started + SERVICE_RECORD_EVERY_MS) / 1000));
    expect(body.musicApi).not.toHaveProperty('failingForSeconds');
  });

  it('reports the service failing, and since when, yet stays 200: the bot still queues', async () => {
    h.setSimForThisTest({ faults: [{ kind: 'status', status: 500, path: '/api/v1/producer/create', times: 50 }] });
    await h.request({ kind: 'song', prompt: 'meets a failing service' });
    const { code, body } = await vi.waitFor(async () => {
      const health = await healthz();
      return found(health.body.musicApi.failingForSeconds !== undefined ? health : undefined, 'the failure recorded');
    }, 10_000);
    expect(code).toBe(200);
    expect(body.musicApi.lastError).toMatch(/\(500\)$/);
    // Failing for less than five minutes is not yet `failing` (serviceHealth's unit test covers the threshold).
    expect(body.musicApi.status).toBe('ok');
  });

  it("reports a real gateway's shard and shard count from its heartbeat, and the shard missing once it stops cleanly", async () => {
    const client = new Client({ intents: [GatewayIntentBits.Guilds], rest: { api: h.emulator.apiUrl } });
    onTestFinished(() => client.destroy());
    const ready = once(client, Events.ClientReady);
    await client.login(h.emulator.botToken);
    await ready;
    const heartbeat = publishShardHealth({ client, redis, prefix: h.prefix, logger: silentLogger });
    // The shard count outlives the heartbeats: the next tests start without a gateway.
    onTestFinished(async () => void (await redis.del(healthKeys(h.prefix).gateway)));

    const { code, body } = await vi.waitFor(async () => {
      const health = await healthz();
      return found(health.body.gateway.status === 'ok' ? health : undefined, 'the heartbeat');
    }, 10_000);
    expect(code).toBe(200);
    expect(body.gateway.shards).toEqual([{ id: 0, status: 'ready', pingMs: expect.any(Number), seenSecondsAgo: expect.any(Number) }]);
    expect(body.gateway).toMatchObject({ shardCount: 1, missingShards: [] });

    // Stopping on purpose or not, nobody holds the shard now: the alert's `for:` absorbs a restart.
    await heartbeat.stop();
    expect((await healthz()).body.gateway).toEqual({ status: 'down', shardCount: 1, missingShards: [0], shards: [] });
  });

  it('reports a shard not heard from as down and a reconnecting one as degraded, still 200', async () => {
    onTestFinished(() => removeShardHeartbeats(redis, h.prefix, [0, 1]));
    await writeShardHeartbeats(redis, h.prefix, [{ id: 0, status: 'ready', pingMs: 40, at: Date.now() - 60_000 }]);
    let health = await healthz();
    expect(health.code).toBe(200);
    expect(health.body).toMatchObject({ status: 'degraded', gateway: { status: 'down', shards: [{ id: 0, status: 'ready', seenSecondsAgo: 60 }] } });

    await writeShardHeartbeats(redis, h.prefix, [
      { id: 0, status: 'ready', pingMs: 40, at: Date.now() },
      { id: 1, status: 'reconnecting', pingMs: -1, at: Date.now() },
    ]);
    health = await healthz();
    expect(health.code).toBe(200);
    expect(health.body).toMatchObject({ status: 'degraded', gateway: { status: 'degraded' } });
  });

  it('reports a missing heartbeat as a gateway down where this process runs the gateway', async () => {
    const response = await serverWith({ expectGateway: true }).inject({ method: 'GET', url: '/healthz' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ status: 'degraded', gateway: { status: 'down', shards: [] } });
  });

  it('answers 503 while Redis is unreachable, and 200 again once it is back', async () => {
    const proxy = await tcpProxy(h.redisUrl);
    const viaProxy = connectRedis(proxy.url, { name: 'via-proxy', logger: silentLogger });
    onTestFinished(async () => {
      await closeRedis(viaProxy, 0);
      await proxy.close();
    });
    const server = serverWith({ redis: viaProxy, queues: createQueues(viaProxy, { prefix: h.prefix }) });
    const get = async (url: string) => {
      const response = await server.inject({ method: 'GET', url });
      return { code: response.statusCode, body: response.json<Record<string, unknown>>() };
    };
    expect(await get('/healthz')).toMatchObject({ code: 200, body: { redis: 'ok' } });

    proxy.cut();
    expect(await get('/healthz')).toMatchObject({ code: 503, body: { status: 'down', postgres: 'ok', redis: 'down', gateway: { status: 'unknown' }, musicApi: { status: 'unknown' } } });
    expect(await get('/readyz')).toMatchObject({ code: 503, body: { status: 'not_ready', redis: 'down' } });

    proxy.restore();
    await vi.waitFor(async () => found((await get('/healthz')).code === 200, 'Redis back'), 15_000);
    expect(await get('/readyz')).toMatchObject({ code: 200, body: { status: 'ready' } });
  });

  it('answers 503 while Postgres is unreachable', async () => {
    const proxy = await tcpProxy(h.db.url);
    const database = connectDatabase(proxy.url, { max: 2 });
    onTestFinished(async () => {
      await database.close().catch(() => {});
      await proxy.close();
    });
    const server = serverWith({ db: database.db });
    expect((await server.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);

    proxy.cut();
    const response = await server.inject({ method: 'GET', url: '/healthz' });
    expect(response.statusCode).toBe(503);
    expect(response.json()).toMatchObject({ status: 'down', postgres: 'down', redis: 'ok' });
    expect((await server.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(503);
  });

  it('reaches Postgres on a connection of its own: a pool with every connection taken is not Postgres down', async () => {
    const busy = connectDatabase(h.db.url, { max: 1 });
    const probe = connectHealthProbe(h.db.url, 'health-test');
    onTestFinished(async () => {
      await probe.close();
      await busy.close();
    });
    // The pool's one connection held, as a flood of webhooks holds them all.
    const held = await busy.pool.connect();
    onTestFinished(() => held.release());
    const withProbe = serverWith({ db: busy.db, pingPostgres: probe.ping });
    const throughPool = serverWith({ db: busy.db });

    const answer = await withProbe.inject({ method: 'GET', url: '/healthz' });
    expect(answer.statusCode).toBe(200);
    expect(answer.json()).toMatchObject({ status: 'ok', postgres: 'ok' });
    expect((await withProbe.inject({ method: 'GET', url: '/readyz' })).json()).toMatchObject({ status: 'ready', postgres: 'ok' });
    const { rows } = await h.db.pool.query<{ n: number }>("select count(*)::integer as n from pg_stat_activity where datname = current_database() and application_name = 'health-test health'");
    expect(rows[0]!.n).toBe(1);
    // The bot's own server does the same: a health connection of its own beside its pools.
    expect((await healthz()).body.postgres).toBe('ok');
    const own = await h.db.pool.query<{ name: string }>("select application_name as name from pg_stat_activity where datname = current_database() and application_name like 'music-bot % health'");
    expect(own.rows.length).toBeGreaterThanOrEqual(1);
    // The control: the same check through the pool waits for a connection until its limit (CHECK_TIMEOUT_MS).
    const control = await throughPool.inject({ method: 'GET', url: '/healthz' });
    expect(control.json()).toMatchObject({ postgres: 'down' });
  });

  it('reports Postgres down through its own connection too, and up again once it is back', async () => {
    const proxy = await tcpProxy(h.db.url);
    const probe = connectHealthProbe(proxy.url, 'health-test-proxy');
    onTestFinished(async () => {
      await probe.close().catch(() => {});
      await proxy.close();
    });
    const server = serverWith({ pingPostgres: probe.ping });
    expect((await server.inject({ method: 'GET', url: '/healthz' })).json()).toMatchObject({ postgres: 'ok' });

    proxy.cut();
    const down = await server.inject({ method: 'GET', url: '/healthz' });
    expect(down.statusCode).toBe(503);
    expect(down.json()).toMatchObject({ status: 'down', postgres: 'down' });

    proxy.restore();
    await vi.waitFor(async () => found((await server.inject({ method: 'GET', url: '/healthz' })).statusCode === 200, 'Postgres back'), 15_000);
  });
});

describe('/readyz', () => {
  it('is ready once the app has started', async () => {
    const response = await fetch(`${h.app.httpUrl}/readyz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ready', postgres: 'ok', redis: 'ok' });
  });

  it('says starting and stopping with a 503, whatever the dependencies say', async () => {
    let phase: 'starting' | 'running' | 'stopping' = 'starting';
    const server = serverWith({ lifecycle: () => phase });
    expect((await server.inject({ method: 'GET', url: '/readyz' })).json()).toEqual({ status: 'starting' });
    phase = 'running';
    expect((await server.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    phase = 'stopping';
    const response = await server.inject({ method: 'GET', url: '/readyz' });
    expect(response.statusCode).toBe(503);
    expect(response.json()).toEqual({ status: 'stopping' });
    // Alive all the same: /healthz is not about draining.
    expect((await server.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
  });

  it("fails while a shard of this process's gateway is disconnected beyond the grace period, and recovers with it", async () => {
    const metrics = createMetrics({ deploymentGauges: false });
    const watch = new ShardWatch({ graceMs: 2_000, metrics });
    const client = new Client({ intents: [GatewayIntentBits.Guilds], rest: { api: h.emulator.apiUrl } });
    onTestFinished(() => client.destroy());
    const ready = once(client, Events.ClientReady);
    await client.login(h.emulator.botToken);
    await ready;
    const heartbeat = publishShardHealth({ client, redis, prefix: h.prefix, logger: silentLogger, watch });
    onTestFinished(() => heartbeat.stop());
    const server = serverWith({ metrics, shards: watch, expectGateway: true });
    const readyz = async () => {
      const response = await server.inject({ method: 'GET', url: '/readyz' });
      return { code: response.statusCode, body: response.json<{ status: string; gateway: { ready: boolean; shardsDown: Array<{ id: number; overGrace: boolean }> } }>() };
    };
    const gauges = async () => parseSamples((await server.inject({ method: 'GET', url: '/metrics' })).body);

    expect(await readyz()).toEqual({ code: 200, body: { status: 'ready', postgres: 'ok', redis: 'ok', gateway: { ready: true, shardsDown: [] } } });
    h.emulator.requestHeartbeat();
    const up = await vi.waitFor(async () => {
      const samples = await gauges();
      return found(samples.has('musicbot_gateway_ping_seconds{shard="0"}') ? samples : undefined, 'a ping');
    }, 10_000);
    expect(up.get('musicbot_gateway_shard_up{shard="0"}')).toBe(1);
    expect(up.get('musicbot_gateway_ping_seconds{shard="0"}')).toBeGreaterThanOrEqual(0);
    // The guilds discord.js holds for the shard: the test world's, at least one.
    expect(client.guilds.cache.size).toBeGreaterThan(0);
    expect(up.get('musicbot_gateway_shard_guilds{shard="0"}')).toBe(client.guilds.cache.size);

    h.emulator.setGatewayAvailable(false);
    onTestFinished(() => h.emulator.setGatewayAvailable(true));
    // Down, but within its grace: still ready.
    const within = await vi.waitFor(async () => {
      const answer = await readyz();
      return found(answer.body.gateway.shardsDown.length > 0 ? answer : undefined, 'the shard seen down');
    }, 5_000);
    expect(within).toMatchObject({ code: 200, body: { status: 'ready', gateway: { ready: true, shardsDown: [{ id: 0, overGrace: false }] } } });
    expect((await gauges()).get('musicbot_gateway_shard_up{shard="0"}')).toBe(0);

    const beyond = await vi.waitFor(async () => {
      const answer = await readyz();
      return found(answer.code === 503 ? answer : undefined, 'the grace period over');
    }, 10_000);
    expect(beyond.body).toMatchObject({ status: 'not_ready', gateway: { ready: false, shardsDown: [{ id: 0, overGrace: true }] } });
    // /healthz tells how long, here and in any other process (the heartbeat in Redis); 200 all the same.
    const health = await healthz();
    expect(health.code).toBe(200);
    expect(health.body.gateway.shards).toEqual([expect.objectContaining({ id: 0, status: expect.not.stringMatching(/^ready$/), downForSeconds: expect.any(Number) })]);

    h.emulator.setGatewayAvailable(true);
    await vi.waitFor(async () => found((await readyz()).code === 200, 'the shard back'), 60_000);
    expect((await gauges()).get('musicbot_gateway_shard_up{shard="0"}')).toBe(1);
  }, 90_000);
});

describe('/metrics', () => {
  it('counts open jobs at each refresh, finished ones less often, and refreshes at most every GAUGES_MAX_AGE_MS', async () => {
    await h.balance();
    const cached = serverWith({});
    const uncached = serverWith({ gaugesMaxAgeMs: 0 });
    const videos = async (server: FastifyInstance) => {
      const samples = parseSamples((await server.inject({ method: 'GET', url: '/metrics' })).body);
      return { queued: samples.get('musicbot_jobs{kind="video",state="queued"}') ?? 0, succeeded: samples.get('musicbot_jobs{kind="video",state="succeeded"}') ?? 0 };
    };
    const insert = (state: string) =>
      h.db.db.execute(sql`insert into jobs (guild_id, channel_id, user_id, kind, request, state, cost, webhook_secret)
        values (${h.guild.id}, 'metrics-test', ${h.members.alice}, 'video', '{}'::jsonb, ${state}, 1, 'secret')`);
    onTestFinished(async () => void (await h.db.db.execute(sql`delete from jobs where channel_id = 'metrics-test'`)));
    await insert('succeeded');
    const before = await videos(uncached);
    const cachedBefore = await videos(cached);
    expect(before.succeeded).toBeGreaterThanOrEqual(1);

    await insert('queued');
    await insert('succeeded');
    expect(await videos(uncached)).toEqual({ queued: before.queued + 1, succeeded: before.succeeded });
    expect(await videos(cached)).toEqual(cachedBefore);
  });
});
