/**
 * The part of kustomize (v5) that deploy/kubernetes/ uses, so that the tests render the
 * manifests without kubectl: resources (files and folders), namespace, labels, images,
 * replicas, configMapGenerator and secretGenerator (literals and env files, behavior merge),
 * the generated names' hash suffixes and the references to them in pod specs. Anything else
 * in a kustomization.yaml throws, so the manifests cannot drift past what this renders. When
 * kubectl is on PATH, test/unit/deploy/kubernetes.test.ts also compares with `kubectl kustomize`.
 */
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import yaml from 'js-yaml';

/** One rendered Kubernetes object. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; [key: string]: unknown };
  [key: string]: unknown;
}

interface Generator {
  name: string;
  behavior?: 'create' | 'merge' | 'replace';
  literals?: string[];
  envs?: string[];
  type?: string;
}

interface Kustomization {
  apiVersion?: string;
  kind?: string;
  resources?: string[];
  namespace?: string;
  labels?: Array<{ pairs: Record<string, string>; includeSelectors?: boolean; includeTemplates?: boolean }>;
  images?: Array<{ name: string; newName?: string; newTag?: string }>;
  replicas?: Array<{ name: string; count: number }>;
  configMapGenerator?: Generator[];
  secretGenerator?: Generator[];
}

const KNOWN_FIELDS = new Set(['apiVersion', 'kind', 'resources', 'namespace', 'labels', 'images', 'replicas', 'configMapGenerator', 'secretGenerator']);
const CLUSTER_SCOPED = new Set(['Namespace', 'ClusterRole', 'ClusterRoleBinding', 'CustomResourceDefinition', 'PersistentVolume', 'StorageClass', 'PriorityClass']);
const WORKLOADS = new Set(['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Job']);

/** A rendered object, and, for a generated ConfigMap or Secret, that its name takes a hash suffix. */
interface Entry {
  object: KubeObject;
  generated: boolean;
}

/** The objects `kubectl kustomize <dir>` prints, in no particular order. */
export function renderKustomization(dir: string): KubeObject[] {
  const entries = build(dir);
  return finish(entries);
}

function build(dir: string): Entry[] {
  const file = path.join(dir, 'kustomization.yaml');
  const k = (yaml.load(readFileSync(file, 'utf8')) ?? {}) as Kustomization;
  const unknown = Object.keys(k).filter((key) => !KNOWN_FIELDS.has(key));
  if (unknown.length > 0) throw new Error(`${file}: ${unknown.join(', ')} is more of kustomize than test/support/kustomize.ts renders`);

  const entries: Entry[] = [];
  for (const resource of k.resources ?? []) {
    const target = path.join(dir, resource);
    if (statSync(target).isDirectory()) entries.push(...build(target));
    else for (const object of yaml.loadAll(readFileSync(target, 'utf8'))) if (object) entries.push({ object: object as KubeObject, generated: false });
  }
  for (const generator of k.configMapGenerator ?? []) generate(entries, 'ConfigMap', generator, dir);
  for (const generator of k.secretGenerator ?? []) generate(entries, 'Secret', generator, dir);

  if (k.namespace !== undefined) for (const { object } of entries) if (!CLUSTER_SCOPED.has(object.kind)) object.metadata.namespace = k.namespace;
  for (const { pairs, includeSelectors = false, includeTemplates = false } of k.labels ?? []) {
    if (includeSelectors) throw new Error(`${file}: labels with includeSelectors is more than test/support/kustomize.ts renders`);
    for (const { object } of entries) {
      object.metadata.labels = { ...object.metadata.labels, ...pairs };
      if (includeTemplates && WORKLOADS.has(object.kind)) {
        const template = (object.spec as { template: { metadata?: { labels?: Record<string, string> } } }).template;
        template.metadata = { ...template.metadata, labels: { ...template.metadata?.labels, ...pairs } };
      }
    }
  }
  for (const image of k.images ?? []) for (const { object } of entries) for (const container of containersOf(object)) container.image = retag(container.image, image);
  for (const { name, count } of k.replicas ?? []) {
    const targets = entries.filter(({ object }) => object.metadata.name === name && WORKLOADS.has(object.kind));
    if (targets.length === 0) throw new Error(`${file}: replicas names ${name}, which no workload has`);
    for (const { object } of targets) (object.spec as { replicas?: number }).replicas = count;
  }
  return entries;
}

/** A generator's ConfigMap or Secret, added, or merged into (or replacing) the one generated below. */
function generate(entries: Entry[], kind: 'ConfigMap' | 'Secret', generator: Generator, dir: string): void {
  const data: Record<string, string> = {};
  for (const envFile of generator.envs ?? []) Object.assign(data, parseEnvFile(readFileSync(path.join(dir, envFile), 'utf8')));
  for (const literal of generator.literals ?? []) {
    const at = literal.indexOf('=');
    data[literal.slice(0, at)] = literal.slice(at + 1);
  }
  const encoded = kind === 'Secret' ? Object.fromEntries(Object.entries(data).map(([key, value]) => [key, base64Lines(value)])) : data;
  const behavior = generator.behavior ?? 'create';
  const existing = entries.find(({ object, generated }) => generated && object.kind === kind && object.metadata.name === generator.name);
  if (behavior === 'create') {
    if (existing) throw new Error(`${kind} ${generator.name} is generated twice: use behavior merge or replace`);
    const object: KubeObject = { apiVersion: 'v1', kind, metadata: { name: generator.name }, data: encoded };
    if (kind === 'Secret') object.type = generator.type ?? 'Opaque';
    entries.push({ object, generated: true });
    return;
  }
  if (!existing) throw new Error(`${kind} ${generator.name}: behavior ${behavior} needs one generated below`);
  existing.object.data = behavior === 'merge' ? { ...(existing.object.data as Record<string, string>), ...encoded } : encoded;
}

