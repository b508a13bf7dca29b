/**
 * The bot's HTTP server: the music service's webhooks, `/healthz`, `/readyz` (health.ts) and `/metrics`.
 * A webhook is checked (job, signature, body) before anything changes, answered fast, and
 * handed to the queue; a repeated one is a 2xx no-op. docs/operations.md lists every route
 * with its body limit and what it answers a stranger.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { eq, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Redis } from 'ioredis';
import type { Database } from '../db/client.js';
import { jobs, webhookEvents } from '../db/schema.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import { normaliseWebhookPayload, verifyWebhookSignature } from '../music-api/index.js';
import type { Queues } from '../queue/queues.js';
import { WEBHOOK_ROUTE_PREFIX } from '../pipeline/upstream.js';
import { oldestWaitingSeconds } from '../queue/health.js';
import { registerHealthRoutes, within, type Lifecycle } from './health.js';
import { createRefusalLog, type RefusalLog } from './refusal-log.js';
import { refreshAccountGauges } from '../pipeline/account.js';
import { registerInteractionsRoute, type InteractionsRouteOptions } from './interactions.js';

export const WEBHOOK_BODY_LIMIT = 1024 * 1024;
/**
 * Any other request's body. The GET routes read none; a body sent to a path or method the
 * server does not serve is read up to this much and answered 404 (413 beyond).
 */
export const DEFAULT_BODY_LIMIT = 16 * 1024;
/**
 * How long a whole request, headers and body, may take to arrive. A webhook is a few kilobytes;
 * without a limit (Fastify's default) a sender that trickles one byte a second holds its
 * connection and buffered body open for as long as it likes, and a few thousand such senders
 * hold the server.
 */
export const REQUEST_TIMEOUT_MS = 10_000;

export interface HttpServerDeps {
  readonly db: Database;
  readonly redis: Redis;
  readonly queues: Queues;
  readonly metrics: Metrics;
  readonly logger: Logger;
  readonly now?: () => number;
  /** @defaultValue REQUEST_TIMEOUT_MS */
  readonly requestTimeoutMs?: number;
  /** Where the process is in its life, for `/readyz`. @defaultValue () => 'running' */
  readonly lifecycle?: () => Lifecycle;
  /** This process runs the gateway: `/healthz` reports a missing heartbeat as a gateway down. */
  readonly expectGateway?: boolean;
  /** `INTERACTIONS=http`: serve Discord's `POST /interactions`. */
  readonly interactions?: Omit<InteractionsRouteOptions, 'logger' | 'logRefusal'>;
  /** METRICS_TOKEN: when set, `/metrics` answers only `Authorization: Bearer <token>`. */
  readonly metricsToken?: string;
  /**
   * Serve `/metrics`, `/healthz` and `/readyz` here. False when METRICS_PORT puts them on the ops
   * server, off the public port. @defaultValue true
   */
  readonly opsRoutes?: boolean;
  /** The ops server of the http role: its `/metrics` also carries the deployment's gauges (queues, jobs, account). */
  readonly deploymentGauges?: boolean;
  /** Where strangers' refused requests are logged. @defaultValue createRefusalLog(logger) */
  readonly refusalLog?: RefusalLog;
}

const jobIdSchema = z.uuid();

