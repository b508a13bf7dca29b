/**
 * The gateway's heartbeat for `/healthz`: each shard's status and ping, and the deployment's
 * shard count, written to Redis (src/queue/health-records.ts) every few seconds and on connect or drop,
 * so the http process can report shards it does not run and those nobody runs. The same
 * readings feed this process's {@link ShardWatch}.
 */
import { Events, Status, type Client } from 'discord.js';
import type { RedisClient } from '../queue/connection.js';
import type { Logger } from '../logger.js';
import { HEARTBEAT_EVERY_MS, MISSED_HEARTBEATS, removeShardHeartbeats, writeShardHeartbeats, type ShardHeartbeat } from '../queue/health-records.js';
import { ShardWatch } from './shard-watch.js';

export interface ShardHealthOptions {
  readonly client: Client;
  readonly redis: RedisClient;
  readonly prefix: string;
  readonly logger: Logger;
  /** @defaultValue HEARTBEAT_EVERY_MS */
  readonly everyMs?: number;
  /** This process's watch, which from now on reads the client's shards. @defaultValue a watch of its own */
  readonly watch?: ShardWatch;
}

const STATUS_NAMES = new Map<number, string>(
  Object.entries(Status)
    .filter((entry): entry is [string, number] => typeof entry[1] === 'number')
    .map(([name, value]) => [value, name.replace(/(?<=[a-z])(?=[A-Z])/g, '_').toLowerCase()]),
);

/** `ready`, `connecting`, `reconnecting`, `disconnected`, `waiting_for_guilds`, … */
export function shardStatusName(status: number): string {
  return STATUS_NAMES.get(status) ?? `unknown_${status}`;
}

/**
 * Starts writing heartbeats at once; `stop` ends them and takes this process's shards out of the
 * record (they then count as missing until a process holds them again).
 */
export function publishShardHealth(options: ShardHealthOptions): { stop(): Promise<void> } {
  const { client, redis, prefix, logger } = options;
  const watch = options.watch ?? new ShardWatch({ graceMs: 0 });
  watch.watch(() => {
    const guilds = guildsByShard(client);
    return client.ws.shards.map((shard) => ({ id: shard.id, status: shardStatusName(shard.status), pingMs: shard.ping, guilds: guilds.get(shard.id) ?? 0 }));
  });
  const everyMs = options.everyMs ?? HEARTBEAT_EVERY_MS;
  const staleAfterMs = MISSED_HEARTBEATS * everyMs;
  const written = new Set<number>();
  let writing: Promise<void> = Promise.resolve();
  const publish = () => {
    const at = Date.now();
    // discord.js knows the count once it has asked Discord for it (SHARD_COUNT unset), before it makes any shard.
    const { shardCount } = client.options;
    const shards: ShardHeartbeat[] = watch
      .sample(at)
      .map(({ downSince, ...shard }) => ({ ...shard, at, staleAfterMs, ...(downSince !== undefined && { downSince }), ...(shardCount !== undefined && shardCount > 0 && { shardCount }) }));
    for (const shard of shards) written.add(shard.id);
    writing = writeShardHeartbeats(redis, prefix, shards).catch((err: unknown) => logger.debug({ err }, 'could not write the gateway heartbeat'));
  };
  const events = [Events.ShardReady, Events.ShardDisconnect, Events.ShardReconnecting, Events.ShardResume] as const;
  for (const event of events) client.on(event, publish);
  const timer = setInterval(publish, everyMs);
  timer.unref();
  publish();
  return {
    async stop() {
      clearInterval(timer);
      for (const event of events) client.off(event, publish);
      // A write still on its way would put the shards back after their removal.
      await writing;
      await removeShardHeartbeats(redis, prefix, [...written]).catch((err: unknown) => logger.warn({ err }, 'could not remove the gateway heartbeat'));
    },
  };
}

/** How many guilds each shard of this process carries: the client holds every guild of its shards (the Guilds intent). */
function guildsByShard(client: Client): Map<number, number> {
  const counts = new Map<number, number>();
  for (const guild of client.guilds.cache.values()) counts.set(guild.shardId, (counts.get(guild.shardId) ?? 0) + 1);
  return counts;
}
