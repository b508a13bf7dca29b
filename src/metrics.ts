/** Prometheus metrics, one registry per app so that tests can build several apps in one process. */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** The route classes of `musicbot_discord_rest_responses_total`: a fixed list (src/discord-rest/rest-requests.ts sorts routes into it). */
export const DISCORD_ROUTE_CLASSES = ['interaction_callback', 'interaction_webhook', 'channel_message', 'entitlement', 'command', 'other'] as const;
export type DiscordRouteClass = (typeof DISCORD_ROUTE_CLASSES)[number];
/** The answers the alerts watch: their series exist from the start at 0, so that the first one shows in `rate()`. */
const WATCHED_DISCORD_STATUSES = ['401', '403', '429'] as const;

/** A registry's metrics as plain data (`getMetricsAsJSON`), as another thread hands them over. */
export type MetricsJson = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;

export interface Metrics {
  readonly registry: Registry;
  readonly jobsAccepted: Counter<'kind'>;
  readonly jobsFinished: Counter<'kind' | 'state'>;
  readonly upstreamErrors: Counter<'type'>;
  /** Creates the service may have taken without the bot learning the task (never sent again; refunded). */
  readonly submissionsUncertain: Counter<'kind'>;
  /** Final states reported for a job that already had another (`standing`): the first stands. */
  readonly secondFinalStates: Counter<'kind' | 'standing' | 'reported'>;
  readonly credits: Counter<'movement'>;
  readonly deliveries: Counter<'outcome'>;
  /** Results posted by path: `edit` (through the interaction), `channel` (a channel message) or `failed` (an attempt that posted nothing). */
  readonly resultDeliveries: Counter<'path'>;
  /** Commands, buttons, menus and forms by name and outcome; `reason` is a refusal's code, empty otherwise. */
  readonly commands: Counter<'command' | 'outcome' | 'reason'>;
  readonly progressEdits: Counter<'outcome'>;
  readonly firstAnswer: Histogram<'how'>;
  readonly webhooks: Counter<'outcome'>;
  readonly queueDepth: Gauge<'queue' | 'state'>;
  readonly queueOldestWaiting: Gauge<'queue'>;
  readonly backgroundWaiting: Gauge;
  readonly jobsOpen: Gauge<'kind' | 'state'>;
  readonly upstreamLatency: Histogram<'operation'>;
  readonly discordLatency: Histogram<string>;
  readonly webhookToCompletion: Histogram<string>;
  /** The music service account, as its newest check recorded it in Postgres (read at scrape time). */
  readonly accountCredits: Gauge<string>;
  readonly accountDrift: Gauge<string>;
  readonly accountLowThreshold: Gauge<string>;
  readonly accountLastCheck: Gauge<string>;
  /** This process's gateway shards: 1 while `ready`, 0 otherwise (src/discord/shard-watch.ts). */
  readonly gatewayShardUp: Gauge<'shard'>;
  readonly gatewayPing: Gauge<'shard'>;
  /** Promise rejections nothing handled in this process: each is logged, and the process runs on. */
  readonly unhandledRejections: Counter<string>;
  /** Times the workers' thread (WORKERS_IN_THREAD) exited unasked and was started again. */
  readonly workersThreadRestarts: Counter<string>;
  /** This process's gateway shards: the guilds each carries (Discord refuses a shard past 2,500). */
  readonly gatewayShardGuilds: Gauge<'shard'>;
  /** The deployment's shards that no live gateway process holds (read from Redis at scrape time). */
  readonly gatewayShardsMissing: Gauge<string>;
  /** Each shard of the deployment's count: 1 while a live gateway process holds it, 0 while none does. */
  readonly gatewayShardHeld: Gauge<'shard'>;
  /** Discord's answers to this process's REST requests: `status` the HTTP status (or `error`: none), `route_class` from a fixed list. */
  readonly discordRestResponses: Counter<'status' | 'route_class'>;
  /** The moderation service's checks: `clean`, `flagged`, or unavailable and `down_refused` / `down_allowed` (MODERATION_WHEN_DOWN). */
  readonly moderationChecks: Counter<'outcome'>;
}

