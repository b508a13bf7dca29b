/**
 * The alert rules of deploy/prometheus/alerts.yml, evaluated (test/support/promql.ts) on what
 * each role's registry exports, built as src/app.ts builds it: a gateway and a worker without
 * the deployment's gauges, the http role with them. None fires on a healthy split deployment;
 * each fires on the fault it is for. The same check on samples scraped from real processes is
 * in test/e2e/processes.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { ShardWatch } from '../../../src/discord/shard-watch.js';
import { createMetrics, type Metrics } from '../../../src/metrics.js';
import { setShardCoverageGauges, shardCoverage } from '../../../src/queue/health-records.js';
import { alertRules } from '../../support/alert-rules.js';
import { evaluate, parseExposition, type Instant, type Sample, type Scrape } from '../../support/promql.js';

const rules = alertRules();
const QUEUES = ['submit', 'poll', 'complete', 'deliver'];
const NOW = 1_800_000_000;

/** What differs from a healthy deployment. */
interface Faults {
  shardStatus?: string;
  /** The deployment has a second shard, and no process holds it (its gateway killed, or stopped for good). */
  shardMissing?: boolean;
  shardGuilds?: number;
  oldestSubmitSeconds?: number;
  failedDeliveries?: number;
  failedCommands?: number;
  /** Promise rejections nothing handled, in the gateway process. */
  unhandledRejections?: number;
  upstreamErrors?: number;
  credits?: number;
  drift?: number;
  lastCheckSecondsAgo?: number;
  /** The worker exports the account gauges it never sets, as every role once did. */
  workerWithDeploymentGauges?: boolean;
  /** Discord's answers to each worker over the minute: 429s, 401s outside interaction webhooks (a refused bot token), 401s and 403s of any route. */
  discord429s?: number;
  tokenRefused?: number;
  invalidBurst?: number;
}

/** The four processes of the split deployment, in two scrapes 60 s apart; between them, the work of a healthy minute. */
async function deployment(faults: Faults = {}): Promise<Instant & { targets: string[] }> {
  const gateway = createMetrics({ defaultMetrics: true, deploymentGauges: false });
  const shard = { id: 0, status: 'ready', pingMs: 45, guilds: 1_200 };
  const watch = new ShardWatch({ graceMs: 60_000, metrics: gateway });
  watch.watch(() => [shard]);
  const workers = [1, 2].map(() => createMetrics({ defaultMetrics: true, deploymentGauges: faults.workerWithDeploymentGauges ?? false }));
  const http = createMetrics({ defaultMetrics: true });
  const processes: Record<string, Metrics> = { gateway, 'worker-1': workers[0]!, 'worker-2': workers[1]!, http };

  const work = (minute: number) => {
    gateway.commands.inc({ command: 'song', outcome: 'accepted', reason: '' }, 20);
    gateway.commands.inc({ command: 'song', outcome: 'failed', reason: '' }, minute === 1 ? (faults.failedCommands ?? 0) : 0);
    gateway.unhandledRejections.inc(minute === 1 ? (faults.unhandledRejections ?? 0) : 0);
    for (const worker of workers) {
      worker.resultDeliveries.inc({ path: 'edit' }, 10);
      worker.resultDeliveries.inc({ path: 'failed' }, minute === 1 ? (faults.failedDeliveries ?? 0) : 0);
      for (let i = 0; i < 10; i += 1) worker.upstreamLatency.observe({ operation: 'create' }, 0.3);
      worker.upstreamErrors.inc({ type: 'server_error' }, minute === 1 ? (faults.upstreamErrors ?? 0) : 0);
      // A healthy minute has a few expired tokens (401, then the channel) and a rare 429.
      worker.discordRestResponses.inc({ status: '200', route_class: 'interaction_webhook' }, 10);
      worker.discordRestResponses.inc({ status: '401', route_class: 'interaction_webhook' }, 2);
      worker.discordRestResponses.inc({ status: '200', route_class: 'channel_message' }, 2);
      worker.discordRestResponses.inc({ status: '429', route_class: 'channel_message' }, 1);
      if (minute === 1) {
        worker.discordRestResponses.inc({ status: '429', route_class: 'channel_message' }, faults.discord429s ?? 0);
        worker.discordRestResponses.inc({ status: '401', route_class: 'channel_message' }, faults.tokenRefused ?? 0);
        worker.discordRestResponses.inc({ status: '401', route_class: 'interaction_webhook' }, faults.invalidBurst ?? 0);
        worker.discordRestResponses.inc({ status: '403', route_class: 'channel_message' }, faults.invalidBurst ?? 0);
      }
    }
    gateway.discordRestResponses.inc({ status: '204', route_class: 'interaction_callback' }, 20);
    for (const queue of QUEUES) http.queueOldestWaiting.set({ queue }, queue === 'submit' && minute === 1 ? (faults.oldestSubmitSeconds ?? 2) : 0);
    http.accountCredits.set(faults.credits ?? 2_000);
    http.accountLowThreshold.set(250);
    http.accountDrift.set(faults.drift ?? 0);
    http.accountLastCheck.set(NOW - (faults.lastCheckSecondsAgo ?? 1_200));
    if (minute === 1 && faults.shardStatus) shard.status = faults.shardStatus;
    if (minute === 1 && faults.shardGuilds) shard.guilds = faults.shardGuilds;
    watch.sample();
    // What the http role reads from the gateway processes' heartbeats in Redis.
    const shardCount = minute === 1 && faults.shardMissing ? 2 : 1;
    const heartbeat = { id: 0, status: shard.status, pingMs: shard.pingMs, at: (NOW - 5) * 1000, shardCount };
    setShardCoverageGauges(http, shardCoverage({ shards: [heartbeat], shardCount }, NOW * 1000));
  };
  const scrape = async (at: number): Promise<Scrape> => {
    const samples: Sample[] = [];
    for (const [instance, metrics] of Object.entries(processes)) {
      samples.push(...parseExposition(await metrics.registry.metrics(), { job: 'music-bot', instance }));
      // What Prometheus and the blackbox exporter add: each target scraped, each /healthz 200.
      samples.push({ labels: { __name__: 'up', job: 'music-bot', instance }, value: 1 });
      samples.push({ labels: { __name__: 'probe_success', job: 'music-bot-healthz', instance }, value: 1 });
    }
    return { at, samples };
  };
  work(0);
  const previous = await scrape(NOW - 60);
  work(1);
  const current = await scrape(NOW);
  return { previous, current, targets: Object.keys(processes) };
}