/** Base64 as kustomize writes a Secret's value: past 70 characters, in lines of 70, each ended by a newline. */
function base64Lines(value: string): string {
  const encoded = Buffer.from(value).toString('base64');
  if (encoded.length < 70) return encoded;
  return encoded.replace(/.{1,70}/g, (line) => `${line}\n`);
}

/** kustomize's env files: KEY=VALUE lines; blank lines and # comments skipped. */
function parseEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\r$/, '').trimStart();
    if (line === '' || line.startsWith('#')) continue;
    const at = line.indexOf('=');
    if (at <= 0) throw new Error(`env file line without KEY=VALUE: ${line}`);
    out[line.slice(0, at)] = line.slice(at + 1);
  }
  return out;
}

interface Container {
  name: string;
  image: string;
  env?: Array<{ name: string; value?: string; valueFrom?: Record<string, { name?: string; key?: string; fieldPath?: string }> }>;
  envFrom?: Array<{ configMapRef?: { name: string }; secretRef?: { name: string } }>;
  [key: string]: unknown;
}

interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  volumes?: Array<{ name: string; configMap?: { name: string }; secret?: { secretName: string }; [key: string]: unknown }>;
  [key: string]: unknown;
}

/** The pod spec of a workload (or a Pod), if it has one. */
export function podSpecOf(object: KubeObject): PodSpec | undefined {
  if (object.kind === 'Pod') return object.spec as PodSpec;
  if (WORKLOADS.has(object.kind)) return (object.spec as { template: { spec: PodSpec } }).template.spec;
  if (object.kind === 'CronJob') return (object.spec as { jobTemplate: { spec: { template: { spec: PodSpec } } } }).jobTemplate.spec.template.spec;
  return undefined;
}

/** Every container of an object's pod spec, init containers included. */
export function containersOf(object: KubeObject): Container[] {
  const spec = podSpecOf(object);
  return spec ? [...(spec.initContainers ?? []), ...spec.containers] : [];
}

/** `image` with the images entry's new name and tag, when its name is the entry's. */
function retag(image: string, { name, newName, newTag }: { name: string; newName?: string; newTag?: string }): string {
  const match = /^(.*?)(?::([^:/@]+))?(@.*)?$/.exec(image)!;
  if (match[1] !== name) return image;
  return `${newName ?? name}${newTag !== undefined ? `:${newTag}` : match[2] !== undefined ? `:${match[2]}` : ''}${match[3] ?? ''}`;
}

/** Hash suffixes on the generated names, and every reference in a pod spec renamed with them. */
function finish(entries: Entry[]): KubeObject[] {
  const renamed = { ConfigMap: new Map<string, string>(), Secret: new Map<string, string>() };
  for (const { object, generated } of entries) {
    if (!generated) continue;
    const name = `${object.metadata.name}-${contentHash(object)}`;
    renamed[object.kind as 'ConfigMap' | 'Secret'].set(object.metadata.name, name);
    object.metadata.name = name;
  }
  const configMap = (name: string) => renamed.ConfigMap.get(name) ?? name;
  const secret = (name: string) => renamed.Secret.get(name) ?? name;
  for (const { object } of entries) {
    const spec = podSpecOf(object);
    if (!spec) continue;
    for (const container of containersOf(object)) {
      for (const source of container.envFrom ?? []) {
        if (source.configMapRef) source.configMapRef.name = configMap(source.configMapRef.name);
        if (source.secretRef) source.secretRef.name = secret(source.secretRef.name);
      }
      for (const variable of container.env ?? []) {
        const from = variable.valueFrom;
        if (from?.configMapKeyRef?.name) from.configMapKeyRef.name = configMap(from.configMapKeyRef.name);
        if (from?.secretKeyRef?.name) from.secretKeyRef.name = secret(from.secretKeyRef.name);
      }
    }
    for (const volume of spec.volumes ?? []) {
      if (volume.configMap) volume.configMap.name = configMap(volume.configMap.name);
      if (volume.secret) volume.secret.secretName = secret(volume.secret.secretName);
    }
  }
  return entries.map(({ object }) => object);
}

/**
 * kustomize's name hash: SHA-256 of the Go JSON encoding (keys sorted, <, > and & escaped) of
 * kind, data, a Secret's type and an empty name (kustomize looks the name up at a path it never
 * finds), its first ten hex digits with 0, 1, 3, a and e swapped for letters.
 */
function contentHash(object: KubeObject): string {
  const fields: Record<string, unknown> = { data: sortKeys((object.data as Record<string, string>) ?? {}), kind: object.kind, name: '' };
  if (object.kind === 'Secret') fields.type = object.type;
  const json = JSON.stringify(sortKeys(fields)).replace(/[<>&\u2028\u2029]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
  const hex = createHash('sha256').update(json).digest('hex').slice(0, 10);
  const swap: Record<string, string> = { '0': 'g', '1': 'h', '3': 'k', a: 'm', e: 't' };
  return [...hex].map((char) => swap[char] ?? char).join('');
}

function sortKeys<T extends Record<string, unknown>>(record: T): T {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) as T;
}
