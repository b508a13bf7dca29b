/**
 * The bot's HTTP server as a stranger meets it, route by route (docs/operations.md lists
 * them): each POST route refuses a body over its limit with 413 before the bot does any work,
 * even a genuine, correctly signed one; unsigned or forged requests get 401, unknown jobs and
 * paths 404; and `/metrics` names no guild, channel or member, and with METRICS_TOKEN answers
 * only its bearer. The bot runs as `ROLE=http` plus workers with `INTERACTIONS=http`, on the
 * test stack, with members' commands delivered by the emulator to `/interactions`.
 */
import { createHmac } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { Readable } from 'node:stream';
import { desc, eq } from 'drizzle-orm';
import { InteractionResponseType, InteractionType } from 'discord-api-types/v10';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { commandDefinitions } from '../../../commands/index.js';
import { startApp, type App } from '../../../src/app.js';
import { loadConfig } from '../../../src/config.js';
import { entitlements, jobs, webhookEvents } from '../../../src/db/schema.js';
import { deployCommands } from '../../../src/discord/deploy.js';
import { findFreePort } from '../../../src/embedded/free-port.js';
import { INTERACTIONS_BODY_LIMIT } from '../../../src/http/interactions.js';
import { buildHttpServer, buildOpsServer, DEFAULT_BODY_LIMIT, WEBHOOK_BODY_LIMIT } from '../../../src/http/server.js';
import { silentLogger } from '../../../src/logger.js';
import { createMetrics } from '../../../src/metrics.js';
import type { InteractionHandle } from '@music-bot/discord-emulator';
import { found } from '../../support/found.js';
import { jobRow } from '../../support/ledger.js';
import { parseSamples } from '../../support/metrics.js';
import { FAST_SETTINGS } from '../../support/pipeline-harness.js';
import { startStack, type Stack } from '../../support/stack.js';

let stack: Stack;
let app: App;
let base: string;

/** Distinctive, so that a leak into /metrics would show. */
const PROMPT = 'surface-test prompt of a lighthouse keeper';
const TITLE = 'Surface Test Title';

beforeAll(async () => {
  stack = await startStack({ startingCredits: 500, sim: { taskMs: 200 } });
  const httpPort = await findFreePort();
  base = `http://127.0.0.1:${httpPort}`;
  const config = loadConfig({
    env: {
      ...stack.env,
      HTTP_PORT: String(httpPort),
      PUBLIC_URL: base,
      INTERACTIONS: 'http',
      DISCORD_PUBLIC_KEY: stack.emulator.publicKey,
      LOG_LEVEL: 'silent',
      POLL_MAX_PER_SECOND: '50',
    },
  });
  await deployCommands(config, commandDefinitions);
  app = await startApp(config, silentLogger, {
    parts: { gateway: false, worker: true, http: true },
    queuePrefix: stack.prefix,
    settings: FAST_SETTINGS,
    reconcileIntervalMs: 60_000,
    lockDurationMs: 4_000,
  });
  await stack.emulator.setInteractionsEndpoint(`${base}/interactions`);
});
afterAll(async () => {
  await app?.stop();
  await stack?.close();
});

function song(prompt: string): InteractionHandle {
  return stack.emulator.runCommand({ guildId: stack.guild.id, channelId: stack.channelId, userId: stack.members.alice, name: 'song', options: { prompt, title: TITLE } });
}

async function latestJob() {
  const [job] = await stack.db.db.select().from(jobs).where(eq(jobs.guildId, stack.guild.id)).orderBy(desc(jobs.createdAt)).limit(1);
  return job;
}

async function scrape(headers: Record<string, string> = {}): Promise<string> {
  const response = await fetch(`${base}/metrics`, { headers });
  expect(response.status).toBe(200);
  return response.text();
}

/** A body sent in chunks with no Content-Length, as a stranger may: the limit must hold while it streams. */
function streamed(bytes: number): { body: ReadableStream; duplex: 'half' } {
  const chunk = Buffer.alloc(64 * 1024, 'x');
  let sent = 0;
  const source = new Readable({
    read() {
      if (sent >= bytes) return void this.push(null);
      sent += chunk.length;
      this.push(chunk);
    },
  });
  return { body: Readable.toWeb(source) as ReadableStream, duplex: 'half' };
}