/** The alerts that fire: rule name and the labels of each firing sample. */
function firing(instant: Instant): Array<{ alert: string; labels: Record<string, string> }> {
  return rules.flatMap((rule) => evaluate(rule.expr, instant).map((sample) => ({ alert: rule.alert, labels: { ...sample.labels } })));
}

/** Sets one sample of the current scrape, as a fault outside the bot's registries would. */
function withSample(instant: Instant, name: string, instance: string, value: number): Instant {
  const samples = instant.current.samples.map((sample) => (sample.labels['__name__'] === name && sample.labels['instance'] === instance ? { ...sample, value } : sample));
  return { ...instant, current: { ...instant.current, samples } };
}

/** For each rule, a fault it must fire on. */
const FAULTS: Record<string, () => Promise<Instant>> = {
  MusicBotDown: async () => withSample(await deployment(), 'up', 'worker-1', 0),
  MusicBotHealthzFailing: async () => withSample(await deployment(), 'probe_success', 'http', 0),
  MusicBotGatewayShardDown: () => deployment({ shardStatus: 'reconnecting' }),
  MusicBotGatewayShardsMissing: () => deployment({ shardMissing: true }),
  MusicBotGatewayShardGuildsHigh: () => deployment({ shardGuilds: 2_000 }),
  MusicBotQueueStuck: () => deployment({ oldestSubmitSeconds: 600 }),
  MusicBotDeliveriesFailing: () => deployment({ failedDeliveries: 10 }),
  MusicBotCommandsFailing: () => deployment({ failedCommands: 5 }),
  MusicBotUnhandledRejections: () => deployment({ unhandledRejections: 1 }),
  MusicBotUpstreamErrors: () => deployment({ upstreamErrors: 20 }),
  MusicBotAccountLow: () => deployment({ credits: 100 }),
  MusicBotAccountCheckStale: () => deployment({ lastCheckSecondsAgo: 3 * 3600 }),
  MusicBotAccountDrift: () => deployment({ drift: -500 }),
  // Two workers: 60 more 429s in the minute, 1 a second.
  MusicBotDiscordRateLimited: () => deployment({ discord429s: 30 }),
  MusicBotDiscordUnauthorized: () => deployment({ tokenRefused: 2 }),
  // 600 more 401s and 403s in the minute: 10 a second.
  MusicBotDiscordInvalidRequests: () => deployment({ invalidBurst: 150 }),
};

