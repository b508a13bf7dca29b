/**
 * This process's own gateway shards, as its `/readyz` and `/metrics` see them: status, ping and
 * since when a shard has not been `ready`. While the process starts, `/readyz` says "not yet"
 * until every shard has been ready once (identifying takes 5 s a shard per max_concurrency
 * bucket, so no time limit applies); after that, a shard down past the grace period fails it.
 * No discord.js here: the http server only holds the watch.
 */
import type { Metrics } from '../metrics.js';

/** One shard as the client reports it: discord.js's status in words, and its last ping (-1 before the first). */
export interface ShardState {
  readonly id: number;
  readonly status: string;
  readonly pingMs: number;
  /** The guilds the client holds on this shard, for `musicbot_gateway_shard_guilds`. */
  readonly guilds?: number;
}

export interface ShardSample extends ShardState {
  /** Since when (ms since the epoch) the shard has not been `ready`; undefined while it is. */
  readonly downSince: number | undefined;
}

export interface GatewayReadiness {
  readonly ready: boolean;
  /** The shards that were ready once and are not now, with how long; `overGrace` once past the grace period. */
  readonly shardsDown: ReadonlyArray<{ id: number; status: string; downForSeconds: number; overGrace: boolean }>;
  /** The shards not yet ready since the process started (waiting to identify, identifying, receiving their guilds); absent once none is. */
  readonly starting?: readonly number[];
}

export interface ShardWatchOptions {
  /** How long a shard may be other than `ready` before `/readyz` fails (GATEWAY_READY_GRACE_MS). */
  readonly graceMs: number;
  /** Where `musicbot_gateway_shard_up` and `musicbot_gateway_ping_seconds` are kept. */
  readonly metrics?: Pick<Metrics, 'gatewayShardUp' | 'gatewayPing' | 'gatewayShardGuilds'>;
}

export class ShardWatch {
  readonly graceMs: number;
  readonly #metrics: ShardWatchOptions['metrics'];
  readonly #downSince = new Map<number, number>();
  /** The shards seen `ready` at least once. */
  readonly #everReady = new Set<number>();
  #read: (() => readonly ShardState[]) | undefined;

  constructor(options: ShardWatchOptions) {
    this.graceMs = options.graceMs;
    this.#metrics = options.metrics;
  }

  /** Where the shards are read from once the gateway runs; before that, nothing is watched. */
  watch(read: () => readonly ShardState[]): void {
    this.#read = read;
  }

  /** Reads the shards now, notes which went down or came back, and updates the gauges. */
  sample(now = Date.now()): ShardSample[] {
    const shards = this.#read?.() ?? [];
    return shards.map((shard) => {
      const label = { shard: String(shard.id) };
      const up = shard.status === 'ready';
      if (up) {
        this.#downSince.delete(shard.id);
        this.#everReady.add(shard.id);
      }
      else if (!this.#downSince.has(shard.id)) this.#downSince.set(shard.id, now);
      this.#metrics?.gatewayShardUp.set(label, up ? 1 : 0);
      if (shard.pingMs >= 0) this.#metrics?.gatewayPing.set(label, shard.pingMs / 1000);
      else this.#metrics?.gatewayPing.remove(label);
      if (shard.guilds !== undefined) this.#metrics?.gatewayShardGuilds.set(label, shard.guilds);
      return { ...shard, downSince: this.#downSince.get(shard.id) };
    });
  }

  /** Ready once every shard has been ready, and then unless a shard has been down for longer than the grace period. */
  readiness(now = Date.now()): GatewayReadiness {
    const shards = this.sample(now);
    const starting = shards.filter((shard) => !this.#everReady.has(shard.id)).map((shard) => shard.id);
    const shardsDown = shards
      .filter((shard) => shard.downSince !== undefined && this.#everReady.has(shard.id))
      .map((shard) => {
        const downForMs = now - shard.downSince!;
        return { id: shard.id, status: shard.status, downForSeconds: Math.round(downForMs / 1000), overGrace: downForMs > this.graceMs };
      });
    return { ready: starting.length === 0 && !shardsDown.some((shard) => shard.overGrace), shardsDown, ...(starting.length > 0 && { starting }) };
  }
}
