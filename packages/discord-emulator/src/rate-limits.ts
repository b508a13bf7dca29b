/**
 * Discord's rate limits, as a bot meets them: per-route buckets counted per top-level
 * resource (channel, guild, or interaction webhook), a global limit per bot token that the
 * interaction routes are exempt from, and the headers and 429 answers Discord sends.
 * Windows are fixed and timed by the emulator's clock, so `clock.advance` also ends them.
 */
import { createHash } from 'node:crypto';
import type { EmulatorClock } from './clock.js';

/** `limit` requests per `windowMs`, counted from the first request of a window. */
export interface BucketLimit {
  readonly limit: number;
  readonly windowMs: number;
}

/** The emulator's limits; any left out keep Discord's values ({@link DISCORD_RATE_LIMITS}). */
export interface RateLimitSettings {
  /** Requests per bot token across every route but the interaction ones. @defaultValue 50 per 1 s */
  readonly global?: BucketLimit;
  /** `POST /channels/{id}/messages`, per channel. @defaultValue 5 per 5 s */
  readonly channelMessages?: BucketLimit;
  /** Follow-ups, edits and deletions of one interaction's messages, per token. @defaultValue 5 per 2 s */
  readonly interactionWebhook?: BucketLimit;
  /** Every other route, per route and top-level resource. @defaultValue 20 per 1 s */
  readonly other?: BucketLimit;
}

export const DISCORD_RATE_LIMITS: Readonly<Required<RateLimitSettings>> = Object.freeze({
  global: { limit: 50, windowMs: 1_000 },
  channelMessages: { limit: 5, windowMs: 5_000 },
  interactionWebhook: { limit: 5, windowMs: 2_000 },
  other: { limit: 20, windowMs: 1_000 },
});

export type RateLimitScope = 'user' | 'global' | 'shared';

/** One 429 the emulator answered. */
export interface RateLimitHit {
  /** `seq` of the request in `emulator.requests`. */
  requestSeq: number;
  /** Emulator clock time of the answer. */
  at: number;
  method: string;
  path: string;
  /** The emulator's route template, e.g. `/channels/{channel_id}/messages`. */
  route: string | null;
  /** `X-RateLimit-Bucket` of the limit hit; `null` for the global limit. */
  bucket: string | null;
  scope: RateLimitScope;
  /** Seconds the bot was told to wait. */
  retryAfter: number;
  /** Asked for by a test with `rateLimitNext`, not earned by the bot. */
  scripted: boolean;
}

export interface RateLimitRequest {
  method: string;
  /** The matched route template. */
  route: string;
  params: Record<string, string>;
  /** Who is counted: the Authorization header as sent (bot routes), or null. */
  identity: string | null;
  /** A correct bot token was presented: the request counts toward the global limit. */
  bot: boolean;
}

export type RateLimitDecision =
  | { limited: false; headers: Record<string, string> }
  | { limited: true; headers: Record<string, string>; body: RateLimitBody; scope: RateLimitScope; bucket: string | null; retryAfter: number };

export interface RateLimitBody {
  message: string;
  retry_after: number;
  global: boolean;
}

interface Window {
  remaining: number;
  resetAt: number;
}

interface BucketChoice {
  /** What Discord would call the bucket; its hash is the `X-RateLimit-Bucket` header. */
  name: string;
  /** The top-level resource the bucket is counted for. */
  major: string;
  limit: BucketLimit;
  global: boolean;
}

const RATE_LIMITED = 'You are being rate limited.';
const SWEEP_AT = 10_000;

/** Seconds with millisecond precision, as Discord writes them. */
const seconds = (ms: number): string => (ms / 1000).toFixed(3);

/** An opaque id per bucket name, like Discord's (the same for every channel or token). */
export function bucketHash(name: string): string {
  return createHash('sha256').update(name).digest('hex').slice(0, 32);
}

export class RateLimiter {
  readonly #limits: Required<RateLimitSettings>;
  readonly #clock: EmulatorClock;
  readonly #windows = new Map<string, Window>();
  readonly #global = new Map<string, Window>();
  readonly #hashes = new Map<string, string>();

