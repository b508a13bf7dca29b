/**
 * Every Redis connection the bot makes, to one server, to the primary its sentinels name, or to
 * a cluster, as the configuration says. BullMQ's own connections are duplicates of these, so
 * they reach the same place. A connection's errors are logged, at most one line per name per
 * {@link ERROR_LOG_EVERY_MS}, with how many there were since, and never with a password.
 */
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { RedisTarget } from '../config.js';
import type { Logger } from '../logger.js';

/** A connection to a single server (or a sentinel-watched primary) or to a cluster. */
export type RedisClient = Redis | Cluster;

/** At most one error line per connection name in this window. */
export const ERROR_LOG_EVERY_MS = 30_000;

/** How long a connection that ended on its own waits before it connects again. */
export const RECONNECT_ENDED_AFTER_MS = 500;

/** The connections {@link closeRedis} was asked to close: they stay closed. */
const closing = new WeakSet<RedisClient>();

export interface RedisLogOptions {
  /** Names the connection in its log lines: `main`, `workers`, `voice-subscriber`… */
  readonly name: string;
  readonly logger: Logger;
  /** @defaultValue {@link ERROR_LOG_EVERY_MS} */
  readonly errorLogEveryMs?: number;
  /** Strings never to log (the passwords the connection was given). */
  readonly secrets?: readonly (string | undefined)[];
  /** @defaultValue {@link RECONNECT_ENDED_AFTER_MS} */
  readonly reconnectEndedAfterMs?: number;
}

/**
 * Connects as `target` says (a plain URL is one server). BullMQ workers block on Redis and must
 * retry forever rather than fail a command, so every connection takes `maxRetriesPerRequest: null`.
 * Close it with {@link closeRedis}: one that ends any other way is connected again.
 */
export function connectRedis(target: RedisTarget | string, log: RedisLogOptions): RedisClient {
  const resolved: RedisTarget = typeof target === 'string' ? { mode: 'single', url: target } : target;
  const common: RedisOptions = {
    maxRetriesPerRequest: null,
    enableReadyCheck: true,
    // A primary demoted to a replica refuses writes: reconnect (to the new primary) and resend.
    reconnectOnError: (error) => (error.message.startsWith('READONLY') ? 2 : false),
  };
  let client: RedisClient;
  if (resolved.mode === 'single') {
    client = new Redis(resolved.url, { ...common, ...(resolved.password !== undefined && { password: resolved.password }) });
  } else if (resolved.mode === 'sentinel') {
    client = new Redis({
      ...common,
      sentinels: resolved.sentinels.map(({ host, port }) => ({ host, port })),
      name: resolved.name,
      db: resolved.db,
      username: resolved.username,
      password: resolved.password,
      sentinelPassword: resolved.sentinelPassword,
      // Told by the sentinels of a failover at once, rather than at the next failed command.
      failoverDetector: true,
    });
  } else {
    client = new Cluster(
      resolved.nodes.map(({ host, port }) => ({ host, port })),
      { redisOptions: { ...common, username: resolved.username, password: resolved.password } },
    );
  }
  const secrets = [resolved.password, resolved.mode === 'sentinel' ? resolved.sentinelPassword : undefined, ...(log.secrets ?? [])];
  watchRedisConnection(client, { ...log, secrets });
  return client;
}

/**
 * Closes a connection made here for good: QUIT lets the commands already sent finish, then
 * disconnect lets go of what QUIT leaves open. With sentinels, ioredis's failover watch holds a
 * connection to each sentinel that QUIT does not close, and that would reconnect every minute,
 * to sentinels long gone, with nobody listening for its errors.
 */
export async function closeRedis(client: RedisClient, quitWithinMs = 2_000): Promise<void> {
  closing.add(client);
  // A connection that cannot reach its server (a primary gone, sentinels stopped) would keep QUIT
  // waiting in its offline queue for ever: after `quitWithinMs` it is disconnected all the same.
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, quitWithinMs)));
  await Promise.race([client.quit().catch(() => undefined), late]);
  clearTimeout(timer);
  client.disconnect();
}

/**
 * Logs what happens to `client`: its errors (the first at once, then at most one line per
 * window, with the count since the last line), the moment it loses its server (once per outage)
 * and the moment it is back (once). Without a listener an 'error' would crash the process.
 *
 * A connection that ends without {@link closeRedis} is connected again: ioredis gives up on a
 * sentinel connection for good when the sentinels announce a failover while it is asking them
 * for the primary, and every command after that would fail at once, BullMQ's included.
 */
export function watchRedisConnection(client: RedisClient, options: RedisLogOptions): void {
  const { name, logger } = options;
  const reportError = rateLimitedErrorLog(options, 'redis connection error');
  let downSince: number | undefined;
  let errorsWhileDown = 0;
  // Whether the connection ended on its own since it was last ready.
  let endedSince = false;
  const onError = (error: unknown) => {
    if (downSince !== undefined) errorsWhileDown += 1;
    reportError(error);
  };
  client.on('error', onError);
  // A cluster tells of a node's errors apart from its own.
  client.on('node error', onError);
  client.on('reconnecting', () => {
    if (downSince !== undefined) return;
    downSince = Date.now();
    errorsWhileDown = 0;
    logger.warn({ redis: name }, 'redis connection lost; reconnecting');
  });
  client.on('end', () => {
    if (closing.has(client)) return;
    // Once per outage, as a loss is: a failed attempt ends the connection again, and comes back here.
    if (!endedSince) {
      endedSince = true;
      downSince ??= Date.now();
      logger.warn({ redis: name }, 'redis connection ended; connecting again');
    }
    const timer = setTimeout(() => {
      if (!closing.has(client) && client.status === 'end') client.connect().catch(() => undefined);
    }, options.reconnectEndedAfterMs ?? RECONNECT_ENDED_AFTER_MS);
    // A process on its way out does not wait for this.
    timer.unref();
  });
  client.on('ready', () => {
    endedSince = false;
    if (downSince === undefined) return;
    logger.info({ redis: name, downMs: Date.now() - downSince, errors: errorsWhileDown }, 'redis connection restored');
    downSince = undefined;
  });
}

/**
 * A function that logs the errors it is given under `message`: the first at once, then at most
 * one line per window, each line with `errors`, how many came since the last line. Passwords
 * (and anything between `//` and `@` in an address) are taken out of the text.
 */
export function rateLimitedErrorLog(options: RedisLogOptions, message: string): (error: unknown) => void {
  const { name, logger } = options;
  const everyMs = options.errorLogEveryMs ?? ERROR_LOG_EVERY_MS;
  const secrets = (options.secrets ?? []).filter((secret): secret is string => secret !== undefined && secret.length > 0);
  let lastLineAt = Number.NEGATIVE_INFINITY;
  let unlogged = 0;
  return (error) => {
    unlogged += 1;
    const now = Date.now();
    if (now - lastLineAt < everyMs) return;
    lastLineAt = now;
    logger.error({ redis: name, errors: unlogged, err: scrubbed(error, secrets) }, message);
    unlogged = 0;
  };
}

function scrubbed(error: unknown, secrets: readonly string[]): { message: string; code?: string; name?: string } {
  let text = error instanceof Error ? error.message : String(error);
  for (const secret of secrets) text = text.split(secret).join('[redacted]');
  text = text.replace(/\/\/[^/@\s]*@/g, '//[redacted]@');
  const code = (error as { code?: unknown } | undefined)?.code;
  return { message: text, ...(typeof code === 'string' && { code }), ...(error instanceof Error && { name: error.name }) };
}
