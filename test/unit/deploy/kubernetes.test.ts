/**
 * deploy/kubernetes/ as `kubectl apply -k` would send it (no cluster runs here): the example
 * overlay, rendered by test/support/kustomize.ts (and compared with `kubectl kustomize` when
 * kubectl is on PATH), every object valid against the Kubernetes API's schemas and the CRDs'
 * (KEDA, Prometheus Operator), and the invariants an operator relies on: every gateway pod's
 * environment, read by the bot's own config, gives it its share of the shards; probes, requests
 * and limits on every container; non-root, a read-only root and a writable /tmp; secrets only
 * from the Secret; the alert rules the same as deploy/prometheus/alerts.yml. The schemas accept
 * unknown fields (the API server refuses them), so the fields that matter are checked by name.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as appsV1 from 'kubernetes-models/apps/v1';
import * as batchV1 from 'kubernetes-models/batch/v1';
import * as policyV1 from 'kubernetes-models/policy/v1';
import * as coreV1 from 'kubernetes-models/v1';
import * as kedaV1alpha1 from '@kubernetes-models/keda/keda.sh/v1alpha1';
import * as monitoringV1 from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import yaml from 'js-yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES, loadConfig } from '../../../src/config.js';
import { createMetrics } from '../../../src/metrics.js';
import { containersOf, podSpecOf, renderKustomization, type KubeObject } from '../../support/kustomize.js';
import { ALERTS_FILE, PROMETHEUS_RULE_FILE, prometheusRuleYaml } from '../../support/prometheus-rule.js';

const root = path.resolve(import.meta.dirname, '../../..');
const source = path.join(root, 'deploy/kubernetes');

/** deploy/kubernetes/ copied where the example overlay finds a secrets.env: its example's placeholders. */
const copy = mkdtempSync(path.join(tmpdir(), 'music-bot-k8s-'));
cpSync(source, copy, { recursive: true });
cpSync(path.join(copy, 'example/secrets.env.example'), path.join(copy, 'example/secrets.env'));
afterAll(() => rmSync(copy, { recursive: true, force: true }));

const example = renderKustomization(path.join(copy, 'example'));
/** The base alone, with the Secret an operator makes beside it (`kubectl create secret generic --from-env-file`). */
const base = [...renderKustomization(path.join(copy, 'base')), secretFrom(path.join(source, 'example/secrets.env.example'), 'music-bot-secrets')];

function secretFrom(envFile: string, name: string): KubeObject {
  const pairs = readFileSync(envFile, 'utf8').split('\n').filter((line) => /^[A-Z_]+=/.test(line)).map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]);
  return { apiVersion: 'v1', kind: 'Secret', type: 'Opaque', metadata: { name }, data: Object.fromEntries(pairs.map(([key, value]) => [key, Buffer.from(value!).toString('base64')])) };
}

