/**
 * docker-compose.yml as an operator runs it (no engine runs here; CI also checks it with
 * `docker-compose config`): one migration, the commands registered, a connection budget that
 * holds three workers and a second gateway, Redis as BullMQ needs it, rotated logs, the password
 * from .env, /metrics off the public port, and gateway processes that each hold shards of their own.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import yaml from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.js';

const root = path.resolve(import.meta.dirname, '../../..');
const text = readFileSync(path.join(root, 'docker-compose.yml'), 'utf8');

interface Service {
  image?: string;
  command?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  ports?: string[];
  expose?: string[];
  profiles?: string[];
  restart?: string;
  logging?: { driver: string; options: Record<string, string> };
  healthcheck?: { test: string[] };
}
const services = (yaml.load(text) as { services: Record<string, Service> }).services;
const botServices = ['gateway', 'gateway-2', 'worker', 'http', 'bot'] as const;

describe('docker-compose.yml', () => {
  it('migrates once, in a one-shot service the bot waits for, and registers the commands', () => {
    expect(services.migrate).toMatchObject({ command: ['node', 'build/src/scripts/db-migrate.js'], restart: 'no' });
    expect(services['register-commands']).toMatchObject({ command: ['node', 'build/src/scripts/deploy-commands.js'], restart: 'no' });
    for (const name of botServices) {
      const service = services[name]!;
      expect(service.depends_on?.migrate, name).toEqual({ condition: 'service_completed_successfully' });
      expect(service.environment?.MIGRATE_ON_START, name).toBe('false');
    }
  });

  it("sizes Postgres's connections for --scale worker=3 and the second gateway", () => {
    const max = Number(/max_connections=(\d+)/.exec(services.postgres!.command!.join(' '))?.[1]);
    const pool = (name: string) => Number(services[name]!.environment!.DATABASE_POOL_SIZE);
    // One pool and one health connection per process in the split roles, the migration's one;
    // Postgres keeps 3 for superusers.
    const needed = pool('gateway') + pool('gateway-2') + pool('http') + 3 * pool('worker') + 6 + 1 + 3;
    expect(max).toBeGreaterThanOrEqual(needed);
  });

  it('runs Redis as BullMQ needs it: noeviction, append-only, fsync stated', () => {
    const command = services.redis!.command!.join(' ');
    expect(command).toContain('--maxmemory-policy noeviction');
    expect(command).toContain('--appendonly yes');
    expect(command).toMatch(/--appendfsync (everysec|always)/);
  });

  it('reads the database password from .env, and writes none down', () => {
    expect(services.postgres!.environment!.POSTGRES_PASSWORD).toMatch(/^\$\{POSTGRES_PASSWORD:\?/);
    for (const name of botServices) expect(services[name]!.environment!.DATABASE_URL).toContain('${POSTGRES_PASSWORD:?');
    expect(text).not.toMatch(/POSTGRES_PASSWORD: [^$]/);
    expect(text).not.toMatch(/postgres:\/\/\w+:\w+@/);
  });

  it('rotates the logs of every service', () => {
    for (const [name, service] of Object.entries(services)) {
      expect(service.logging, name).toEqual({ driver: 'json-file', options: { 'max-size': expect.any(String), 'max-file': expect.any(String) } });
    }
  });

  it('keeps /metrics off the public port: only 8080 is published, health and metrics are on 9100', () => {
    const published = Object.values(services).flatMap((service) => service.ports ?? []);
    expect(new Set(published)).toEqual(new Set(['8080:8080']));
    for (const name of botServices) {
      expect(services[name]!.environment!.METRICS_PORT, name).toBe('9100');
      expect(services[name]!.healthcheck?.test, name).toEqual(['CMD', 'node', 'build/src/scripts/healthcheck.js']);
    }
  });

  it('gives each gateway process shards of its own, from .env, and says not to scale the gateway', () => {
    const gateways = Object.entries(services).filter(([, service]) => service.environment?.ROLE === 'gateway');
    expect(gateways.map(([name]) => name)).toEqual(['gateway', 'gateway-2']);
    // Unset, the first holds every shard (one gateway); the second runs only in its profile.
    expect(services.gateway!.environment!.SHARD_IDS).toBe('${GATEWAY_SHARD_IDS:-}');
    expect(services['gateway-2']!.profiles).toEqual(['sharded']);
    // Without its ids the second refuses to start (an invalid SHARD_IDS) rather than hold every shard again.
    const unset = /^\$\{GATEWAY_2_SHARD_IDS:-(.+)\}$/.exec(services['gateway-2']!.environment!.SHARD_IDS!)?.[1];
    expect(unset).toBeDefined();
    expect(() => loadConfig({ env: { SHARD_IDS: unset }, require: [] })).toThrow(/SHARD_IDS: expected shard ids/);
    expect(() => loadConfig({ env: { SHARD_IDS: '4-7' }, require: [] })).not.toThrow();
    for (const [name, service] of gateways) expect(service.environment!.SHARD_COUNT, name).toBe('${SHARD_COUNT:-}');
    expect(text).toMatch(/--scale gateway=N/);
    expect(text).toMatch(/--profile sharded up -d/);
  });

  it('tags the image with a version', () => {
    const version = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string }).version;
    expect(services.gateway!.image).toBe(`music-bot:\${MUSIC_BOT_VERSION:-${version}}`);
    expect(readFileSync(path.join(root, 'CHANGELOG.md'), 'utf8')).toContain(`## ${version}`);
  });
});
