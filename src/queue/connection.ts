import { Redis } from 'ioredis';

/**
 * BullMQ workers block on Redis and must retry forever rather than fail a command, so their
 * connections take `maxRetriesPerRequest: null`.
 */
export function connectRedis(url: string): Redis {
  const redis = new Redis(url, { maxRetriesPerRequest: null, enableReadyCheck: true });
  // Errors surface on the commands that fail; an unhandled 'error' event would crash the process.
  redis.on('error', () => {});
  return redis;
}