  constructor(clock: EmulatorClock, settings: RateLimitSettings = {}) {
    this.#clock = clock;
    this.#limits = { ...DISCORD_RATE_LIMITS, ...settings };
    for (const [name, limit] of Object.entries(this.#limits)) {
      if (!Number.isInteger(limit.limit) || limit.limit < 1 || !(limit.windowMs > 0)) {
        throw new RangeError(`rateLimits.${name} needs a whole limit of at least 1 and a positive windowMs`);
      }
    }
  }

  /** The `X-RateLimit-Bucket` a request to this route gets. */
  bucketOf(method: string, route: string): string {
    return this.#hash(this.#choose(method, route, {}).name);
  }

  /** Counts one request: its rate-limit headers, or the 429 Discord would answer instead. */
  take(request: RateLimitRequest): RateLimitDecision {
    const now = this.#clock.now();
    const choice = this.#choose(request.method, request.route, request.params);

    if (choice.global && request.bot && request.identity !== null) {
      const window = this.#open(this.#global, request.identity, this.#limits.global, now);
      if (window.remaining <= 0) {
        const retryAfter = Number(seconds(window.resetAt - now));
        return {
          limited: true,
          scope: 'global',
          bucket: null,
          retryAfter,
          body: { message: RATE_LIMITED, retry_after: retryAfter, global: true },
          headers: { 'retry-after': String(Math.ceil(retryAfter)), 'x-ratelimit-global': 'true', 'x-ratelimit-scope': 'global' },
        };
      }
      window.remaining -= 1;
    }

    const bucket = this.#hash(choice.name);
    const key = `${request.identity ?? ''}\u0000${choice.name}\u0000${choice.major}`;
    const window = this.#open(this.#windows, key, choice.limit, now);
    const limited = window.remaining <= 0;
    if (!limited) window.remaining -= 1;
    const headers: Record<string, string> = {
      'x-ratelimit-limit': String(choice.limit.limit),
      'x-ratelimit-remaining': String(window.remaining),
      'x-ratelimit-reset': seconds(window.resetAt),
      'x-ratelimit-reset-after': seconds(window.resetAt - now),
      'x-ratelimit-bucket': bucket,
    };
    if (!limited) return { limited: false, headers };
    const retryAfter = Number(seconds(window.resetAt - now));
    return {
      limited: true,
      scope: 'user',
      bucket,
      retryAfter,
      body: { message: RATE_LIMITED, retry_after: retryAfter, global: false },
      headers: { ...headers, 'retry-after': String(Math.ceil(retryAfter)), 'x-ratelimit-scope': 'user' },
    };
  }

  /** The window for `key`, a fresh one when the last has ended. */
  #open(windows: Map<string, Window>, key: string, limit: BucketLimit, now: number): Window {
    let window = windows.get(key);
    if (!window && windows.size >= SWEEP_AT) {
      // Every interaction token is a bucket of its own: forget the windows that have ended.
      for (const [other, open] of windows) if (now >= open.resetAt) windows.delete(other);
    }
    if (!window || now >= window.resetAt) {
      window = { remaining: limit.limit, resetAt: now + limit.windowMs };
      windows.set(key, window);
    }
    return window;
  }

  #choose(method: string, route: string, params: Record<string, string>): BucketChoice {
    if (route.startsWith('/interactions/')) {
      return { name: `${method} ${route}`, major: params.interaction_id ?? '', limit: this.#limits.other, global: false };
    }
    if (route.startsWith('/webhooks/{webhook_id}/{webhook_token}')) {
      const major = `${params.webhook_id ?? ''}/${params.webhook_token ?? ''}`;
      if (method === 'GET') return { name: `${method} ${route}`, major, limit: this.#limits.other, global: false };
      return { name: 'interaction webhook messages', major, limit: this.#limits.interactionWebhook, global: false };
    }
    if (method === 'POST' && route === '/channels/{channel_id}/messages') {
      return { name: 'channel message create', major: params.channel_id ?? '', limit: this.#limits.channelMessages, global: true };
    }
    const major = params.channel_id ?? params.guild_id ?? '';
    return { name: `${method} ${route}`, major, limit: this.#limits.other, global: true };
  }

  #hash(name: string): string {
    let hash = this.#hashes.get(name);
    if (!hash) {
      hash = bucketHash(name);
      this.#hashes.set(name, hash);
    }
    return hash;
  }
}