export interface MetricsOptions {
  readonly defaultMetrics?: boolean;
  /**
   * Export the gauges read from Postgres and Redis at scrape time (queues, jobs, the service
   * account, the gateway shards missing). Only the process that refreshes them (the http role) may export them, or it
   * exports never-set zeros. Why: docs/decisions/gateway-health.md @defaultValue true
   */
  readonly deploymentGauges?: boolean;
}

export function createMetrics(options: MetricsOptions = {}): Metrics {
  const registry = new Registry();
  if (options.defaultMetrics) collectDefaultMetrics({ register: registry, prefix: 'musicbot_' });
  const registers = [registry];
  const deployment = options.deploymentGauges === false ? [] : registers;
  const discordRestResponses = new Counter({
    name: 'musicbot_discord_rest_responses_total',
    help: "Discord's answers to REST requests, by HTTP status (error: no answer) and route class (interaction_callback, interaction_webhook, channel_message, entitlement, command, other)",
    labelNames: ['status', 'route_class'],
    registers,
  });
  for (const status of WATCHED_DISCORD_STATUSES) for (const routeClass of DISCORD_ROUTE_CLASSES) discordRestResponses.inc({ status, route_class: routeClass }, 0);
  return {
    registry,
    jobsAccepted: new Counter({ name: 'musicbot_jobs_accepted_total', help: 'Jobs accepted, by kind', labelNames: ['kind'], registers }),
    jobsFinished: new Counter({ name: 'musicbot_jobs_finished_total', help: 'Jobs that reached a final state', labelNames: ['kind', 'state'], registers }),
    upstreamErrors: new Counter({ name: 'musicbot_upstream_errors_total', help: 'Music API errors, by type', labelNames: ['type'], registers }),
    submissionsUncertain: new Counter({
      name: 'musicbot_submissions_uncertain_total',
      help: 'Creates the music service may have taken without answering with a task id (5xx but a 502 upstream_error, cut off, timed out); refunded, never sent again',
      labelNames: ['kind'],
      registers,
    }),
    secondFinalStates: new Counter({
      name: 'musicbot_second_final_states_total',
      help: 'Final states the music service reported for a job that already had another (standing); the first stands',
      labelNames: ['kind', 'standing', 'reported'],
      registers,
    }),
    credits: new Counter({ name: 'musicbot_credits_total', help: 'Credits reserved, charged, released and refunded', labelNames: ['movement'], registers }),
    deliveries: new Counter({ name: 'musicbot_deliveries_total', help: 'Result posts to Discord, by outcome', labelNames: ['outcome'], registers }),
    resultDeliveries: new Counter({
      name: 'musicbot_result_deliveries_total',
      help: 'Result deliveries by path: edit (the interaction reply), channel (a channel message), failed (an attempt that posted nothing)',
      labelNames: ['path'],
      registers,
    }),
    commands: new Counter({
      name: 'musicbot_commands_total',
      help: 'Interactions handled, by command (or component action) and outcome (accepted, refused, failed); reason: the refusal code',
      labelNames: ['command', 'outcome', 'reason'],
      registers,
    }),
    progressEdits: new Counter({
      name: 'musicbot_progress_edits_total',
      help: 'Progress edits of interaction replies: shown, dropped (the reply was rate limited) or failed',
      labelNames: ['outcome'],
      registers,
    }),
    firstAnswer: new Histogram({
      name: 'musicbot_interaction_first_answer_seconds',
      help: 'From receiving an interaction to its first answer: answered with the decision, or deferred past ANSWER_BUDGET_MS',
      labelNames: ['how'],
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 1.5, 2, 3],
      registers,
    }),
    webhooks: new Counter({ name: 'musicbot_webhooks_total', help: 'Webhook requests, by outcome', labelNames: ['outcome'], registers }),
    queueDepth: new Gauge({ name: 'musicbot_queue_depth', help: 'Queue entries by queue and state', labelNames: ['queue', 'state'], registers: deployment }),
    queueOldestWaiting: new Gauge({
      name: 'musicbot_queue_oldest_waiting_seconds',
      help: 'Age of the oldest entry due to run but not yet taken (waiting, or delayed past its time), 0 when none',
      labelNames: ['queue'],
      registers: deployment,
    }),
    backgroundWaiting: new Gauge({
      name: 'musicbot_background_waiting',
      help: "Queue entries of this process waiting for members' commands to be answered first (processes that run both)",
      registers,
    }),
    jobsOpen: new Gauge({ name: 'musicbot_jobs', help: 'Jobs by kind and state (from Postgres)', labelNames: ['kind', 'state'], registers: deployment }),
    upstreamLatency: new Histogram({
      name: 'musicbot_upstream_request_seconds',
      help: 'Music API request latency',
      labelNames: ['operation'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    }),
    discordLatency: new Histogram({
      name: 'musicbot_discord_delivery_seconds',
      help: 'Time to post a result to Discord',
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    }),
    webhookToCompletion: new Histogram({
      name: 'musicbot_webhook_to_completion_seconds',
      help: 'From webhook receipt to the job being final',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
      registers,
    }),
    accountCredits: new Gauge({
      name: 'musicbot_account_credits',
      help: 'The music service account balance (credits + extra credits) at its last check',
      registers: deployment,
    }),
    accountDrift: new Gauge({
      name: 'musicbot_account_drift_credits',
      help: 'Last check of the service account: balance minus what the ledger expected (negative: spent upstream without the ledger knowing)',
      registers: deployment,
    }),
    accountLowThreshold: new Gauge({
      name: 'musicbot_account_low_credits_threshold',
      help: 'ACCOUNT_LOW_CREDITS at the last check (0: no alert), for alert rules beside musicbot_account_credits',
      registers: deployment,
    }),
    accountLastCheck: new Gauge({
      name: 'musicbot_account_last_check_timestamp_seconds',
      help: 'When the service account was last checked (Unix time)',
      registers: deployment,
    }),
    gatewayShardUp: new Gauge({
      name: 'musicbot_gateway_shard_up',
      help: "This process's gateway shards: 1 while ready, 0 while connecting, resuming or disconnected",
      labelNames: ['shard'],
      registers,
    }),
    unhandledRejections: new Counter({
      name: 'musicbot_unhandled_rejections_total',
      help: 'Promise rejections nothing handled in this process (each logged as "unhandled rejection"); the process runs on',
      registers,
    }),
    workersThreadRestarts: new Counter({
      name: 'musicbot_workers_thread_restarts_total',
      help: "Times the workers' thread (WORKERS_IN_THREAD) exited unasked and another was started",
      registers,
    }),
    gatewayPing: new Gauge({
      name: 'musicbot_gateway_ping_seconds',
      help: "Round trip of each shard's last gateway heartbeat",
      labelNames: ['shard'],
      registers,
    }),
    gatewayShardGuilds: new Gauge({
      name: 'musicbot_gateway_shard_guilds',
      help: "This process's gateway shards: the guilds each carries (Discord refuses to start a shard past 2,500; reshard before)",
      labelNames: ['shard'],
      registers,
    }),
    gatewayShardsMissing: new Gauge({
      name: 'musicbot_gateway_shards_missing',
      help: 'Shards of the deployment (0 to its shard count - 1) that no live gateway process holds: killed, stopped or never started',
      registers: deployment,
    }),
    gatewayShardHeld: new Gauge({
      name: 'musicbot_gateway_shard_held',
      help: 'Each shard of the deployment: 1 while a live gateway process holds it, 0 while none does (from the heartbeats in Redis)',
      labelNames: ['shard'],
      registers: deployment,
    }),
    discordRestResponses,
    moderationChecks: new Counter({
      name: 'musicbot_moderation_checks_total',
      help: 'Requests checked by the moderation service (MODERATION_URL), by outcome: clean, flagged, down_refused, down_allowed',
      labelNames: ['outcome'],
      registers,
    }),
  };
}

/**
 * Registers the deployment's gauges with `metrics.registry` where they are not yet: the server
 * that refreshes them (the http role's `/metrics`) exports them, whatever the registry was built with.
 */
export function exportDeploymentGauges(metrics: Metrics): void {
  const gauges = [
    metrics.queueDepth,
    metrics.queueOldestWaiting,
    metrics.jobsOpen,
    metrics.accountCredits,
    metrics.accountDrift,
    metrics.accountLowThreshold,
    metrics.accountLastCheck,
    metrics.gatewayShardsMissing,
    metrics.gatewayShardHeld,
  ];
  for (const gauge of gauges) {
    const { name } = gauge as unknown as { name: string };
    if (!metrics.registry.getSingleMetric(name)) metrics.registry.registerMetric(gauge);
  }
}
