/**
 * Postgres and Redis as the configuration asks: the given URLs, or embedded ones under
 * DATA_DIR for a bot run on a single machine without any setup.
 */
import path from 'node:path';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { startEmbeddedPostgres } from './embedded-postgres.js';
import { startRedisServer } from './redis-server.js';

export interface Infrastructure {
  readonly databaseUrl: string;
  readonly redisUrl: string;
  stop(): Promise<void>;
}

export async function startInfrastructure(
  config: Pick<Config, 'databaseUrl' | 'redisUrl' | 'dataDir'>,
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
    let redisUrl = config.redisUrl ?? '';
    if (!redisUrl && needs.redis) {
      const redis = await startRedisServer({ dataDir: path.join(config.dataDir, 'redis'), logger });
      stops.push(() => redis.stop());
      redisUrl = redis.url;
    }
    return { databaseUrl, redisUrl, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