/** A GET with a body, which fetch will not send. */
function getWithBody(path: string, bytes: number): Promise<number> {
  const url = new URL(path, base);
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: url.hostname, port: url.port, path: url.pathname, method: 'GET', headers: { 'content-type': 'application/json', 'content-length': bytes } }, (response) => {
      response.resume();
      response.once('end', () => resolve(response.statusCode ?? 0));
    });
    request.once('error', reject);
    request.end(Buffer.alloc(bytes, 'x'));
  });
}

describe('POST /webhook-events', () => {
  const entitlementEvent = (id: string) =>
    JSON.stringify({
      version: 1,
      application_id: stack.env.DISCORD_APPLICATION_ID,
      type: 1,
      event: { type: 'ENTITLEMENT_CREATE', timestamp: new Date().toISOString(), data: { id, sku_id: '1100000000000000001', application_id: stack.env.DISCORD_APPLICATION_ID, user_id: stack.members.alice, type: 1, deleted: false } },
    });
  const post = (body: string, headers: Record<string, string>) => fetch(`${base}/webhook-events`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

  it('answers a stranger 401 (unsigned or forged) and 404 to GET, and Discord\'s signed PING 204', async () => {
    const body = entitlementEvent('1100000000000000002');
    expect((await post(body, {})).status).toBe(401);
    const forged = { 'x-signature-ed25519': 'ab'.repeat(64), 'x-signature-timestamp': String(Math.floor(Date.now() / 1000)) };
    expect((await post(body, forged)).status).toBe(401);
    expect((await fetch(`${base}/webhook-events`)).status).toBe(404);
    const ping = JSON.stringify({ version: 1, application_id: stack.env.DISCORD_APPLICATION_ID, type: 0 });
    const pong = await post(ping, stack.emulator.signInteraction(ping));
    expect(pong.status).toBe(204);
    expect(await pong.text()).toBe('');
  });

  it('takes a signed entitlement event with 204 and credits nothing when nothing is sold', async () => {
    const body = entitlementEvent('1100000000000000003');
    const before = await stack.db.db.select().from(entitlements);
    expect((await post(body, stack.emulator.signInteraction(body))).status).toBe(204);
    expect(await stack.db.db.select().from(entitlements)).toEqual(before);
  });
});

describe('POST /interactions', () => {
  let genuine: InteractionHandle;

  beforeAll(async () => {
    genuine = song(PROMPT);
    await genuine.waitForResponse();
    await vi.waitFor(async () => found((await latestJob())?.state === 'succeeded', 'the genuine song to finish'), 20_000);
  });

  it('answers a stranger 401 (unsigned or forged) and 404 to GET', async () => {
    const body = JSON.stringify({ ...genuine.payload, id: String(BigInt(genuine.payload.id) + 1n) });
    expect((await fetch(`${base}/interactions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })).status).toBe(401);
    const forged = { 'x-signature-ed25519': 'ab'.repeat(64), 'x-signature-timestamp': String(Math.floor(Date.now() / 1000)) };
    expect((await fetch(`${base}/interactions`, { method: 'POST', headers: { 'content-type': 'application/json', ...forged }, body })).status).toBe(401);
    expect((await fetch(`${base}/interactions`)).status).toBe(404);
  });

  it('refuses a genuine, signed command over the limit with 413, and makes no job of it', async () => {
    const jobsBefore = await stack.jobCount();
    const commandsBefore = parseSamples(await scrape()).get('musicbot_commands_total{command="song",outcome="accepted",reason=""}');
    expect(commandsBefore).toBeGreaterThan(0);

    // A new id: were it handled, it would be a new song.
    const payload = { ...genuine.payload, id: String(BigInt(genuine.payload.id) + 2n) };
    const body = JSON.stringify({ ...payload, padding: 'x'.repeat(INTERACTIONS_BODY_LIMIT) });
    const oversized = await fetch(`${base}/interactions`, { method: 'POST', headers: { 'content-type': 'application/json', ...stack.emulator.signInteraction(body) }, body });
    expect(oversized.status).toBe(413);
    const chunked = await fetch(`${base}/interactions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...stack.emulator.signInteraction('') },
      ...streamed(INTERACTIONS_BODY_LIMIT + 64 * 1024),
    });
    expect(chunked.status).toBe(413);

    expect(await stack.jobCount()).toBe(jobsBefore);
    expect(parseSamples(await scrape()).get('musicbot_commands_total{command="song",outcome="accepted",reason=""}')).toBe(commandsBefore);
  });

  it('takes a signed request just under the limit', async () => {
    const ping = { id: String(BigInt(genuine.payload.id) + 3n), application_id: genuine.payload.application_id, type: InteractionType.Ping, token: 'ping', version: 1 };
    const bare = JSON.stringify({ ...ping, padding: '' });
    const body = JSON.stringify({ ...ping, padding: 'x'.repeat(INTERACTIONS_BODY_LIMIT - Buffer.byteLength(bare)) });
    expect(Buffer.byteLength(body)).toBe(INTERACTIONS_BODY_LIMIT);
    const response = await fetch(`${base}/interactions`, { method: 'POST', headers: { 'content-type': 'application/json', ...stack.emulator.signInteraction(body) }, body });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ type: InteractionResponseType.Pong });
  });
});

