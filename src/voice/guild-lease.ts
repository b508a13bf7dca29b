/**
 * Which process plays a guild: two processes that run the same shard both hold the guild, and
 * a lease makes exactly one of them its player. The player claims the guild, holds it (the
 * lease is renewed on a timer while it plays), hears when it lapsed to another process, and
 * releases it when the player ends.
 */
import { randomUUID } from 'node:crypto';
import type { RedisClient } from '../queue/connection.js';

export interface GuildLease {
  /** How long a lease lasts without renewal: a process that died keeps its guilds this long. */
  readonly durationMs: number;
  /** Whether this process holds the guild's lease, taking it when free. */
  claim(guildId: string): Promise<boolean>;
  /** Renews the guild's lease until it is released; `lapsed` runs once if another process has taken it. */
  hold(guildId: string, lapsed: () => void): void;
  /** Stops renewing and lets the guild go, if the lease is still this process's. */
  release(guildId: string): Promise<void>;
  /** Stops renewing and lets every held guild go. */
  close(): Promise<void>;
}

export interface RedisGuildLeaseOptions {
  readonly redis: RedisClient;
  readonly prefix: string;
  /** How long a lease lasts without renewal (another process may take the guild after). @defaultValue 15000 */
  readonly durationMs?: number;
}

/** Extends the lease when it is ours, takes it again when it expired unclaimed; 0 when another process holds it. */
const RENEW = `
local owner = redis.call('get', KEYS[1])
if owner == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end
if not owner then redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1 end
return 0`;

/** Deletes the lease only when it is ours: a process that took over keeps its lease. */
const RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0";

/** Guild leases as Redis keys (`<prefix>:voice:owner:<guild>`) holding this process's id. */
export class RedisGuildLease implements GuildLease {
  readonly durationMs: number;
  readonly #redis: RedisClient;
  readonly #prefix: string;
  readonly #owner = randomUUID();
  /** The guilds this process holds, each with what to call when its lease lapses. */
  readonly #held = new Map<string, () => void>();
  readonly #renewal: NodeJS.Timeout;

  constructor(options: RedisGuildLeaseOptions) {
    this.#redis = options.redis;
    this.#prefix = options.prefix;
    this.durationMs = options.durationMs ?? 15_000;
    this.#renewal = setInterval(() => void this.#renew(), Math.max(1_000, Math.floor(this.durationMs / 3)));
    this.#renewal.unref();
  }

  async claim(guildId: string): Promise<boolean> {
    const key = this.#key(guildId);
    if ((await this.#redis.set(key, this.#owner, 'PX', this.durationMs, 'NX')) === 'OK') return true;
    return (await this.#redis.get(key)) === this.#owner;
  }

  hold(guildId: string, lapsed: () => void): void {
    this.#held.set(guildId, lapsed);
  }

  async release(guildId: string): Promise<void> {
    this.#held.delete(guildId);
    await this.#redis.eval(RELEASE, 1, this.#key(guildId), this.#owner);
  }

  async close(): Promise<void> {
    clearInterval(this.#renewal);
    const guildIds = [...this.#held.keys()];
    this.#held.clear();
    for (const guildId of guildIds) await this.release(guildId).catch(() => {});
  }

  async #renew(): Promise<void> {
    for (const [guildId, lapsed] of [...this.#held]) {
      // Redis unreachable: the lease is kept here and renewed on the next round, or taken again if it expired meanwhile.
      const renewed = await this.#redis.eval(RENEW, 1, this.#key(guildId), this.#owner, this.durationMs).catch(() => undefined);
      if (renewed !== 0 || this.#held.get(guildId) !== lapsed) continue;
      this.#held.delete(guildId);
      lapsed();
    }
  }

  #key(guildId: string): string {
    return `${this.#prefix}:voice:owner:${guildId}`;
  }
}
