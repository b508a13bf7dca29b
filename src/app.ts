/**
 * The composition root: builds the bot from its parts for the configured role and hands
 * each part what it needs. Nothing below this file reads configuration on its own.
 */
import type { FastifyInstance } from 'fastify';
import { modelListNotice, type Config } from './config.js';
import { connectDatabase, connectHealthProbe } from './db/client.js';
import { runMigrations } from './db/migrate.js';
import { createDiscordDelivery, type DiscordDelivery } from './discord-rest/discord-delivery.js';
import { createBuyerMessages } from './discord-rest/buyer-messages.js';
import { buildHttpServer, buildOpsServer, closeWithin, type HttpServerDeps } from './http/server.js';
import type { Logger } from './logger.js';
import { createMetrics } from './metrics.js';
import { createModerationService } from './safety/moderation-service.js';
import { MusicApiClient } from './music-api/index.js';
import { loadGuild } from './guilds/settings.js';
import { createPipeline } from './pipeline/create-pipeline.js';
import { DEFAULT_SETTINGS, type PipelineDeps, type PipelineSettings } from './pipeline/deps.js';
import type { Pipeline } from './pipeline/pipeline.js';
import { reconcile } from './pipeline/reconcile.js';
import { closeRedis, connectRedis, rateLimitedErrorLog } from './queue/connection.js';
import { createPendingChoices } from './discord/pending-choices.js';
import { createQueues } from './queue/queues.js';
import { endDueContests } from './pipeline/contests.js';
import { DEFAULT_MAINTENANCE_EVERY_MS, keepMaintenanceScheduled } from './queue/maintenance.js';
import { startWorkers, type Workers } from './pipeline/workers.js';
import type { WorkersThread } from './workers-thread.js';
import type { Players } from './voice/start.js';
import { startInfrastructure } from './embedded/infrastructure.js';
import type { Lifecycle } from './http/health-routes.js';
import { createServiceAnswerRecorder } from './queue/health-records.js';
import { createFrontFirst } from './pipeline/front-first.js';
import { ShardWatch } from './discord/shard-watch.js';
import { createVoiceControl } from './voice/control.js';
import { createCatalog } from './premium/catalog.js';
import { createEntitlementsApi } from './discord-rest/entitlements-api.js';
import { createAutomodApi } from './discord-rest/automod-api.js';
import { bumpAutomodVersion, createAutomodRules } from './guilds/automod.js';
import { createMakeRequest, type RestTraffic } from './discord-rest/rest-requests.js';
import { createRequestBudget } from './queue/request-budget.js';
import { commandSettings, type BaseCommandContext } from './discord/context.js';
import { dataFacades } from './discord/data.js';
import { createPurchases, type Purchases } from './premium/purchases.js';
import { startConsumeRetries } from './premium/consume-retries.js';
import { watchEventLoop, type Liveness } from './http/liveness.js';
import { createGuildReads } from './discord-rest/guild-reads.js';

export interface App {
  readonly deps: PipelineDeps;
  readonly pipeline: Pipeline;
  /** The HTTP server's address when this process runs the http role. */
  readonly httpUrl: string | undefined;
  /**
   * With the gateway: resolves once each of its shards has been ready and the voice players run
   * ("gateway ready"), or once it gave up; start-up does not wait for it. Undefined without the gateway.
   */
  readonly gatewayReady: Promise<void> | undefined;
  /**
   * Stops every part, once. `drainMs`: how long the public server keeps answering after
   * `/readyz` turned 503 and before anything stops (main passes SHUTDOWN_DRAIN_MS); a process
   * without the http role does not wait it. `withinMs`: how long the whole stop may take (main
   * passes what is left of its limit); the workers then wait for the entries in hand only as
   * long as leaves {@link STOP_RESERVE_MS} for the parts after them. Without it they wait for good.
   */
  stop(options?: { readonly drainMs?: number; readonly withinMs?: number }): Promise<void>;
}

/**
 * The part of a bounded stop kept for what closes after the workers (pools, connections, servers,
 * an embedded Postgres): an entry still in hand when the rest is used up is left to the next process.
 */
export const STOP_RESERVE_MS = 5_000;

/** Of the reserve, what the parts of this thread keep once the workers' thread has stopped. */
const THREAD_STOP_MARGIN_MS = 2_500;