describe('POST /webhooks/music/:jobId', () => {
  const post = (jobId: string, body: string, headers: Record<string, string> = {}) =>
    fetch(`${base}/webhooks/music/${jobId}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  const signed = (secret: string, body: string) => {
    const now = Math.floor(Date.now() / 1000);
    return { 'x-webhook-signature': `sha256=${createHmac('sha256', secret).update(`${now}.${body}`).digest('hex')}`, 'x-webhook-timestamp': String(now) };
  };

  it('refuses a genuine, signed completion over the limit with 413 and changes nothing; the same under the limit completes the job', async () => {
    stack.setSimForThisTest({ taskMs: 60_000, faults: [{ kind: 'no-webhook' }] });
    const handle = song('a song that waits for its webhook');
    await handle.waitForResponse();
    const job = await vi.waitFor(async () => {
      const row = await latestJob();
      return found(row?.upstreamTaskId && row.request.prompt === 'a song that waits for its webhook' ? row : undefined, 'the song submitted');
    }, 10_000);
    const tooLargeBefore = parseSamples(await scrape()).get('musicbot_webhooks_total{outcome="too_large"}') ?? 0;

    const envelope = { code: 200, message: 'success', status: 'SUCCESS', task_id: job.upstreamTaskId, data: [{ clip_id: 'c1', audio_url: 'https://cdn.example/c1.m4a', title: TITLE }] };
    const bare = JSON.stringify({ ...envelope, padding: '' });
    const over = JSON.stringify({ ...envelope, padding: 'x'.repeat(WEBHOOK_BODY_LIMIT - Buffer.byteLength(bare) + 1) });
    expect(Buffer.byteLength(over)).toBe(WEBHOOK_BODY_LIMIT + 1);
    expect((await post(job.id, over, signed(job.webhookSecret!, over))).status).toBe(413);
    const chunked = await fetch(`${base}/webhooks/music/${job.id}`, { method: 'POST', headers: { 'content-type': 'application/json' }, ...streamed(WEBHOOK_BODY_LIMIT + 64 * 1024) });
    expect(chunked.status).toBe(413);

    expect((await jobRow(stack.db.db, job.id))?.state).toBe('submitted');
    expect(await stack.db.db.select().from(webhookEvents).where(eq(webhookEvents.jobId, job.id))).toEqual([]);
    expect(parseSamples(await scrape()).get('musicbot_webhooks_total{outcome="too_large"}')).toBe(tooLargeBefore + 2);

    const under = JSON.stringify({ ...envelope, padding: 'x'.repeat(WEBHOOK_BODY_LIMIT - Buffer.byteLength(bare)) });
    expect(Buffer.byteLength(under)).toBe(WEBHOOK_BODY_LIMIT);
    expect((await post(job.id, under, signed(job.webhookSecret!, under))).status).toBe(200);
    await vi.waitFor(async () => found((await jobRow(stack.db.db, job.id))?.state === 'succeeded', 'the job completed by the webhook'), 10_000);
  });

  it('answers a stranger 404 for a job it does not know, 401 for a forged signature, and 404 to GET', async () => {
    const job = await latestJob();
    const body = JSON.stringify({ code: 200, status: 'SUCCESS', task_id: 'forged', data: [] });
    expect((await post('not-a-job', body)).status).toBe(404);
    expect((await post('00000000-0000-4000-8000-000000000000', body, signed('any', body))).status).toBe(404);
    expect((await post(job!.id, body, signed('not-the-secret', body))).status).toBe(401);
    expect((await post(job!.id, body)).status).toBe(401);
    expect((await fetch(`${base}/webhooks/music/${job!.id}`)).status).toBe(404);
  });
});

describe('the GET routes and every other path', () => {
  it('serves /healthz, /readyz and /livez to anyone, reading no body', async () => {
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    expect((await fetch(`${base}/livez`)).status).toBe(200);
    expect(await getWithBody('/healthz', 2 * WEBHOOK_BODY_LIMIT)).toBe(200);
    expect(await getWithBody('/livez', 2 * WEBHOOK_BODY_LIMIT)).toBe(200);
  });

  it('answers 404 to a small body on a path or method it does not serve, and 413 past the default limit', async () => {
    for (const path of ['/metrics', '/healthz', '/nothing-here']) {
      expect((await fetch(`${base}${path}`, { method: 'POST', body: 'x' })).status, path).toBe(404);
      expect((await fetch(`${base}${path}`, { method: 'POST', body: 'x'.repeat(DEFAULT_BODY_LIMIT + 1) })).status, path).toBe(413);
    }
  });
});

describe('/metrics', () => {
  it('names no guild, channel or member, nor what a member typed', async () => {
    await stack.setBalance(3);
    onTestFinished(() => stack.setBalance(500));
    const refused = stack.emulator.runCommand({ guildId: stack.guild.id, channelId: stack.otherChannelId, userId: stack.members.bob, name: 'song', options: { prompt: PROMPT } });
    await refused.waitForResponse();
    const text = await scrape();
    // Something to find: the commands and webhooks above were counted.
    expect(text).toMatch(/musicbot_commands_total\{command="song",outcome="accepted"/);
    expect(text).toMatch(/musicbot_commands_total\{command="song",outcome="refused"/);
    const secrets = [stack.guild.id, stack.guild.name, stack.channelId, stack.otherChannelId, ...Object.values(stack.members), 'alice', 'bob', PROMPT, TITLE, stack.emulator.applicationId];
    for (const secret of secrets) expect(text, secret).not.toContain(secret);
    const job = await latestJob();
    expect(text).not.toContain(job!.id);
  });

  it('with METRICS_TOKEN answers only its bearer, on the http server and on METRICS_PORT', async () => {
    const token = 'metrics-token-of-the-surface-test';
    const { db, redis, queues } = app.deps;
    const servers = [
      buildHttpServer({ db, redis, queues, metrics: createMetrics(), logger: silentLogger, metricsToken: token }),
      buildOpsServer({ db, redis, queues, metrics: createMetrics(), logger: silentLogger, metricsToken: token }),
    ];
    onTestFinished(() => Promise.all(servers.map((server) => server.close())).then(() => undefined));
    for (const server of servers) {
      const none = await server.inject({ method: 'GET', url: '/metrics' });
      expect(none.statusCode).toBe(401);
      expect(none.headers['www-authenticate']).toMatch(/^Bearer/);
      expect(none.body).not.toContain('musicbot_');
      for (const authorization of [`Bearer ${token}x`, `Bearer ${token.slice(0, -1)}`, `Basic ${token}`, token]) {
        expect((await server.inject({ method: 'GET', url: '/metrics', headers: { authorization } })).statusCode, authorization).toBe(401);
      }
      const bearer = await server.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${token}` } });
      expect(bearer.statusCode).toBe(200);
      expect(bearer.body).toContain('musicbot_');
      // Health stays open: a load balancer carries no token.
      expect((await server.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    }
  });
});
