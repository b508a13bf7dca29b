/**
 * Discord's identify limit, kept for the whole deployment in Redis: one IDENTIFY per bucket
 * (`shard_id % max_concurrency`) per 5 s, whichever process the shard runs in. discord.js takes
 * it as its `ws.buildIdentifyThrottler` (docs/decisions/gateway-start.md).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { RESTGetAPIGatewayBotResult } from 'discord-api-types/v10';

/** Discord's window: one IDENTIFY per bucket in it. */
export const IDENTIFY_WINDOW_MS = 5_000;
/**
 * Added to the window: the slot is taken in Redis a moment before the IDENTIFY reaches
 * Discord, and that moment differs from one process (and host) to another.
 */
export const IDENTIFY_MARGIN_MS = 250;

/** The Redis commands the throttler uses: a plain connection or a cluster's. */
export interface IdentifySlots {
  set(key: string, value: string, px: 'PX', ms: number, nx: 'NX'): Promise<'OK' | null>;
  pttl(key: string): Promise<number>;
}

export interface RedisIdentifyThrottlerOptions {
  readonly redis: IdentifySlots;
  /** The queue prefix: keys are `${prefix}:gateway:identify:<bucket>`, in the prefix's cluster slot when it is a hash tag. */
  readonly prefix: string;
  /** `session_start_limit.max_concurrency` from GET /gateway/bot. */
  readonly maxConcurrency: number;
  /** @defaultValue IDENTIFY_WINDOW_MS */
  readonly windowMs?: number;
  /** @defaultValue IDENTIFY_MARGIN_MS */
  readonly marginMs?: number;
}

/** The key that holds a bucket's slot while its window lasts. */
export function identifySlotKey(prefix: string, bucket: number): string {
  return `${prefix}:gateway:identify:${bucket}`;
}

/**
 * discord.js's identify throttler (`IIdentifyThrottler` of @discordjs/ws), shared through Redis.
 * A shard takes its bucket's slot with `SET NX PX`: the key expires by itself, so a process
 * that dies holding it costs the others one window, no more. Within a process the shards of a
 * bucket queue in order, so only the first asks Redis.
 */
export class RedisIdentifyThrottler {
  readonly maxConcurrency: number;
  readonly #options: RedisIdentifyThrottlerOptions;
  readonly #holdMs: number;
  /** Per bucket, the end of this process's queue. */
  readonly #tails = new Map<number, Promise<void>>();

  constructor(options: RedisIdentifyThrottlerOptions) {
    if (!Number.isInteger(options.maxConcurrency) || options.maxConcurrency < 1) throw new RangeError(`max_concurrency must be a positive integer, not ${options.maxConcurrency}`);
    this.#options = options;
    this.maxConcurrency = options.maxConcurrency;
    this.#holdMs = (options.windowMs ?? IDENTIFY_WINDOW_MS) + (options.marginMs ?? IDENTIFY_MARGIN_MS);
  }

  /** Resolves when the shard may send IDENTIFY; rejects when `signal` aborts (the shard closed while waiting). */
  async waitForIdentify(shardId: number, signal: AbortSignal): Promise<void> {
    const bucket = shardId % this.maxConcurrency;
    const before = this.#tails.get(bucket) ?? Promise.resolve();
    let done!: () => void;
    const mine = new Promise<void>((resolve) => (done = resolve));
    this.#tails.set(bucket, before.then(() => mine));
    try {
      await abortable(before, signal);
      await this.#takeSlot(identifySlotKey(this.#options.prefix, bucket), `${process.pid}:${shardId}`, signal);
    } finally {
      done();
    }
  }

  async #takeSlot(key: string, holder: string, signal: AbortSignal): Promise<void> {
    const { redis } = this.#options;
    for (;;) {
      signal.throwIfAborted();
      if ((await redis.set(key, holder, 'PX', this.#holdMs, 'NX')) === 'OK') return;
      // -2: gone since; -1 cannot happen (every slot is set with PX), so it is retried soon.
      const left = await redis.pttl(key);
      // A little spread, so that processes waiting on one bucket do not all ask at the same moment.
      await sleep(Math.max(left, 20) + Math.random() * 50, undefined, { signal });
    }
  }
}

/** What `buildIdentifyThrottler` is handed: @discordjs/ws's manager, which caches GET /gateway/bot. */
export interface GatewayInformationSource {
  fetchGatewayInformation(): Promise<RESTGetAPIGatewayBotResult>;
}

/** discord.js's `ws.buildIdentifyThrottler`: a shared throttler at the bot's `max_concurrency`. */
export function redisIdentifyThrottler(options: Omit<RedisIdentifyThrottlerOptions, 'maxConcurrency'>): (manager: GatewayInformationSource) => Promise<RedisIdentifyThrottler> {
  return async (manager) => {
    const information = await manager.fetchGatewayInformation();
    return new RedisIdentifyThrottler({ ...options, maxConcurrency: information.session_start_limit.max_concurrency });
  };
}

function abortable(promise: Promise<void>, signal: AbortSignal): Promise<void> {
  signal.throwIfAborted();
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    void promise.then(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    });
  });
}
