/**
 * The bot's HTTP server: the music service's webhooks, `/healthz`, `/readyz`, `/livez` and `/metrics`. A
 * webhook is checked (job, signature, body) before anything changes, then queued; a repeat is a
 * 2xx no-op. docs/operations.md lists every route, its body limit and its answer to a stranger.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Queue } from 'bullmq';
import { AggregatorRegistry } from 'prom-client';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { eq } from 'drizzle-orm';
import { z } from 'zod';
import type { RedisClient } from '../queue/connection.js';
import type { Database } from '../db/client.js';
import { webhookEvents } from '../db/schema.js';
import { countJobsByKindAndState, webhookTargetOf } from '../pipeline/job-rows.js';
import type { Logger } from '../logger.js';
import { exportDeploymentGauges, type Metrics, type MetricsJson } from '../metrics.js';
import { normaliseWebhookPayload, verifyWebhookSignature } from '../music-api/index.js';
import type { Queues } from '../queue/queues.js';
import { WEBHOOK_ROUTE_PREFIX } from '../webhook-address.js';
import { oldestWaitingSeconds, readGatewayRecord, setShardCoverageGauges, shardCoverage } from '../queue/health-records.js';
import { registerHealthRoutes, within, type HealthDeps, type Lifecycle } from './health-routes.js';
import { createRefusalLog, type RefusalLog } from './refusal-log.js';
import { refreshAccountGauges } from '../pipeline/account.js';
import { registerInteractionsRoute, type InteractionsRouteOptions } from './interactions.js';
import { registerWebhookEventsRoute, type WebhookEventsRouteOptions } from './webhook-events.js';
import type { ShardWatch } from '../discord/shard-watch.js';
import { registerDashboard, type DashboardDeps } from '../dashboard/routes.js';

export const WEBHOOK_BODY_LIMIT = 1024 * 1024;
/**
 * Any other request's body. The GET routes read none; a body sent to a path or method the
 * server does not serve is read up to this much and answered 404 (413 beyond).
 */
export const DEFAULT_BODY_LIMIT = 16 * 1024;
/**
 * How long a whole request, headers and body, may take to arrive, so that a sender trickling
 * bytes cannot hold a connection open. Why: docs/decisions/http-surface.md
 */
export const REQUEST_TIMEOUT_MS = 10_000;

export interface HttpServerDeps {
  readonly db: Database;
  readonly redis: RedisClient;
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
  /** DISCORD_PUBLIC_KEY set: serve Discord's `POST /webhook-events` (entitlement events over HTTP). */
  readonly webhookEvents?: Omit<WebhookEventsRouteOptions, 'logger' | 'logRefusal'>;
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
  /** This process's gateway shards: sampled for each scrape, and `/readyz` fails while one is down past its grace. */
  readonly shards?: Pick<ShardWatch, 'readiness' | 'sample'>;
  /** The metrics of this process's other threads (the workers'), summed with its own on `/metrics`. */
  readonly threadMetrics?: () => Promise<MetricsJson>;
  /** How long the deployment's gauges are reused between scrapes. @defaultValue GAUGES_MAX_AGE_MS */
  readonly gaugesMaxAgeMs?: number;
  /** The health checks' own way to Postgres (see `HealthDeps`). @defaultValue `select 1` through `db` */
  readonly pingPostgres?: () => Promise<unknown>;
  /** What `/readyz` requires of Postgres and Redis for this role (see `HealthDeps`). @defaultValue both */
  readonly readyNeeds?: HealthDeps['readyNeeds'];
  /** What `/livez` answers (see `HealthDeps`). @defaultValue always live */
  readonly liveness?: HealthDeps['liveness'];
  /** DISCORD_CLIENT_SECRET and PUBLIC_URL set: serve the moderators' dashboard under `/dashboard`. */
  readonly dashboard?: DashboardDeps;
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
    const job = await webhookTargetOf(deps.db, parsedId.data);
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
    // The state comes from the signed body alone; a header that says otherwise is only noted.
    if (headerContradicts(event.headerEvent, event.status.state)) {
      deps.logger.info({ jobId: job.id, headerEvent: event.headerEvent, state: event.status.state }, 'webhook header contradicts its signed body; the body decides');
    }
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
  if (deps.webhookEvents) registerWebhookEventsRoute(app, { ...deps.webhookEvents, logger: deps.logger, logRefusal });
  if (deps.dashboard) registerDashboard(app, deps.dashboard);

  if (deps.opsRoutes !== false) registerOpsRoutes(app, { ...deps, deploymentGauges: true });
  return app;
}

/** Whether X-Webhook-Event names an end (`*.failed`, `*.completed`) other than the state the signed body gives. */
function headerContradicts(headerEvent: string | undefined, state: string): boolean {
  if (headerEvent === undefined) return false;
  if (headerEvent.endsWith('.failed')) return state !== 'failed';
  if (headerEvent.endsWith('.completed')) return state !== 'succeeded';
  return false;
}

