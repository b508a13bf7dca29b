/**
 * One bot in four processes: `npm start` as ROLE=gateway, two ROLE=worker and
 * ROLE=http, on one Postgres and one Redis (the chaos world, test/chaos/world.ts, on a database
 * of the suite's Postgres: nothing here stops Postgres). Jobs are
 * spread across both workers and each is delivered once; a worker stopped with SIGTERM finishes
 * the entries in hand and exits 0; a server's weekly chart post is posted once. (A worker killed mid-run is the chaos suite's
 * `killed-workers`, in test/e2e/chaos.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { atRate } from '../bench/support.js';
import { startChaosWorld, type ChaosWorld } from '../chaos/world.js';
import { alertRules } from '../support/alert-rules.js';
import { createTestDatabase } from '../support/database.js';
import { evaluate, parseExposition, type Instant, type Sample, type Scrape } from '../support/promql.js';

let world: ChaosWorld;
beforeAll(async () => {
  // The weekly chart posts are looked for every second (and each look logged), not every minute.
  world = await startChaosWorld({ postgres: { url: (await createTestDatabase()).url }, env: { CHART_POST_CHECK_SECONDS: '1', LOG_LEVEL: 'debug' } });
  // A just-started gateway is slow over its first commands, and on a busy machine misses
  // Discord's 3 s with some of a burst: one command per guild first, answered or not.
  const firstOfEachGuild = world.places.filter((place, i) => world.places.findIndex((other) => other.guildId === place.guildId) === i);
  for (const place of firstOfEachGuild) await world.emulator.runCommand({ ...place, name: 'credits' }).waitForResponse(30_000).catch(() => {});
}, 120_000);
afterAll(async () => world?.close(), 120_000);

/** The jobs a process logged as submitted to the service. */
function submittedBy(name: 'worker-1' | 'worker-2'): number {
  return world.logLines().filter((line) => line.startsWith(`${name}: `) && line.includes('"msg":"job submitted"')).length;
}

