/**
 * Postgres and Redis as the configuration asks: the given URLs, or embedded ones under
 * DATA_DIR for a bot run on a single machine without any setup.
 */
import path from 'node:path';
import type { Config, RedisTarget } from '../config.js';
import type { Logger } from '../logger.js';
import { startEmbeddedPostgres } from './embedded-postgres.js';
import { startRedisServer } from './redis-server.js';

export interface Infrastructure {
  readonly databaseUrl: string;
  /** The configured Redis, or the embedded one; a single server's address, '' when none was needed. */
  readonly redisUrl: string;
  /** Where every Redis connection goes: the configured server, sentinels or cluster, or the embedded server. */
  readonly redis: RedisTarget;
  stop(): Promise<void>;
}

export async function startInfrastructure(
  config: Pick<Config, 'databaseUrl' | 'redis' | 'dataDir'>,
  logger: Logger,
  needs: { redis: boolean } = { redis: true },
): Promise<Infrastructure> {
  const stops: Array<() => Promise<void>> = [];
  const stop = async () => {
    for (const fn of stops.reverse()) await fn().catch((err) => logger.error({ err }, 'stopping a service failed'));
  };
  try {
    let databaseUrl = config.databaseUrl;
    if (!databaseUrl) {
      const postgres = await startEmbeddedPostgres({ dataDir: path.join(config.dataDir, 'postgres'), logger });
      stops.push(() => postgres.stop());
      databaseUrl = postgres.url;
    }
    let redis: RedisTarget = config.redis ?? { mode: 'single', url: '' };
    if (config.redis === undefined && needs.redis) {
      const server = await startRedisServer({ dataDir: path.join(config.dataDir, 'redis'), logger });
      stops.push(() => server.stop());
      redis = { mode: 'single', url: server.url };
    }
    return { databaseUrl, redisUrl: redis.mode === 'single' ? redis.url : '', redis, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