function registerOpsRoutes(app: FastifyInstance, deps: Omit<HttpServerDeps, 'interactions' | 'requestTimeoutMs'>): void {
  registerHealthRoutes(app, deps);
  const gauges = deps.deploymentGauges ? atMostEvery(gaugeRefresher(deps), deps.gaugesMaxAgeMs ?? GAUGES_MAX_AGE_MS) : undefined;
  app.get('/metrics', { onRequest: metricsGuard(deps.metricsToken) }, async (_request, reply) => {
    if (gauges) {
      exportDeploymentGauges(deps.metrics);
      // A scrape while Redis or Postgres is gone answers with the last values rather than hang.
      await within(gauges(), REFRESH_TIMEOUT_MS).catch((err: unknown) => deps.logger.warn({ err }, 'could not refresh metrics'));
    }
    deps.shards?.sample();
    const { registry } = deps.metrics;
    if (!deps.threadMetrics) return reply.type(registry.contentType).send(await registry.metrics());
    // Each thread counts its own part: counters and histograms add up (process-wide figures come from this thread alone).
    const [own, others] = await Promise.all([registry.getMetricsAsJSON(), deps.threadMetrics()]);
    return reply.type(registry.contentType).send(await AggregatorRegistry.aggregate([own, others]).metrics());
  });
}

/**
 * What a process serves on METRICS_PORT: `/healthz`, `/readyz`, `/livez` and its own `/metrics` (the
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
/**
 * The gauges read from Redis and Postgres are read again at most this often, whatever the
 * number of scrapers: under Prometheus's usual 15 s interval every scrape reads them fresh, and
 * a second Prometheus, a dashboard or a burst of scrapes costs nothing more.
 */
export const GAUGES_MAX_AGE_MS = 10_000;

/**
 * `refresh`, run at most once per `maxAgeMs` and one run at a time: a caller during a run
 * waits for that run, a caller soon after a good one is answered at once; after a failure the
 * next caller tries again.
 */
export function atMostEvery(refresh: () => Promise<void>, maxAgeMs: number, now: () => number = Date.now): () => Promise<void> {
  let running: Promise<void> | undefined;
  let doneAt = Number.NEGATIVE_INFINITY;
  return () => {
    if (running) return running;
    if (now() - doneAt < maxAgeMs) return Promise.resolve();
    running = refresh()
      .then(() => void (doneAt = now()))
      .finally(() => (running = undefined));
    return running;
  };
}

/** Jobs in a final state only pile up: they are counted again at most this often. */
export const FINISHED_COUNTS_MAX_AGE_MS = 5 * 60_000;

/**
 * Reads the gauges of the deployment: queue depths and ages and the gateway shards missing from
 * Redis, jobs by kind and state from Postgres. The open jobs (few, on a partial index) are counted at every call; the
 * finished ones, which grow with history, at most every {@link FINISHED_COUNTS_MAX_AGE_MS}.
 */
function gaugeRefresher(deps: Omit<HttpServerDeps, 'interactions' | 'requestTimeoutMs'>): () => Promise<void> {
  const { queues, metrics, db } = deps;
  let finished: Array<{ kind: string; state: string; n: number }> = [];
  const countFinished = atMostEvery(async () => {
    finished = await countJobsByKindAndState(db, 'finished');
  }, FINISHED_COUNTS_MAX_AGE_MS);
  return async () => {
    const readQueue = async (queue: Queue) => {
      const [counts, oldest] = await Promise.all([queue.getJobCounts('waiting', 'delayed', 'active', 'failed'), oldestWaitingSeconds(queue, deps.redis)]);
      for (const [state, value] of Object.entries(counts)) metrics.queueDepth.set({ queue: queue.name, state }, value);
      metrics.queueOldestWaiting.set({ queue: queue.name }, oldest);
    };
    const readJobs = async () => {
      const [open] = await Promise.all([countJobsByKindAndState(db, 'open'), countFinished()]);
      metrics.jobsOpen.reset();
      for (const row of [...open, ...finished]) metrics.jobsOpen.set({ kind: row.kind, state: row.state }, row.n);
    };
    const readGateway = async () => {
      const record = await readGatewayRecord(deps.redis, queues.prefix);
      setShardCoverageGauges(metrics, shardCoverage(record, deps.now?.() ?? Date.now()));
    };
    // Side by side: the Redis round trips and the two Postgres reads do not wait on each other.
    await Promise.all([...[queues.submit, queues.poll, queues.complete, queues.deliver].map(readQueue), readJobs(), readGateway(), refreshAccountGauges(db, metrics)]);
  };
}

/**
 * Closes `server`: it takes no new request, and those in hand finish until `deadline`
 * (`performance.now()`, infinite for no limit); any still open then is cut off, and its sender
 * (the music service, Discord) sends it again or the poll finds its result. A kept-alive
 * connection is closed as soon as its request is answered: left open, it would hold the close
 * for the server's keep-alive timeout (72 s in Fastify), past the stop's limit.
 */
export async function closeWithin(server: FastifyInstance, deadline: number): Promise<void> {
  const idle = setInterval(() => server.server.closeIdleConnections(), 50);
  const cut = Number.isFinite(deadline) ? setTimeout(() => server.server.closeAllConnections(), Math.max(0, deadline - performance.now())) : undefined;
  try {
    await server.close();
  } finally {
    clearInterval(idle);
    clearTimeout(cut);
  }
}