describe('one bot in four processes', () => {
  it('spreads the jobs across both workers and delivers each once', async () => {
    const prefix = 'chaos processes spread';
    const handles = await atRate(16, 20, (i) => world.song(world.places[i % world.places.length]!, `${prefix} ${i}`));
    await Promise.all(handles.map((handle) => handle.waitForResponse(30_000)));
    const audit = await world.settleAndAudit({ prefix, timeoutMs: 60_000 });
    // What the members were told, for a failure: a refusal says why no job was made.
    const told = [...new Set(handles.map((handle) => handle.original()?.content ?? '(no message)'))].join(' | ');
    expect(audit, `${audit.details.join('\n')}\nfirst answers: ${told}`).toMatchObject({ jobs: 16, delivered: 16, lost: 0, duplicated: 0, doubleCharged: 0, ledgerDrift: 0 });
    expect(submittedBy('worker-1')).toBeGreaterThan(0);
    expect(submittedBy('worker-2')).toBeGreaterThan(0);
    expect(submittedBy('worker-1') + submittedBy('worker-2')).toBe(16);
  }, 90_000);

  it('each process without the http role serves its own metrics and health on METRICS_PORT', async () => {
    const scrape = async (name: 'gateway' | 'worker-1' | 'worker-2') => (await fetch(`${world.metricsUrls[name]}/metrics`)).text();
    const sum = (text: string, pattern: RegExp) => [...text.matchAll(pattern)].reduce((total, match) => total + Number(match[1]), 0);
    // The commands of the test above were counted by the gateway, their deliveries by the workers.
    expect(sum(await scrape('gateway'), /^musicbot_commands_total\{command="song",outcome="accepted"[^}]*\} (\d+)$/gm)).toBeGreaterThanOrEqual(16);
    const deliveries = /^musicbot_result_deliveries_total\{path="edit"\} (\d+)$/gm;
    expect(sum(await scrape('worker-1'), deliveries) + sum(await scrape('worker-2'), deliveries)).toBeGreaterThanOrEqual(16);
    for (const name of ['gateway', 'worker-1', 'worker-2'] as const) {
      const ready = await fetch(`${world.metricsUrls[name]}/readyz`);
      expect(ready.status, name).toBe(200);
      const health = (await (await fetch(`${world.metricsUrls[name]}/healthz`)).json()) as { postgres: string; redis: string };
      expect(health, name).toMatchObject({ postgres: 'ok', redis: 'ok' });
    }
    // The gauges read from Postgres and Redis are the deployment's: only the http role exports them.
    expect(await scrape('worker-1')).not.toContain('musicbot_queue_depth{');
  });

  it('fires no shipped alert rule on the healthy deployment, and the rules see a shard down and a stale account check', async () => {
    const targets = { gateway: world.metricsUrls.gateway!, 'worker-1': world.metricsUrls['worker-1']!, 'worker-2': world.metricsUrls['worker-2']!, http: world.httpUrl };
    // As Prometheus scrapes: the target's labels on each sample, `up`, and the blackbox exporter's probe of /healthz.
    const scrape = async (): Promise<Scrape> => {
      const samples: Sample[] = [];
      for (const [instance, url] of Object.entries(targets)) {
        samples.push(...parseExposition(await (await fetch(`${url}/metrics`)).text(), { job: 'music-bot', instance }));
        samples.push({ labels: { __name__: 'up', job: 'music-bot', instance }, value: 1 });
        const probe = await fetch(`${url}/healthz`);
        samples.push({ labels: { __name__: 'probe_success', job: 'music-bot-healthz', instance }, value: probe.status === 200 ? 1 : 0 });
      }
      return { at: Date.now() / 1000, samples };
    };
    const rules = alertRules();
    const firing = (instant: Instant) => rules.flatMap((rule) => evaluate(rule.expr, instant).map((sample) => `${rule.alert} ${JSON.stringify(sample.labels)}`));
    // Two scrapes, the first stamped one scrape interval (Prometheus's default 15 s) before the
    // second: the rules' rates divide what changed by that span, not by how long the test waited.
    const previous = await scrape();
    const current = await scrape();
    const healthy: Instant = { previous: { ...previous, at: current.at - 15 }, current };

    const series = (name: string) => healthy.current.samples.filter((sample) => sample.labels['__name__'] === name);
    expect(series('musicbot_gateway_shard_up').map((sample) => [sample.labels['instance'], sample.value])).toEqual([['gateway', 1]]);
    expect(series('musicbot_account_last_check_timestamp_seconds').map((sample) => sample.labels['instance'])).toEqual(['http']);
    expect(firing(healthy)).toEqual([]);

    // The same rules on the same samples, a fault at a time.
    const mutated = (name: string, instance: string, value: number): Instant => ({
      ...healthy,
      current: { ...healthy.current, samples: healthy.current.samples.map((sample) => (sample.labels['__name__'] === name && sample.labels['instance'] === instance ? { ...sample, value } : sample)) },
    });
    expect(firing(mutated('musicbot_gateway_shard_up', 'gateway', 0))).toEqual([expect.stringMatching(/^MusicBotGatewayShardDown .*"shard":"0"/)]);
    const checkedLongAgo = mutated('musicbot_account_last_check_timestamp_seconds', 'http', healthy.current.at - 3 * 3600);
    expect(firing(checkedLongAgo)).toEqual([expect.stringMatching(/^MusicBotAccountCheckStale /)]);
  });

  it('posts a server’s weekly chart once when it falls due, both workers looking for it', async () => {
    const { guildId } = world.places[0]!;
    const channel = world.emulator.createChannel(guildId, { name: 'charts' });
    // As `/settings charts` stores it (a time in whole milliseconds), with its post due in two seconds rather than at its hour.
    await world.db.query("insert into chart_post_settings (guild_id, channel_id, weekday, hour, time_zone, locale, next_at) values ($1, $2, 1, 9, 'UTC', 'en-US', date_trunc('milliseconds', now() + interval '2 seconds'))", [
      guildId,
      channel.id,
    ]);
    const posts = () => world.emulator.channelMessages(channel.id).filter((message) => message.author?.id === world.emulator.botUser.id);
    await expect.poll(() => posts().length, { timeout: 30_000 }).toBe(1);
    expect(posts()[0]?.content).toMatch(/^\*\*This week’s top songs, by likes\*\*/);
    // Both workers look again after the post and find nothing due: only then is one post all there is.
    const seen = world.logLines().length;
    const lookedAgain = (name: 'worker-1' | 'worker-2') =>
      world.logLines().slice(seen).some((line) => line.startsWith(`${name}: `) && line.includes('"msg":"weekly chart posts checked"') && line.includes('"due":0'));
    await expect.poll(() => lookedAgain('worker-1') && lookedAgain('worker-2'), { timeout: 30_000 }).toBe(true);
    expect(posts()).toHaveLength(1);
    const { rows: claims } = await world.db.query<{ message_id: string }>('select message_id from chart_posts where guild_id = $1', [guildId]);
    expect(claims).toEqual([{ message_id: posts()[0]!.id }]);
  }, 60_000);

  it('a worker stopped with SIGTERM finishes what it holds and exits 0, and no job is lost', async () => {
    const prefix = 'chaos processes sigterm';
    const before = submittedBy('worker-1') + submittedBy('worker-2');
    const handles = await atRate(12, 20, (i) => world.song(world.places[i % world.places.length]!, `${prefix} ${i}`));
    await Promise.all(handles.map((handle) => handle.waitForResponse(30_000)));
    // Once work is under way: some jobs submitted, the rest still to come.
    await expect.poll(() => submittedBy('worker-1') + submittedBy('worker-2') - before, { timeout: 30_000 }).toBeGreaterThan(0);
    await world.processes['worker-1'].stop();
    expect(world.processes['worker-1'].exit).toEqual({ code: 0, signal: null });

    const audit = await world.settleAndAudit({ prefix, timeoutMs: 90_000 });
    expect(audit).toMatchObject({ jobs: 12, delivered: 12, lost: 0, duplicated: 0, doubleCharged: 0, ledgerDrift: 0 });
    expect(world.crashes()).toEqual([]);
    await world.processes['worker-1'].start();
  }, 150_000);
});
