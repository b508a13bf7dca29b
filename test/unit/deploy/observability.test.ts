/**
 * The Grafana dashboard and the Prometheus alert rules in deploy/ read the bot's metrics by
 * name: a renamed metric or a typo would leave a panel empty and an alert silent for ever.
 * Every name and label they use must exist in the registry `createMetrics()` builds.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../../src/metrics.js';
import { parseYamlSubset } from '../../support/alert-rules.js';

const root = path.resolve(import.meta.dirname, '../../..');
const dashboard = JSON.parse(readFileSync(path.join(root, 'deploy/grafana/music-bot.json'), 'utf8')) as Record<string, unknown>;
const rules = parseYamlSubset(readFileSync(path.join(root, 'deploy/prometheus/alerts.yml'), 'utf8')) as {
  groups: Array<{ name: string; rules: Array<Record<string, unknown>> }>;
};

/** Metrics that come from Prometheus or its exporters, not from the bot. */
const EXTERNAL: Record<string, readonly string[]> = { up: ['job', 'instance'], probe_success: ['job', 'instance'] };
/** Labels Prometheus adds to every series it scrapes. */
const TARGET_LABELS = ['job', 'instance'];

interface Known {
  readonly labels: ReadonlySet<string>;
}

async function knownMetrics(): Promise<Map<string, Known>> {
  const metrics = createMetrics({ defaultMetrics: true });
  const known = new Map<string, Known>();
  for (const { name, type } of await metrics.registry.getMetricsAsJSON()) {
    const metric = metrics.registry.getSingleMetric(name) as unknown as { labelNames?: string[] };
    const labels = new Set([...(metric.labelNames ?? []), ...TARGET_LABELS]);
    if (String(type) === 'histogram') {
      known.set(`${name}_bucket`, { labels: new Set([...labels, 'le']) });
      known.set(`${name}_sum`, { labels });
      known.set(`${name}_count`, { labels });
    } else {
      known.set(name, { labels });
    }
  }
  for (const [name, labels] of Object.entries(EXTERNAL)) known.set(name, { labels: new Set(labels) });
  return known;
}

/** Every `name{label="…"}` and bare `musicbot_…` name in a PromQL expression, with the labels it matches on. */
function selectorsIn(expr: string): Array<{ metric: string; labels: string[] }> {
  const found: Array<{ metric: string; labels: string[] }> = [];
  for (const match of expr.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(\{([^}]*)\})?/g)) {
    const [, name, braces, matchers] = match;
    if (!name!.startsWith('musicbot_') && braces === undefined) continue;
    const labels = [...(matchers ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)/g)].map((m) => m[1]!);
    found.push({ metric: name!, labels });
  }
  return found;
}

function dashboardExprs(node: unknown): string[] {
  if (Array.isArray(node)) return node.flatMap(dashboardExprs);
  if (node === null || typeof node !== 'object') return [];
  return Object.entries(node).flatMap(([key, value]) => (key === 'expr' && typeof value === 'string' ? [value] : dashboardExprs(value)));
}

async function unknownNames(exprs: readonly string[]): Promise<string[]> {
  const known = await knownMetrics();
  const problems: string[] = [];
  for (const expr of exprs) {
    for (const { metric, labels } of selectorsIn(expr)) {
      const entry = known.get(metric);
      if (!entry) problems.push(`unknown metric ${metric} in ${expr}`);
      for (const label of entry ? labels : []) if (!entry!.labels.has(label)) problems.push(`unknown label ${label} of ${metric} in ${expr}`);
    }
  }
  return problems;
}

describe('deploy/grafana/music-bot.json', () => {
  const exprs = dashboardExprs(dashboard['panels']);

  it('is a dashboard Grafana can import: a title, a uid, panels with a Prometheus query each', () => {
    expect(dashboard).toMatchObject({ title: 'music-bot', uid: 'music-bot' });
    const panels = dashboard['panels'] as Array<{ type: string; title: string; id: number; targets?: unknown[] }>;
    const charts = panels.filter((panel) => panel.type !== 'row');
    expect(charts.length).toBeGreaterThanOrEqual(10);
    for (const panel of charts) expect(panel.targets?.length, panel.title).toBeGreaterThan(0);
    expect(new Set(panels.map((panel) => panel.id)).size).toBe(panels.length);
  });

  it('shows what an operator watches', () => {
    for (const name of [
      'musicbot_commands_total',
      'musicbot_interaction_first_answer_seconds_bucket',
      'musicbot_result_deliveries_total',
      'musicbot_webhooks_total',
      'musicbot_queue_depth',
      'musicbot_queue_oldest_waiting_seconds',
      'musicbot_jobs',
      'musicbot_upstream_errors_total',
      'musicbot_upstream_request_seconds_bucket',
      'musicbot_credits_total',
      'musicbot_account_credits',
      'musicbot_account_drift_credits',
      'musicbot_gateway_shards_missing',
      'musicbot_gateway_shard_guilds',
    ]) {
      expect(exprs.some((expr) => selectorsIn(expr).some((s) => s.metric === name)), name).toBe(true);
    }
  });

  it('reads only metrics and labels the bot exports', async () => {
    expect(await unknownNames(exprs)).toEqual([]);
  });
});

describe('deploy/prometheus/alerts.yml', () => {
  const all = rules.groups.flatMap((group) => group.rules);

  it('is a rule file: each alert has an expression, a duration, a severity and a summary', () => {
    expect(all.length).toBeGreaterThan(0);
    for (const rule of all) {
      expect(rule, String(rule['alert'])).toMatchObject({
        alert: expect.stringMatching(/^MusicBot[A-Za-z]+$/),
        expr: expect.any(String),
        for: expect.stringMatching(/^\d+[smh]$/),
        labels: { severity: expect.stringMatching(/^(page|warning)$/) },
        annotations: { summary: expect.any(String) },
      });
    }
    expect(new Set(all.map((rule) => rule['alert'])).size).toBe(all.length);
  });

  it('alerts on a shard down or missing, a shard near its guild limit, a stuck queue, failing deliveries, upstream errors and a low account', () => {
    const names = all.map((rule) => rule['alert']);
    expect(names).toEqual(
      expect.arrayContaining([
        'MusicBotGatewayShardDown',
        'MusicBotGatewayShardsMissing',
        'MusicBotGatewayShardGuildsHigh',
        'MusicBotQueueStuck',
        'MusicBotDeliveriesFailing',
        'MusicBotUpstreamErrors',
        'MusicBotAccountLow',
      ]),
    );
  });

  it('reads only metrics and labels the bot exports', async () => {
    expect(await unknownNames(all.map((rule) => String(rule['expr'])))).toEqual([]);
  });
});

describe('the check itself', () => {
  it('catches a misspelt metric and a misspelt label', async () => {
    expect(await unknownNames(['rate(musicbot_comands_total[5m])'])).toHaveLength(1);
    expect(await unknownNames(['musicbot_result_deliveries_total{pth="failed"}'])).toHaveLength(1);
    expect(await unknownNames(['histogram_quantile(0.9, rate(musicbot_upstream_request_seconds_bucket{le="1"}[5m]))'])).toEqual([]);
  });

  it('refuses YAML it does not understand rather than read it wrongly', () => {
    expect(() => parseYamlSubset('a: {b: 1}')).toThrow(/line 1/);
    expect(() => parseYamlSubset('a: b: c')).toThrow(/line 1/);
    expect(parseYamlSubset('a:\n  - b: "x: y"\n    c: |\n      one\n      two\n')).toEqual({ a: [{ b: 'x: y', c: 'one\ntwo\n' }] });
  });
});