/** A part that takes longer than this to stop is named in a warning, while it still runs. */
const SLOW_STOP_MS = 5_000;

/** Overrides for tests and benchmarks, and how main runs the parts (`workersInThread`). */
export interface AppOverrides {
  readonly settings?: Partial<PipelineSettings>;
  readonly queuePrefix?: string;
  readonly discord?: DiscordDelivery;
  readonly reconcileIntervalMs?: number;
  readonly lockDurationMs?: number;
  readonly now?: () => Date;
  /** Runs exactly these parts, whatever ROLE says (tests run worker and http without a gateway). */
  readonly parts?: { readonly gateway: boolean; readonly worker: boolean; readonly http: boolean };
  /**
   * Where a front (gateway or http) runs here too, the workers run on a thread of their own
   * (workers-thread.ts); main passes WORKERS_IN_THREAD. Without it they share the front's loop.
   */
  readonly workersInThread?: boolean;
  /** This app is that thread: the process-wide metrics (CPU, memory) are its host's. */
  readonly inThread?: boolean;
}

export function settingsFromConfig(config: Config, overrides: Partial<PipelineSettings> = {}): PipelineSettings {
  return {
    ...DEFAULT_SETTINGS,
    publicUrl: config.publicUrl,
    upstreamMaxInFlight: config.upstreamMaxInFlight,
    pollDeadlineMs: config.pollDeadlineMinutes * 60_000,
    startingCredits: config.startingCredits,
    attachAudio: config.attachAudio,
    pollIntervalMs: config.pollIntervalMs,
    expectedSeconds: { ...DEFAULT_SETTINGS.expectedSeconds, ...config.expectedSeconds },
    account: { lowCredits: config.accountLowCredits, alertChannelId: config.accountAlertChannelId, ownerIds: config.botOwnerIds },
    webhookEventsRetentionDays: config.webhookEventsRetentionDays,
    moderationRetentionDays: config.moderationRetentionDays,
    notifyAfterMs: config.notifyAfterSeconds * 1000,
    contestDayMs: config.contestDaySeconds * 1000,
    ...overrides,
  };
}