export function buildHttpServer(deps: HttpServerDeps): FastifyInstance {
  const requestTimeout = deps.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
  const app = Fastify({
    logger: false,
    bodyLimit: DEFAULT_BODY_LIMIT,
    requestTimeout,
    // Node checks the limits every 30 s by default, which would let a trickle run three times as long.
    http: { headersTimeout: requestTimeout, connectionsCheckingInterval: Math.min(1_000, requestTimeout) },
  });
  // Signatures are computed over the exact bytes received, so the body stays raw.
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

  // Whatever fails outside the verdicts below (a body too large, Postgres gone) is counted too: each request once.
  const webhookErrorHandler = (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const status = typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 600 ? error.statusCode : 500;
    deps.metrics.webhooks.inc({ outcome: status === 413 ? 'too_large' : status < 500 ? 'bad_request' : 'error' });
    // Postgres gone, most likely: the service sends the webhook again, and polling backs it up.
    if (status >= 500) deps.logger.warn({ err: error, jobId: (request.params as { jobId?: string }).jobId }, 'webhook failed; left to a retry');
    return reply.code(status).send({ error: status >= 500 ? 'try again' : error.message });
  };

  const logRefusal = deps.refusalLog ?? createRefusalLog(deps.logger);
  app.post<{ Params: { jobId: string } }>(`${WEBHOOK_ROUTE_PREFIX}/:jobId`, { bodyLimit: WEBHOOK_BODY_LIMIT, errorHandler: webhookErrorHandler }, async (request, reply) => {
    const receivedAt = Date.now();
    const refuse = (status: number, outcome: string, error: string) => {
      deps.metrics.webhooks.inc({ outcome });
      logRefusal({ jobId: request.params.jobId, outcome, reason: `webhook ${outcome}` }, 'webhook refused');
      return reply.code(status).send({ error });
    };

    const parsedId = jobIdSchema.safeParse(request.params.jobId);
    if (!parsedId.success) return refuse(404, 'unknown_job', 'unknown job');
    const [job] = await deps.db
      .select({ id: jobs.id, secret: jobs.webhookSecret, taskId: jobs.upstreamTaskId })
      .from(jobs)
      .where(eq(jobs.id, parsedId.data));
    if (!job) return refuse(404, 'unknown_job', 'unknown job');
    // Past its retention (long finished): no webhook can change it any more.
    if (job.secret === null) return refuse(404, 'expired_job', 'unknown job');

    const rawBody = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
    const verification = verifyWebhookSignature({
      rawBody,
      secret: job.secret,
      headers: request.headers,
      ...(deps.now && { now: deps.now() }),
    });
    if (!verification.ok) return refuse(401, `bad_signature_${verification.reason}`, 'invalid signature');

    let event;
    try {
      event = normaliseWebhookPayload(rawBody, request.headers);
    } catch {
      return refuse(400, 'malformed', 'malformed body');
    }
    if (event.taskId && job.taskId && event.taskId !== job.taskId) return refuse(400, 'task_mismatch', 'task does not match job');
    if (event.status.state !== 'succeeded' && event.status.state !== 'failed') {
      deps.metrics.webhooks.inc({ outcome: 'not_final' });
      return reply.code(202).send({ ok: true });
    }

    const taskId = event.taskId ?? job.taskId ?? undefined;
    // Keyed by what the signature covers, not by X-Webhook-Id: the id is outside the signature, so
    // a captured webhook sent again under a fresh id would otherwise be taken, and queued, as news.
    // A task has one final state, so this is also the real service's retries and repeats.
    const eventKey = `task:${taskId ?? job.id}:${event.status.state}`;
    const inserted = await deps.db
      .insert(webhookEvents)
      .values({ eventKey, jobId: job.id })
      .onConflictDoNothing()
      .returning({ id: webhookEvents.id });
    if (inserted.length === 0) {
      deps.metrics.webhooks.inc({ outcome: 'duplicate' });
      return reply.code(200).send({ ok: true, duplicate: true });
    }
    try {
      await deps.queues.enqueueComplete({
        jobId: job.id,
        status: event.status,
        ...(taskId && { taskId }),
        source: 'webhook',
        receivedAt,
      });
    } catch (err) {
      // Not taken: forget the event so the service's retry (or the poll) can bring it again.
      await deps.db.delete(webhookEvents).where(eq(webhookEvents.eventKey, eventKey));
      deps.logger.error({ err, jobId: job.id }, 'could not enqueue a webhook');
      deps.metrics.webhooks.inc({ outcome: 'unavailable' });
      return reply.code(503).send({ error: 'try again' });
    }
    deps.metrics.webhooks.inc({ outcome: 'accepted' });
    return reply.code(200).send({ ok: true });
  });

  if (deps.interactions) registerInteractionsRoute(app, { ...deps.interactions, logger: deps.logger, logRefusal });

  if (deps.opsRoutes !== false) registerOpsRoutes(app, { ...deps, deploymentGauges: true });
  return app;
}

