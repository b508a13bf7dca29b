/**
 * The Kubernetes PrometheusRule of deploy/kubernetes/monitoring, written from
 * deploy/prometheus/alerts.yml so that the rules have one source. `npm run k8s:rules` writes it;
 * test/unit/deploy/kubernetes.test.ts fails when the committed file differs from what this writes.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import yaml from 'js-yaml';
import { parseYamlSubset } from './alert-rules.js';

const root = path.resolve(import.meta.dirname, '../..');
export const ALERTS_FILE = path.join(root, 'deploy/prometheus/alerts.yml');
export const PROMETHEUS_RULE_FILE = path.join(root, 'deploy/kubernetes/monitoring/prometheus-rule.yaml');

/** The PrometheusRule's text for the rule file `alertsText`: its groups, unchanged, under `spec`. */
export function prometheusRuleYaml(alertsText: string): string {
  const { groups } = parseYamlSubset(alertsText) as { groups: unknown[] };
  const rule = {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'PrometheusRule',
    metadata: { name: 'music-bot', labels: { 'app.kubernetes.io/name': 'music-bot' } },
    spec: { groups },
  };
  const header = [
    '# Written by `npm run k8s:rules` from deploy/prometheus/alerts.yml: edit that file and run it',
    '# again; test/unit/deploy/kubernetes.test.ts fails while this copy differs.',
    '# A Prometheus that selects rules by label (kube-prometheus-stack: release=<its release>) needs',
    '# that label added in an overlay.',
  ];
  return `${header.join('\n')}\n${yaml.dump(rule, { lineWidth: -1, noRefs: true, quotingType: '"' })}`;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  writeFileSync(PROMETHEUS_RULE_FILE, prometheusRuleYaml(readFileSync(ALERTS_FILE, 'utf8')));
  console.log(`wrote ${path.relative(root, PROMETHEUS_RULE_FILE)} from ${path.relative(root, ALERTS_FILE)}`);
}
