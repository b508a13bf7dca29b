/**
 * A budget of requests that every process shares through Redis: at most `perSecond` permits in
 * any sliding second across the deployment, evenly spaced, timed by Redis's clock. It holds Discord's global
 * REST limit, which is per bot token, not per process (docs/decisions/discord-rest-budget.md).
 *
 * When Redis does not answer in time, the process falls back to its share of the budget (the
 * budget over the processes last seen taking permits) for a few seconds, and logs it at most
 * once a minute: a request waits its turn, but never for Redis.
 */
import { createHash, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import type { Logger } from '../logger.js';

export interface RequestBudgetOptions {
  readonly redis: Pick<Redis, 'evalsha' | 'eval'>;
  /** The queue prefix: the keys are `<prefix>:<name>:…`, in one slot of a Redis Cluster when the prefix is a hash tag. */
  readonly prefix: string;
  /** What the budget is for, in its keys and log lines, e.g. `discord-rest`. */
  readonly name: string;
  /** Permits in any sliding second, across every process. */
  readonly perSecond: number;
  readonly logger: Logger;
  /** How long a permit waits for Redis before the process takes it from its own share. @defaultValue 1000 */
  readonly redisTimeoutMs?: number;
  /** How long the process keeps to its own share once Redis has not answered. @defaultValue 5000 */
  readonly fallbackMs?: number;
}

export interface RequestBudget {
  /** Resolves when one request may be sent. Rejects (an AbortError, or the signal's reason) when it aborts first. */
  take(signal?: AbortSignal): Promise<void>;
}

const WINDOW_MS = 1_000;
/** A process that took no permit for this long no longer counts in the shares. */
const SEEN_MS = 30_000;
const LOG_EVERY_MS = 60_000;

/**
 * GCRA without burst, in one script: permits evenly spaced, one per `window / limit` ms, timed
 * by Redis's clock. Evenly spaced rather than in bursts of the whole budget, so that requests
 * that reach Discord a little early or late cannot bunch two seconds' bursts into one.
 * Returns `{ wait ms (0: granted), processes seen lately }`.
 * KEYS: next permit time, processes. ARGV: window ms, limit, process id, seen ms.
 */
const TAKE_SCRIPT = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + tonumber(time[2]) / 1000
local window = tonumber(ARGV[1])
local seen = tonumber(ARGV[4])
redis.call('ZADD', KEYS[2], now, ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - seen)
redis.call('PEXPIRE', KEYS[2], seen)
local processes = redis.call('ZCARD', KEYS[2])
local next = tonumber(redis.call('GET', KEYS[1]) or '0')
if next > now then
  return {math.max(1, math.ceil(next - now)), processes}
end
redis.call('SET', KEYS[1], string.format('%.3f', now + window / tonumber(ARGV[2])), 'PX', window)
return {0, processes}
`;
const TAKE_SHA = createHash('sha1').update(TAKE_SCRIPT).digest('hex');

export function createRequestBudget(options: RequestBudgetOptions): RequestBudget {
  const { redis, logger, perSecond } = options;
  const keys = [`${options.prefix}:${options.name}:next`, `${options.prefix}:${options.name}:processes`];
  const processId = randomUUID();
  const redisTimeoutMs = options.redisTimeoutMs ?? 1_000;
  const fallbackMs = options.fallbackMs ?? 5_000;
  let processes = 1;
  let ownShareUntil = 0;
  let lastWarning = -Infinity;
  let fallbacks = 0;
  // This process's own permits, for the share it falls back to.
  const granted: number[] = [];
  // One waiter at a time asks Redis; the others queue behind it in order.
  let line: Promise<unknown> = Promise.resolve();

  async function askRedis(): Promise<number> {
    const args = [WINDOW_MS, perSecond, processId, SEEN_MS];
    const reply = (await redis.evalsha(TAKE_SHA, keys.length, ...keys, ...args).catch((error: unknown) => {
      if (error instanceof Error && error.message.startsWith('NOSCRIPT')) return redis.eval(TAKE_SCRIPT, keys.length, ...keys, ...args);
      throw error;
    })) as [number, number];
    processes = Math.max(1, reply[1]);
    return reply[0];
  }

  function askOwnShare(): number {
    const now = performance.now();
    while (granted.length > 0 && granted[0]! <= now - WINDOW_MS) granted.shift();
    if (granted.length < Math.max(1, Math.floor(perSecond / processes))) {
      granted.push(now);
      return 0;
    }
    return Math.max(1, Math.ceil(granted[0]! + WINDOW_MS - now));
  }

  async function ask(): Promise<number> {
    if (performance.now() < ownShareUntil) return askOwnShare();
    let timer: NodeJS.Timeout | undefined;
    try {
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer from Redis within ${redisTimeoutMs} ms`)), redisTimeoutMs);
      });
      const wait = await Promise.race([askRedis(), timeout]);
      if (fallbacks > 0) {
        logger.info({ budget: options.name, fallbacks }, 'request budget shared through Redis again');
        fallbacks = 0;
      }
      return wait;
    } catch (error) {
      ownShareUntil = performance.now() + fallbackMs;
      fallbacks += 1;
      if (performance.now() - lastWarning >= LOG_EVERY_MS) {
        lastWarning = performance.now();
        logger.warn(
          { budget: options.name, err: error, share: Math.max(1, Math.floor(perSecond / processes)), processes },
          'request budget: Redis unreachable, this process keeps to its share',
        );
      }
      return askOwnShare();
    } finally {
      clearTimeout(timer);
    }
  }

  async function take(signal: AbortSignal | undefined): Promise<void> {
    for (;;) {
      signal?.throwIfAborted();
      const wait = await ask();
      if (wait === 0) return;
      await sleep(wait, undefined, { signal });
    }
  }

  return {
    take(signal) {
      const turn = line.then(() => take(signal));
      line = turn.catch(() => undefined);
      return turn;
    },
  };
}