function registerOpsRoutes(app: FastifyInstance, deps: Omit<HttpServerDeps, 'interactions' | 'requestTimeoutMs'>): void {
  registerHealthRoutes(app, deps);
  app.get('/metrics', { onRequest: metricsGuard(deps.metricsToken) }, async (_request, reply) => {
    // A scrape while Redis or Postgres is gone answers with the last values rather than hang.
    if (deps.deploymentGauges) {
      await within(refreshGauges(deps), REFRESH_TIMEOUT_MS).catch((err: unknown) => deps.logger.warn({ err }, 'could not refresh metrics'));
    }
    return reply.type(deps.metrics.registry.contentType).send(await deps.metrics.registry.metrics());
  });
}

/**
 * What a process serves on METRICS_PORT: `/healthz`, `/readyz` and its own `/metrics` (the
 * counters and histograms it keeps: a gateway's commands and first answers, a worker's
 * submissions and deliveries, and the process's CPU and memory). The gauges read from Postgres
 * and Redis are the deployment's, not the process's: only the http role's carries them
 * (`deploymentGauges`), and with METRICS_PORT set its public port no longer serves any of these.
 */
export function buildOpsServer(deps: Omit<HttpServerDeps, 'interactions' | 'requestTimeoutMs'>): FastifyInstance {
  const app = Fastify({ logger: false, bodyLimit: DEFAULT_BODY_LIMIT, requestTimeout: REQUEST_TIMEOUT_MS, http: { headersTimeout: REQUEST_TIMEOUT_MS } });
  registerOpsRoutes(app, deps);
  return app;
}

/** Without a token, anyone who reaches the port may scrape; with one, only `Authorization: Bearer <token>`. */
function metricsGuard(token: string | undefined) {
  // Compared as digests, so the comparison takes the same time whatever the length given.
  const expected = token === undefined ? undefined : createHash('sha256').update(token).digest();
  return async (request: FastifyRequest, reply: FastifyReply) => {
    if (!expected) return;
    const given = /^Bearer +(\S+) *$/i.exec(request.headers.authorization ?? '')?.[1];
    if (given !== undefined && timingSafeEqual(createHash('sha256').update(given).digest(), expected)) return;
    return reply.code(401).header('www-authenticate', 'Bearer realm="metrics"').send({ error: 'a bearer token is required' });
  };
}

/** How long a scrape waits for the gauges read at scrape time. */
const REFRESH_TIMEOUT_MS = 2_000;

/** Gauges read at scrape time: queue depths and ages from Redis, jobs by state from Postgres. */
async function refreshGauges(deps: HttpServerDeps): Promise<void> {
  const { queues, metrics } = deps;
  for (const queue of [queues.submit, queues.poll, queues.complete, queues.deliver]) {
    const [counts, oldest] = await Promise.all([queue.getJobCounts('waiting', 'delayed', 'active', 'failed'), oldestWaitingSeconds(queue, deps.redis)]);
    for (const [state, value] of Object.entries(counts)) metrics.queueDepth.set({ queue: queue.name, state }, value);
    metrics.queueOldestWaiting.set({ queue: queue.name }, oldest);
  }
  const rows = await deps.db
    .select({ kind: jobs.kind, state: jobs.state, n: sql<number>`count(*)::int` })
    .from(jobs)
    .groupBy(jobs.kind, jobs.state);
  metrics.jobsOpen.reset();
  for (const row of rows) metrics.jobsOpen.set({ kind: row.kind, state: row.state }, row.n);
  await refreshAccountGauges(deps.db, metrics);
}