export async function startApp(config: Config, processLogger: Logger, overrides: AppOverrides = {}): Promise<App> {
  const runs = overrides.parts ?? {
    gateway: config.role === 'all' || config.role === 'gateway',
    worker: config.role === 'all' || config.role === 'worker',
    http: config.role === 'all' || config.role === 'http',
  };
  // A gateway process's lines name its shards (with neither SHARD_IDS nor SHARD_COUNT it holds them all).
  const shardIds = runs.gateway ? (config.shardIds ?? (config.shardCount === undefined ? undefined : Array.from({ length: config.shardCount }, (_, id) => id))) : undefined;
  const logger = shardIds ? processLogger.child({ shards: shardIds }) : processLogger;
  // What stop() runs, last started first; each part named for the warning about a slow one.
  const stops: Array<{ readonly part: string; readonly stop: (deadline: number) => Promise<void> }> = [];
  const onStop = (part: string, stop: (deadline: number) => Promise<void>) => void stops.push({ part, stop });
  // For /readyz: ready once everything below has started, and no longer from the moment stop() begins.
  let lifecycle: Lifecycle = 'starting';
  let gatewayReady: Promise<void> | undefined;
  // For /livez: undefined (live) until start-up has finished.
  let checkLiveness: Liveness['check'] | undefined;
  // Once, however often it is called: a second call waits for the first.
  let stopped: Promise<void> | undefined;
  const stopAll = (drainMs = 0, withinMs = Number.POSITIVE_INFINITY) =>
    (stopped ??= (async () => {
      // When the stop must be over (performance.now()), less what the last parts need.
      const deadline = performance.now() + withinMs - STOP_RESERVE_MS;
      lifecycle = 'stopping';
      // /readyz answers 503 from now on; load balancers take the process out while it still answers.
      if (drainMs > 0) {
        logger.info({ drainMs }, 'draining');
        await new Promise((resolve) => setTimeout(resolve, drainMs));
      }
      for (const { part, stop } of stops.reverse()) {
        const slow = setTimeout(() => logger.warn({ part, afterMs: SLOW_STOP_MS }, 'a part is slow to stop'), SLOW_STOP_MS);
        await stop(deadline).catch((err: unknown) => logger.error({ err, part }, 'stop step failed'));
        clearTimeout(slow);
      }
    })());

  const notice = modelListNotice(config);
  if (notice !== undefined) logger.warn({ variable: 'MUSIC_MODELS', models: config.musicModels.length }, notice);

  try {
    const infrastructure = await startInfrastructure(config, logger);
    onStop('infrastructure', () => infrastructure.stop());
    if (config.migrateOnStart) {
      const { applied } = await runMigrations(infrastructure.databaseUrl, { lockTimeoutMs: config.migrationLockTimeoutMs, connectTimeoutMs: config.databaseConnectTimeoutMs });
      if (applied > 0) logger.info({ applied }, 'database migrated');
    }

    const poolLimits = { statementTimeoutMs: config.databaseStatementTimeoutMs, connectTimeoutMs: config.databaseConnectTimeoutMs };
    const database = connectDatabase(infrastructure.databaseUrl, { max: config.databasePoolSize, applicationName: `music-bot ${config.role}`, ...poolLimits });
    onStop('database', () => database.close());
    const redis = connectRedis(infrastructure.redis, { name: 'main', logger });
    onStop('redis', () => closeRedis(redis));
    const queues = createQueues(redis, {
      prefix: overrides.queuePrefix ?? config.queuePrefix,
      onError: rateLimitedErrorLog({ name: 'queues', logger }, 'queue error'),
    });
    onStop('queues', () => queues.close());

    // The gauges read from Postgres and Redis only where /metrics refreshes them: the http role.
    const metrics = createMetrics({ defaultMetrics: !overrides.inThread, deploymentGauges: runs.http });
    // Discord's global REST limit is per bot token: every client of every process takes its
    // permits from one budget in Redis, and counts Discord's answers (docs/decisions/discord-rest-budget.md).
    const discordTraffic: RestTraffic = {
      budget: createRequestBudget({ redis, prefix: queues.prefix, name: 'discord-rest', perSecond: config.discordRestRequestsPerSecond, logger }),
      metrics,
    };
    const discordRequest = createMakeRequest(discordTraffic);
    // Purchases through Discord: only when something is for sale.
    const catalog = createCatalog(config);
    let purchases: Purchases | undefined;
    if (catalog.skuIds.length > 0) {
      purchases = createPurchases({
        db: database.db,
        api: createEntitlementsApi({ apiUrl: config.discordApiUrl, token: config.discordToken, applicationId: config.discordApplicationId, traffic: discordTraffic }),
        catalog,
        logger,
        applicationId: config.discordApplicationId,
        startingCredits: config.startingCredits,
        packClaimMinutes: config.packClaimMinutes,
        consumeRetries: queues,
        buyerMessages: createBuyerMessages({ apiUrl: config.discordApiUrl, token: config.discordToken, traffic: discordTraffic }),
        ...(overrides.now && { now: overrides.now }),
      });
      const stopPurchases = purchases;
      onStop('purchases', () => stopPurchases.stop());
    }
    const deps: PipelineDeps = {
      db: database.db,
      queues,
      redis,
      musicApi: new MusicApiClient({
        baseUrl: config.musicApiUrl,
        apiKey: config.musicApiKey,
        timeoutMs: config.musicApiTimeoutMs,
        models: config.musicModels,
        personaSongCost: config.personaSongCost,
        logger,
        // For /healthz, which may run in another process: when the service last answered, and how.
        onAnswer: createServiceAnswerRecorder(redis, queues.prefix, logger),
      }),
      discord: overrides.discord ?? createDiscordDelivery({ apiUrl: config.discordApiUrl, token: config.discordToken, traffic: discordTraffic }),
      logger,
      metrics,
      settings: settingsFromConfig(config, overrides.settings),
      now: overrides.now ?? (() => new Date()),
      ...(purchases && { purchases }),
      ...(config.moderation && {
        moderation: {
          service: createModerationService({ url: config.moderation.url, apiKey: config.moderation.apiKey, timeoutMs: config.moderation.timeoutMs }),
          whenDown: config.moderation.whenDown,
        },
      }),
      // Servers' AutoMod rules, read from Discord only for a guild that turned them on.
      automod: createAutomodRules({ api: createAutomodApi({ apiUrl: config.discordApiUrl, token: config.discordToken, traffic: discordTraffic }), logger }),
    };
    // With INTERACTIONS=http the gateway still runs (without routing interactions): voice needs it.
    const gatewayStarts = runs.gateway;
    // This process's shards, for its /readyz and /metrics; read once the gateway runs.
    const shards = gatewayStarts ? new ShardWatch({ graceMs: config.gatewayReadyGraceMs, metrics }) : undefined;
    const takesInteractions = (gatewayStarts && config.interactions === 'gateway') || (runs.http && config.interactions === 'http');
    // The workers on a thread of their own, beside a front: its loop serves members alone.
    const workersApart = Boolean(overrides.workersInThread) && runs.worker && (gatewayStarts || runs.http);
    let workersThread: WorkersThread | undefined;
    // Members' commands and the workers in one event loop: the commands go first (front-first.ts).
    const frontFirst = takesInteractions && runs.worker && !workersApart ? createFrontFirst({ observe: (waiting) => metrics.backgroundWaiting.set(waiting) }) : undefined;
    // A request submitted without its guild read (an operator's retry, a benchmark) opens the guild as a command does.
    const pipeline = createPipeline(deps, (guildId, options) => loadGuild(deps.db, guildId, { ...options, startingCredits: config.startingCredits }));
    // The options a command keeps while it asks which voice was meant (see pending-choices.ts).
    const pendingChoices = createPendingChoices(redis, queues.prefix);
    // Voice commands reach the player of the process that holds the guild's shard (src/voice).
    const voice = takesInteractions || gatewayStarts ? createVoiceControl({ redis, prefix: queues.prefix, logger }) : undefined;
    if (voice) onStop('voice control', () => voice.stop());
    // What every command handler is handed, over either way in (the router adds its logger and languages).
    const commandContext: BaseCommandContext = { settings: commandSettings(config), ...dataFacades(deps.db), logger, pipeline, metrics, frontFirst, pendingChoices, voice, purchases, automod: deps.automod };
    // What the public server and the ops server share: health, readiness and metrics. The
    // health checks reach Postgres on a connection of their own (it opens on the first probe).
    const healthProbe = connectHealthProbe(infrastructure.databaseUrl, `music-bot ${config.role}`, { connectTimeoutMs: config.databaseConnectTimeoutMs });
    onStop('health probe', () => healthProbe.close());
    const opsDeps = {
      db: deps.db,
      pingPostgres: healthProbe.ping,
      redis,
      queues,
      metrics,
      logger,
      lifecycle: () => lifecycle,
      expectGateway: gatewayStarts,
      metricsToken: config.metricsToken,
      shards,
      // Ready means able to do this role's work: only the workers need Redis for theirs. A gateway's
      // or http process's commands are answered and their jobs wait in Postgres for the reconciler;
      // a webhook refused while Redis is away is sent again by the service (docs/operations.md).
      readyNeeds: { postgres: true, redis: runs.worker },
      liveness: () => checkLiveness?.(),
      ...(workersApart && { threadMetrics: async () => (workersThread ? workersThread.metrics() : []) }),
    };
    let httpServer: FastifyInstance | undefined;
    let httpUrl: string | undefined;
    if (runs.http) {
      let interactions: HttpServerDeps['interactions'];
      if (config.interactions === 'http') {
        // Loaded only where interactions arrive: discord.js builds them from Discord's POSTs.
        const { createHttpInteractionReceiver } = await import('./discord/http-interactions.js');
        const { commands } = await import('../commands/index.js');
        const receiver = createHttpInteractionReceiver({
          commands,
          context: commandContext,
          discord: { apiUrl: config.discordApiUrl, token: config.discordToken },
          makeRequest: discordRequest,
        });
        // After the server has closed: the interactions in hand finish their follow-ups.
        onStop('http interactions', () => receiver.stop());
        interactions = { receiver, publicKey: config.discordPublicKey ?? '' };
      }
      httpServer = buildHttpServer({
        ...opsDeps,
        // METRICS_PORT takes metrics and health off the public port (see below).
        opsRoutes: config.metricsPort === undefined,
        ...(interactions && { interactions }),
        // Entitlement events over HTTP, signed with the application's key (src/http/webhook-events.ts).
        ...(config.discordPublicKey !== undefined && { webhookEvents: { publicKey: config.discordPublicKey, purchases } }),
        // The moderators' dashboard (src/dashboard): with DISCORD_CLIENT_SECRET and PUBLIC_URL.
        ...(config.dashboard && {
          dashboard: {
            options: { ...config.dashboard, apiUrl: config.discordApiUrl },
            db: deps.db,
            redis,
            prefix: queues.prefix,
            reads: createGuildReads({ apiUrl: config.discordApiUrl, token: config.discordToken, traffic: discordTraffic, maxAgeMs: config.dashboard.accessMaxAgeMs }),
            ownerIds: config.botOwnerIds,
            settings: { musicModels: config.musicModels, startingCredits: config.startingCredits },
            pipeline,
            logger,
          },
        }),
      });
      httpUrl = await httpServer.listen({ port: config.httpPort, host: '0.0.0.0' });
      logger.info({ port: config.httpPort }, 'http server listening');
      // Closing the server first stops taking webhooks; those in flight finish, within the stop's limit.
      onStop('http server', (deadline) => closeWithin(httpServer!, deadline));
    }

    if (config.metricsPort !== undefined) {
      // A gateway or worker process has counters of its own, and a load balancer or an
      // orchestrator needs its health too; the http role's go here, off its public port.
      const opsServer = buildOpsServer({ ...opsDeps, deploymentGauges: runs.http });
      await opsServer.listen({ port: config.metricsPort, host: config.metricsHost });
      logger.info({ port: config.metricsPort, host: config.metricsHost }, 'metrics and health listening');
      onStop('ops server', (deadline) => closeWithin(opsServer, deadline));
    }

    if (workersApart) {
      const { startWorkersThread } = await import('./workers-thread.js');
      // On the services started above; migrations done; its metrics served from here.
      const threadConfig: Config = { ...config, databaseUrl: infrastructure.databaseUrl, redis: infrastructure.redis, migrateOnStart: false, metricsPort: undefined };
      const thread = await startWorkersThread(
        {
          config: threadConfig,
          overrides: {
            ...(overrides.queuePrefix !== undefined && { queuePrefix: overrides.queuePrefix }),
            ...(overrides.reconcileIntervalMs !== undefined && { reconcileIntervalMs: overrides.reconcileIntervalMs }),
            ...(overrides.lockDurationMs !== undefined && { lockDurationMs: overrides.lockDurationMs }),
          },
        },
        { logger, metrics },
      );
      workersThread = thread;
      // The thread's own stop ends a little before this one's deadline, leaving part of the
      // reserve for the parts here; its pools and connections close in the rest of its own.
      onStop('workers thread', (deadline) => thread.stop(deadline - performance.now() + STOP_RESERVE_MS - THREAD_STOP_MARGIN_MS));
    } else if (runs.worker) {
      const workerConnection = connectRedis(infrastructure.redis, { name: 'workers', logger });
      onStop('workers\' redis', () => closeRedis(workerConnection));
      // Beside a front (gateway or http) the workers draw on a pool of their own: fifty
      // submissions waiting on their claims must not keep a member's command waiting for a
      // connection. A worker-only process has no front to protect.
      const workerDatabase = gatewayStarts || runs.http ? connectDatabase(infrastructure.databaseUrl, { max: config.databasePoolSize, applicationName: `music-bot ${config.role} workers`, ...poolLimits }) : undefined;
      if (workerDatabase) onStop('workers\' database', () => workerDatabase.close());
      const workerDeps: PipelineDeps = { ...deps, ...(workerDatabase && { db: workerDatabase.db }), ...(frontFirst && { frontFirst }) };
      await reconcile(workerDeps);
      // A contest whose deadline passed while no worker ran ends now, once.
      await endDueContests(workerDeps);
      const workers: Workers = startWorkers(workerDeps, workerConnection, {
        pollMaxPerSecond: config.pollMaxPerSecond,
        submitConcurrency: config.submitConcurrency,
        lockDurationMs: overrides.lockDurationMs ?? config.queueLockMs,
      });
      // Closing waits for the entries in hand, until the stop's deadline: an entry unfinished then
      // (a create the service has not answered) is taken over as stalled by the next worker.
      onStop('workers', (deadline) => workers.close({ waitMs: deadline - performance.now() }));
      // The periodic passes run from job schedulers: once per deployment, not once per process.
      const maintenance = await keepMaintenanceScheduled(queues, logger, {
        everyMs: {
          ...DEFAULT_MAINTENANCE_EVERY_MS,
          entitlements: config.entitlementCheckSeconds * 1000,
          charts: config.chartPostCheckSeconds * 1000,
          ...(overrides.reconcileIntervalMs && { reconcile: overrides.reconcileIntervalMs }),
        },
        ...(overrides.reconcileIntervalMs && { checkEveryMs: overrides.reconcileIntervalMs }),
      });
      onStop('maintenance schedules', () => maintenance.stop());
      if (purchases) {
        // The consumes Discord did not take, tried again wherever a worker runs.
        const consumeRetries = startConsumeRetries(purchases, workerConnection, { prefix: queues.prefix, logger });
        onStop('consume retries', () => consumeRetries.close());
      }
      // Purchases made while no process was listening: caught now rather than at the next hourly pass.
      if (purchases) void purchases.reconcile().catch((err: unknown) => logger.error({ err }, 'listing entitlements at start failed'));
    }

    if (gatewayStarts) {
      // Loaded only by processes that run the gateway: workers never need discord.js's client.
      const { startGateway } = await import('./discord/gateway.js');
      const { commands } = await import('../commands/index.js');
      const { checkVoiceDependencies, startPlayers } = await import('./voice/start.js');
      const ffmpeg = await checkVoiceDependencies(config, logger);
      const { redisIdentifyThrottler } = await import('./discord/identify-throttler.js');
      // Returns while the shards identify, one per max_concurrency bucket every 5 s across the
      // deployment: /readyz says "not yet" until each has been ready once (ShardWatch).
      const gatewayStarted = performance.now();
      const gateway = await startGateway({
        commands,
        config,
        context: commandContext,
        routeInteractions: config.interactions === 'gateway',
        makeRequest: discordRequest,
        buildIdentifyThrottler: redisIdentifyThrottler({ redis, prefix: queues.prefix, windowMs: config.gatewayIdentifyWindowMs }),
        // Only this process hears a rule change: the version on the guild's row tells the others.
        onAutomodRuleChange: (guildId) => bumpAutomodVersion(deps.db, guildId),
      });
      onStop('gateway', () => gateway.stop());
      // Once every shard is ready, since they need the guilds; before the gateway stops they
      // leave their channels and keep their queues in Redis. "gateway ready" once they run.
      let players: Promise<Players> | undefined;
      gatewayReady = gateway.ready.then(
        async (client) => {
          if (lifecycle === 'stopping') return;
          players = startPlayers({ client, db: deps.db, redis, prefix: queues.prefix, logger, config, ffmpeg, voice: voice! });
          await players.catch((err: unknown) => logger.error({ err }, 'voice players did not start'));
          logger.info({ userId: client.user.id, guilds: client.guilds.cache.size, afterMs: Math.round(performance.now() - gatewayStarted) }, 'gateway ready');
        },
        () => {},
      );
      onStop('voice players', async () => (await players?.catch(() => undefined))?.stop());
      // The shards' heartbeat for /healthz, from now on (a shard identifying is held, not missing);
      // stopped first, so a clean stop takes them out of the record.
      const { publishShardHealth } = await import('./discord/shard-heartbeat.js');
      const heartbeat = publishShardHealth({ client: gateway.client, redis, prefix: queues.prefix, logger, everyMs: config.gatewayHeartbeatMs, ...(shards && { watch: shards }) });
      onStop('shard heartbeat', () => heartbeat.stop());
    }

    // From here on, not during start-up, whose module loading may hold the loop for seconds.
    const loop = watchEventLoop({ stallLimitMs: config.livezStallMs });
    onStop('event loop watch', async () => loop.stop());
    checkLiveness = () => loop.check();
    lifecycle = 'running';
    logger.info({ role: config.role, webhooks: Boolean(config.publicUrl) }, 'bot started');
    return { deps, pipeline, httpUrl, gatewayReady, stop: ({ drainMs = 0, withinMs } = {}) => stopAll(runs.http ? drainMs : 0, withinMs) };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