const find = (objects: KubeObject[], kind: string, name: string) => {
  const found = objects.find((object) => object.kind === kind && object.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name}`);
  return found;
};
const byKind = (objects: KubeObject[], kind: string) => objects.filter((object) => object.kind === kind);
/** A generated ConfigMap or Secret, by the name before its hash suffix. */
const generated = (objects: KubeObject[], kind: 'ConfigMap' | 'Secret', name: string) => {
  const found = objects.filter((object) => object.kind === kind && new RegExp(`^${name}-[a-z0-9]{10}$`).test(object.metadata.name));
  expect(found, `${kind} ${name}`).toHaveLength(1);
  return found[0]!;
};

const ROLES = [
  { role: 'gateway', kind: 'StatefulSet', name: 'music-bot-gateway' },
  { role: 'worker', kind: 'Deployment', name: 'music-bot-worker' },
  { role: 'http', kind: 'Deployment', name: 'music-bot-http' },
] as const;
const JOBS = [
  { name: 'music-bot-migrate', args: ['node', 'build/src/scripts/db-migrate.js'] },
  { name: 'music-bot-register-commands', args: ['node', 'build/src/scripts/deploy-commands.js'] },
] as const;

/** The variables that carry a secret: tokens, keys, passwords, and the connection URLs that hold passwords. */
const SECRET_VARIABLES = CONFIG_VARIABLES.filter(
  (name) => (/(TOKEN|PASSWORD|SECRET|_KEY)$/.test(name) && name !== 'DISCORD_PUBLIC_KEY') || name === 'DATABASE_URL' || name === 'REDIS_URL',
);

type Env = Record<string, string>;
interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { fieldRef?: { fieldPath: string }; secretKeyRef?: { name: string; key: string }; configMapKeyRef?: { name: string; key: string } };
}
interface Probe {
  httpGet?: { path: string; port: string | number };
}

/**
 * A container's environment as the kubelet builds it: each envFrom source in order, then env
 * (which wins), a field reference read from `podLabels`.
 */
function environmentOf(objects: KubeObject[], container: ReturnType<typeof containersOf>[number], podLabels: Record<string, string>): Env {
  const env: Env = {};
  const dataOf = (kind: 'ConfigMap' | 'Secret', name: string) => {
    const object = find(objects, kind, name);
    const data = object.data as Record<string, string>;
    return kind === 'Secret' ? Object.fromEntries(Object.entries(data).map(([key, value]) => [key, Buffer.from(value, 'base64').toString()])) : data;
  };
  for (const source of container.envFrom ?? []) {
    if (source.configMapRef) Object.assign(env, dataOf('ConfigMap', source.configMapRef.name));
    if (source.secretRef) Object.assign(env, dataOf('Secret', source.secretRef.name));
  }
  for (const variable of (container.env ?? []) as EnvVar[]) {
    const from = variable.valueFrom;
    if (variable.value !== undefined) env[variable.name] = variable.value;
    else if (from?.secretKeyRef) env[variable.name] = dataOf('Secret', from.secretKeyRef.name)[from.secretKeyRef.key]!;
    else if (from?.configMapKeyRef) env[variable.name] = dataOf('ConfigMap', from.configMapKeyRef.name)[from.configMapKeyRef.key]!;
    else if (from?.fieldRef) {
      const label = /^metadata\.labels\['(.+)'\]$/.exec(from.fieldRef.fieldPath)?.[1];
      if (label === undefined || podLabels[label] === undefined) throw new Error(`${variable.name}: ${from.fieldRef.fieldPath} is not a label this test gives the pod`);
      env[variable.name] = podLabels[label]!;
    }
  }
  return env;
}

/** The bot container of a role's workload. */
const botContainer = (objects: KubeObject[], kind: string, name: string) => podSpecOf(find(objects, kind, name))!.containers[0]!;

/** The shards each gateway pod runs, as the bot's config reads its environment (a StatefulSet labels pod N with pod-index N). */
function gatewayShards(objects: KubeObject[]): number[][] {
  const statefulSet = find(objects, 'StatefulSet', 'music-bot-gateway');
  const replicas = (statefulSet.spec as { replicas: number }).replicas;
  return Array.from({ length: replicas }, (_, ordinal) => {
    const env = environmentOf(objects, botContainer(objects, 'StatefulSet', 'music-bot-gateway'), { 'apps.kubernetes.io/pod-index': String(ordinal) });
    // The base leaves the application id and the service's address to an overlay: only the shards are read here.
    return [...(loadConfig({ env, require: [] }).shardIds ?? [])];
  });
}

/** The example with a different gateway count and replica count: the StatefulSet's replicas and the gateway ConfigMap's values. */
function withGateways(shardCount: number, replicas: number): KubeObject[] {
  const objects = structuredClone(example);
  (find(objects, 'StatefulSet', 'music-bot-gateway').spec as { replicas: number }).replicas = replicas;
  Object.assign(generated(objects, 'ConfigMap', 'music-bot-gateway').data as Env, { SHARD_COUNT: String(shardCount), GATEWAY_REPLICAS: String(replicas) });
  return objects;
}

const MODELS: Record<string, Record<string, unknown>> = {
  v1: coreV1,
  'apps/v1': appsV1,
  'batch/v1': batchV1,
  'policy/v1': policyV1,
  'keda.sh/v1alpha1': kedaV1alpha1,
  'monitoring.coreos.com/v1': monitoringV1,
};

/** The schema's complaint about `object`, or undefined when it is valid. */
function schemaErrors(object: KubeObject): string | undefined {
  const Model = MODELS[object.apiVersion]?.[object.kind] as (new (data: unknown) => { validate(): void }) | undefined;
  if (!Model) return `${object.apiVersion} ${object.kind} has no schema here`;
  // kustomize writes a long Secret value in lines of base64, whose line breaks the API server's decoder skips.
  const sent = object.kind === 'Secret' ? { ...object, data: Object.fromEntries(Object.entries(object.data as Env).map(([key, value]) => [key, value.replace(/\n/g, '')])) } : object;
  try {
    new Model(sent).validate();
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

describe('deploy/kubernetes rendered', () => {
  it('renders the three roles, the two jobs, the Secret, the ServiceMonitor, the rules and the scaler', () => {
    const names = example.map((object) => `${object.kind}/${object.metadata.name.replace(/-[a-z0-9]{10}$/, '-<hash>')}`).sort();
    expect(names).toEqual(
      [
        'Namespace/music-bot',
        'ConfigMap/music-bot-<hash>',
        'ConfigMap/music-bot-gateway-<hash>',
        'Secret/music-bot-secrets-<hash>',
        'Service/music-bot-gateway',
        'Service/music-bot-http',
        'Service/music-bot-metrics',
        'StatefulSet/music-bot-gateway',
        'Deployment/music-bot-worker',
        'Deployment/music-bot-http',
        'PodDisruptionBudget/music-bot-gateway',
        'PodDisruptionBudget/music-bot-http',
        'Job/music-bot-migrate',
        'Job/music-bot-register-commands',
        'ServiceMonitor/music-bot',
        'PrometheusRule/music-bot',
        'ScaledObject/music-bot-worker',
      ].sort(),
    );
    for (const object of example) if (object.kind !== 'Namespace') expect(object.metadata.namespace, object.metadata.name).toBe('music-bot');
    for (const container of example.flatMap(containersOf)) expect(container.image).toBe('registry.example.com/music-bot:0.2.0');
  });

  it.skipIf(!hasKubectl())('renders as kubectl kustomize does', () => {
    for (const dir of ['example', 'base', 'monitoring', 'autoscaling']) {
      const theirs = yaml.loadAll(execFileSync('kubectl', ['kustomize', path.join(copy, dir)], { encoding: 'utf8' })) as KubeObject[];
      const key = (object: KubeObject) => `${object.kind}/${object.metadata.namespace ?? ''}/${object.metadata.name}`;
      const sorted = (objects: KubeObject[]) => [...objects].sort((a, b) => key(a).localeCompare(key(b)));
      expect(sorted(renderKustomization(path.join(copy, dir))), dir).toEqual(sorted(theirs));
    }
    // Four kubectl processes: seconds on a loaded machine.
  }, 30_000);

  it("validates every object against the Kubernetes API's schemas and the CRDs'", () => {
    for (const object of [...example, ...base]) expect(schemaErrors(object), `${object.kind} ${object.metadata.name}`).toBeUndefined();
    // The schemas do refuse what they cover: a port by a name where a number belongs.
    const broken = structuredClone(find(example, 'StatefulSet', 'music-bot-gateway'));
    (podSpecOf(broken)!.containers[0]!.ports as Array<{ containerPort: unknown }>)[0]!.containerPort = 'ops';
    expect(schemaErrors(broken)).toMatch(/containerPort must be integer/);
  });
});

describe('the gateway StatefulSet', () => {
  it("gives each pod its share of SHARD_COUNT through the bot's own config: every shard once", () => {
    const shards = gatewayShards(example);
    expect(shards).toEqual([
      [0, 1, 2, 3],
      [4, 5, 6, 7],
      [8, 9, 10, 11],
    ]);
    for (const [shardCount, replicas] of [[1, 1], [2, 2], [12, 2], [16, 3], [20, 6], [24, 5], [97, 12]] as const) {
      const all = gatewayShards(withGateways(shardCount, replicas)).flat();
      expect(all, `${shardCount} shards on ${replicas}`).toEqual(Array.from({ length: shardCount }, (_, id) => id));
    }
    expect(gatewayShards(base).flat()).toEqual([0, 1]);
  });

  it("passes the pod's index as GATEWAY_ORDINAL and its replica count as GATEWAY_REPLICAS", () => {
    for (const objects of [example, base]) {
      const statefulSet = find(objects, 'StatefulSet', 'music-bot-gateway');
      const container = botContainer(objects, 'StatefulSet', 'music-bot-gateway');
      const ordinal = (container.env as EnvVar[]).find((variable) => variable.name === 'GATEWAY_ORDINAL');
      expect(ordinal?.valueFrom?.fieldRef?.fieldPath).toBe("metadata.labels['apps.kubernetes.io/pod-index']");
      const env = environmentOf(objects, container, { 'apps.kubernetes.io/pod-index': '0' });
      expect(Number(env.GATEWAY_REPLICAS)).toBe((statefulSet.spec as { replicas: number }).replicas);
      expect(env.ROLE).toBe('gateway');
      expect(env.SHARD_IDS).toBeUndefined();
    }
  });

  it('a replica count out of step with GATEWAY_REPLICAS stops the extra pod, and says why', () => {
    const objects = withGateways(12, 2);
    (find(objects, 'StatefulSet', 'music-bot-gateway').spec as { replicas: number }).replicas = 3;
    const env = environmentOf(objects, botContainer(objects, 'StatefulSet', 'music-bot-gateway'), { 'apps.kubernetes.io/pod-index': '2' });
    expect(() => loadConfig({ env })).toThrow(/GATEWAY_ORDINAL: expected an index below GATEWAY_REPLICAS \(2\)/);
  });
});

describe('every role', () => {
  it('reads only variables the bot knows, with its ROLE', () => {
    const known = new Set(CONFIG_VARIABLES);
    for (const configMap of byKind(example, 'ConfigMap')) for (const key of Object.keys(configMap.data as Env)) expect(known, `${configMap.metadata.name}: ${key}`).toContain(key);
    for (const container of example.flatMap(containersOf)) for (const variable of (container.env ?? []) as EnvVar[]) expect(known, `${container.name}: ${variable.name}`).toContain(variable.name);
    for (const { role, kind, name } of ROLES) {
      const env = environmentOf(example, botContainer(example, kind, name), { 'apps.kubernetes.io/pod-index': '0' });
      expect(env.ROLE).toBe(role);
      const config = loadConfig({ env });
      expect(config.role).toBe(role);
      expect(config.migrateOnStart, name).toBe(false);
    }
  });

  it('has /livez for liveness and /readyz for readiness, on the port METRICS_PORT serves', () => {
    for (const { kind, name } of ROLES) {
      const container = botContainer(example, kind, name);
      const env = environmentOf(example, container, { 'apps.kubernetes.io/pod-index': '0' });
      const ports = container.ports as Array<{ name: string; containerPort: number }>;
      const portOf = (probe: Probe | undefined) => ports.find((port) => port.name === probe?.httpGet?.port || port.containerPort === probe?.httpGet?.port)?.containerPort;
      const { livenessProbe, readinessProbe, startupProbe } = container as { livenessProbe?: Probe; readinessProbe?: Probe; startupProbe?: Probe };
      expect(livenessProbe?.httpGet?.path, name).toBe('/livez');
      expect(readinessProbe?.httpGet?.path, name).toBe('/readyz');
      expect(startupProbe?.httpGet?.path, name).toBe('/livez');
      for (const probe of [livenessProbe, readinessProbe, startupProbe]) expect(portOf(probe), name).toBe(Number(env.METRICS_PORT));
    }
  });

  it('migrates in an init container before the bot starts, with the migrate Job as the image runs it', () => {
    for (const { kind, name } of ROLES) {
      const init = podSpecOf(find(example, kind, name))!.initContainers ?? [];
      expect(init.map((container) => container.args), name).toEqual([JOBS[0].args]);
    }
    for (const { name, args } of JOBS) {
      const job = find(example, 'Job', name);
      expect(containersOf(job).map((container) => container.args)).toEqual([args]);
      expect(podSpecOf(job)!.restartPolicy).toBe('Never');
    }
  });

  it('gives every container, init containers and jobs included, CPU and memory requests and limits', () => {
    for (const object of example) {
      for (const container of containersOf(object)) {
        const resources = container.resources as { requests?: Env; limits?: Env } | undefined;
        for (const side of ['requests', 'limits'] as const) for (const resource of ['cpu', 'memory']) expect(resources?.[side]?.[resource], `${object.metadata.name} ${container.name} ${side}.${resource}`).toBeDefined();
      }
    }
  });

  it('runs as a non-root user, read-only, without privilege, under RuntimeDefault seccomp, with /tmp writable', () => {
    for (const object of example) {
      const spec = podSpecOf(object);
      if (!spec) continue;
      const pod = spec.securityContext as { runAsNonRoot?: boolean; runAsUser?: number; seccompProfile?: { type: string } };
      expect(pod.runAsNonRoot, object.metadata.name).toBe(true);
      expect(pod.runAsUser, object.metadata.name).toBeGreaterThan(0);
      expect(pod.seccompProfile?.type, object.metadata.name).toBe('RuntimeDefault');
      expect(spec.automountServiceAccountToken, object.metadata.name).toBe(false);
      for (const container of containersOf(object)) {
        const where = `${object.metadata.name} ${container.name}`;
        expect(container.securityContext, where).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
        const tmp = (container.volumeMounts as Array<{ name: string; mountPath: string }> | undefined)?.find((mount) => mount.mountPath === '/tmp');
        expect(spec.volumes?.find((volume) => volume.name === tmp?.name)?.emptyDir, where).toBeDefined();
      }
    }
  });
});

describe('secrets', () => {
  it('come from the Secret: never in a ConfigMap, never written in env', () => {
    expect(SECRET_VARIABLES).toEqual(expect.arrayContaining(['DISCORD_TOKEN', 'MUSIC_API_KEY', 'DATABASE_URL', 'REDIS_URL', 'METRICS_TOKEN', 'REDIS_PASSWORD']));
    for (const objects of [example, base]) {
      for (const configMap of byKind(objects, 'ConfigMap')) for (const name of SECRET_VARIABLES) expect(configMap.data, `${configMap.metadata.name} holds ${name}`).not.toHaveProperty(name);
      for (const container of objects.flatMap(containersOf)) {
        for (const variable of (container.env ?? []) as EnvVar[]) if (SECRET_VARIABLES.includes(variable.name)) expect(variable.valueFrom?.secretKeyRef, `${container.name}: ${variable.name}`).toBeDefined();
      }
    }
    const secret = generated(example, 'Secret', 'music-bot-secrets');
    expect(Object.keys(secret.data as Env).sort()).toEqual(['DATABASE_URL', 'DISCORD_TOKEN', 'MUSIC_API_KEY', 'REDIS_URL']);
    for (const object of example) {
      for (const container of containersOf(object)) {
        const sources = (container.envFrom ?? []).map((source) => source.secretRef?.name).filter(Boolean);
        expect(sources, `${object.metadata.name} ${container.name}`).toEqual([secret.metadata.name]);
      }
    }
  });

  it('ship as placeholders only, in the example', () => {
    const lines = readFileSync(path.join(source, 'example/secrets.env.example'), 'utf8').split('\n').filter((line) => /^[A-Z_]+=/.test(line));
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line, line.split('=')[0]).toContain('replace-with');
    expect(readFileSync(path.join(root, '.gitignore'), 'utf8')).toContain('deploy/kubernetes/*/secrets.env');
  });
});

describe('the http role', () => {
  it('sits behind a Service on its public port, with a PodDisruptionBudget that keeps one', () => {
    const deployment = find(example, 'Deployment', 'music-bot-http');
    const labels = (deployment.spec as { template: { metadata: { labels: Env } } }).template.metadata.labels;
    const service = find(example, 'Service', 'music-bot-http').spec as { selector: Env; ports: Array<{ targetPort: string }> };
    expect(labels).toMatchObject(service.selector);
    const container = botContainer(example, 'Deployment', 'music-bot-http');
    const env = environmentOf(example, container, {});
    const http = (container.ports as Array<{ name: string; containerPort: number }>).find((port) => port.name === service.ports[0]!.targetPort);
    expect(http?.containerPort).toBe(Number(env.HTTP_PORT));
    const budget = find(example, 'PodDisruptionBudget', 'music-bot-http').spec as { minAvailable: number; selector: { matchLabels: Env } };
    expect(labels).toMatchObject(budget.selector.matchLabels);
    expect(budget.minAvailable).toBeGreaterThanOrEqual(1);
    expect((deployment.spec as { replicas: number }).replicas).toBeGreaterThan(budget.minAvailable);
  });
});

describe('monitoring', () => {
  it("scrapes every role's pods, and no job's, as job music-bot (the alert rules' job)", () => {
    const service = find(example, 'Service', 'music-bot-metrics');
    const selector = (service.spec as { selector: Env }).selector;
    const podLabels = (kind: string, name: string) => (find(example, kind, name).spec as { template: { metadata: { labels: Env } } }).template.metadata.labels;
    for (const { kind, name } of ROLES) expect(podLabels(kind, name), name).toMatchObject(selector);
    for (const { name } of JOBS) expect(podLabels('Job', name), name).not.toMatchObject(selector);
    const monitor = find(example, 'ServiceMonitor', 'music-bot').spec as {
      selector: { matchLabels: Env };
      endpoints: Array<{ port: string; path: string; relabelings: Array<{ targetLabel: string; replacement?: string }> }>;
    };
    expect(service.metadata.labels).toMatchObject(monitor.selector.matchLabels);
    expect(byKind(example, 'Service').filter((other) => other !== service && Object.entries(monitor.selector.matchLabels).every(([key, value]) => other.metadata.labels?.[key] === value))).toEqual([]);
    const [endpoint] = monitor.endpoints;
    expect((service.spec as { ports: Array<{ name: string }> }).ports.map((port) => port.name)).toContain(endpoint!.port);
    expect(endpoint!.path).toBe('/metrics');
    expect(endpoint!.relabelings).toContainEqual({ targetLabel: 'job', replacement: 'music-bot' });
    expect(readFileSync(ALERTS_FILE, 'utf8')).toContain('job="music-bot"');
  });

  it('has the PrometheusRule that npm run k8s:rules writes from deploy/prometheus/alerts.yml', () => {
    const committed = readFileSync(PROMETHEUS_RULE_FILE, 'utf8');
    expect(committed, 'deploy/kubernetes/monitoring/prometheus-rule.yaml is behind alerts.yml: run npm run k8s:rules').toBe(prometheusRuleYaml(readFileSync(ALERTS_FILE, 'utf8')));
    const rule = find(example, 'PrometheusRule', 'music-bot').spec as { groups: Array<{ rules: Array<{ alert: string }> }> };
    const alerts = rule.groups.flatMap((group) => group.rules.map((entry) => entry.alert));
    expect(alerts).toContain('MusicBotQueueStuck');
    expect(alerts).toHaveLength((readFileSync(ALERTS_FILE, 'utf8').match(/^\s*- alert: /gm) ?? []).length);
  });
});

describe('worker autoscaling', () => {
  it('scales the worker Deployment on queue depth and age that the bot exports, in its namespace', async () => {
    const worker = find(example, 'Deployment', 'music-bot-worker');
    expect((worker.spec as { replicas?: number }).replicas, 'the scaler owns the replica count').toBeUndefined();
    const scaler = find(example, 'ScaledObject', 'music-bot-worker').spec as {
      scaleTargetRef: { name: string; kind?: string };
      minReplicaCount: number;
      maxReplicaCount: number;
      fallback?: { replicas: number };
      triggers: Array<{ type: string; metricType: string; metadata: { query: string; threshold: string } }>;
    };
    expect(scaler.scaleTargetRef).toEqual({ name: 'music-bot-worker' });
    expect(scaler.minReplicaCount).toBeGreaterThanOrEqual(1);
    expect(scaler.fallback?.replicas).toBeLessThanOrEqual(scaler.maxReplicaCount);
    const exported = await createMetrics().registry.getMetricsAsJSON();
    const names = new Set(exported.map((metric) => metric.name));
    const queried = scaler.triggers.flatMap((trigger) => [...trigger.metadata.query.matchAll(/\b(musicbot_\w+)/g)].map((match) => match[1]!));
    expect(queried.sort()).toEqual(['musicbot_queue_depth', 'musicbot_queue_oldest_waiting_seconds']);
    for (const name of queried) expect(names, name).toContain(name);
    for (const trigger of scaler.triggers) {
      expect(trigger.type).toBe('prometheus');
      expect(trigger.metadata.query).toContain(`namespace="${worker.metadata.namespace}"`);
      expect(trigger.metadata.query).toContain('job="music-bot"');
      expect(Number(trigger.metadata.threshold)).toBeGreaterThan(0);
    }
    // A fallback replaces only AverageValue triggers' metrics (KEDA): the depth trigger carries it.
    expect(scaler.triggers.map((trigger) => trigger.metricType)).toContain('AverageValue');
  });
});

function hasKubectl(): boolean {
  try {
    execFileSync('kubectl', ['version', '--client'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