describe('the alert rules on a split deployment (gateway, two workers, http)', () => {
  it('all fire on nothing while it is healthy', async () => {
    const healthy = await deployment();
    // The series the rules read are there: the check is not passing on an empty scrape.
    const names = new Set(healthy.current.samples.map((sample) => `${sample.labels['__name__']}@${sample.labels['instance']}`));
    for (const seen of [
      'musicbot_gateway_shard_up@gateway',
      'musicbot_gateway_shard_guilds@gateway',
      'musicbot_gateway_shard_held@http',
      'musicbot_gateway_shards_missing@http',
      'musicbot_account_last_check_timestamp_seconds@http',
      'musicbot_result_deliveries_total@worker-1',
    ]) {
      expect(names, seen).toContain(seen);
    }
    expect(firing(healthy)).toEqual([]);
  });

  it('exports the account gauges from the http role alone', async () => {
    const { current } = await deployment();
    const instances = current.samples.filter((sample) => sample.labels['__name__']!.startsWith('musicbot_account_')).map((sample) => sample.labels['instance']);
    expect(new Set(instances)).toEqual(new Set(['http']));
  });

  it('each fire on the fault they are for, and only they', async () => {
    expect(Object.keys(FAULTS).sort()).toEqual(rules.map((rule) => rule.alert).sort());
    for (const [alert, fault] of Object.entries(FAULTS)) {
      const fired = new Set(firing(await fault()).map((firing) => firing.alert));
      expect([...fired], alert).toEqual([alert]);
    }
  });

  it('name the shard that is down', async () => {
    expect(firing(await deployment({ shardStatus: 'resuming' }))).toEqual([
      { alert: 'MusicBotGatewayShardDown', labels: { __name__: 'musicbot_gateway_shard_up', job: 'music-bot', instance: 'gateway', shard: '0' } },
    ]);
  });

  it('name the shard no process holds, and the shard with too many guilds', async () => {
    expect(firing(await deployment({ shardMissing: true }))).toEqual([{ alert: 'MusicBotGatewayShardsMissing', labels: { shard: '1' } }]);
    expect(firing(await deployment({ shardGuilds: 1_999 }))).toEqual([]);
    expect(firing(await deployment({ shardGuilds: 2_400 }))).toEqual([{ alert: 'MusicBotGatewayShardGuildsHigh', labels: { shard: '0' } }]);
  });

  it("would fire on a worker's never-set account timestamp, were the worker to export it", async () => {
    const fired = firing(await deployment({ workerWithDeploymentGauges: true }));
    expect(fired).toContainEqual(expect.objectContaining({ alert: 'MusicBotAccountCheckStale', labels: expect.objectContaining({ instance: 'worker-1' }) }));
  });
});

describe('the PromQL evaluator', () => {
  const at = (samples: Sample[], previous?: Sample[]): Instant => ({ current: { at: 100, samples }, ...(previous && { previous: { at: 40, samples: previous } }) });
  const s = (name: string, value: number, labels: Record<string, string> = {}): Sample => ({ labels: { __name__: name, ...labels }, value });

  it('compares, matches vectors one to one, aggregates and rates as Prometheus does', () => {
    expect(evaluate('x > 1', at([s('x', 1), s('x', 2, { a: 'b' })]))).toEqual([s('x', 2, { a: 'b' })]);
    expect(evaluate('x < y and y > 0', at([s('x', 1), s('y', 2)]))).toEqual([s('x', 1)]);
    expect(evaluate('x < y and y > 0', at([s('x', 1), s('y', 0)]))).toEqual([]);
    expect(evaluate('max by (q) (x)', at([s('x', 1, { q: 'a', i: '1' }), s('x', 3, { q: 'a', i: '2' }), s('x', Number.NaN, { q: 'b' })]))).toEqual([
      { labels: { q: 'a' }, value: 3 },
      { labels: { q: 'b' }, value: Number.NaN },
    ]);
    expect(evaluate('time() - x > 50', at([s('x', 10), s('x', 80, { i: '2' }), s('x', Number.NaN, { i: '3' })]))).toEqual([{ labels: {}, value: 90 }]);
    expect(evaluate('sum(rate(c{k="f"}[10m])) / sum(rate(c[10m]))', at([s('c', 9, { k: 'f' }), s('c', 30, { k: 'ok' })], [s('c', 3, { k: 'f' }), s('c', 6, { k: 'ok' })]))).toEqual([
      { labels: {}, value: 0.2 },
    ]);
    expect(evaluate('x < -100', at([s('x', -101), s('x', -100, { i: '2' })]))).toEqual([s('x', -101)]);
  });

  it('refuses PromQL it does not know rather than read it wrongly', () => {
    expect(() => evaluate('histogram_quantile(0.9, x)', at([]))).toThrow(/not known/);
    expect(() => evaluate('x offset 5m', at([]))).toThrow();
    expect(() => evaluate('rate(x[5m])', at([]))).toThrow(/two scrapes/);
  });
});
