/**
 * The world the bot runs in outside production: Postgres, Redis, the music-API simulator and
 * the Discord emulator, each real, and the bot's processes on top. Postgres and Redis are
 * embedded ones in a folder of the world's own, or servers the caller already has.
 */
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { DiscordEmulator, DiscordEmulatorOptions } from '@music-bot/discord-emulator';
import type { MusicApiSim, MusicApiSimOptions } from '@music-bot/music-api-sim';
import { startEmbeddedPostgres } from '../../../src/embedded/embedded-postgres.js';
import { findFreePort } from '../../../src/embedded/free-port.js';
import { startRedisServer } from '../../../src/embedded/redis-server.js';
import { BotProcess, runBotScript, type BotEntry, type BotProcessOptions } from './bot-process.js';
import { startStandIns } from './stand-ins.js';

export interface WorldOptions {
  /** A running Postgres database to use, or settings for an embedded one (the default). */
  readonly postgres?: { readonly url: string } | { readonly settings?: Readonly<Record<string, string>>; readonly maxConnections?: number };
  /**
   * A running Redis to use (with a key prefix of the caller's own), or an embedded one (the
   * default), kept on disk as a production Redis is when `persistent`.
   */
  readonly redis?: { readonly url: string; readonly prefix?: string } | { readonly persistent?: boolean };
  readonly sim?: Partial<MusicApiSimOptions>;
  readonly emulator?: Partial<DiscordEmulatorOptions>;
  /** The bot's HTTP port (webhooks, interactions). @defaultValue a free port */
  readonly httpPort?: number;
}

/** A server the world started, which can be stopped and started again on the same data and port. */
export interface EmbeddedServer {
  readonly url: string;
  readonly dataDir: string;
  readonly port: number;
  readonly running: boolean;
  stop(): Promise<void>;
  start(): Promise<void>;
}

export interface World {
  /** The world's own folder, removed when it closes. */
  readonly temp: string;
  readonly postgresUrl: string;
  readonly redisUrl: string;
  /** The queues' key prefix, when the caller gave one. */
  readonly queuePrefix: string | undefined;
  /** Postgres and Redis when the world started them (undefined when the caller gave a URL). */
  readonly postgres: EmbeddedServer | undefined;
  readonly redis: (EmbeddedServer & { flushAll(): Promise<void> }) | undefined;
  readonly sim: MusicApiSim;
  readonly emulator: DiscordEmulator;
  readonly httpPort: number;
  /** `http://127.0.0.1:<httpPort>`. */
  readonly httpUrl: string;
  /** What the bot needs to run in this world (Discord, the music service, Postgres, Redis, a data folder), with `extra` on top. */
  env(extra?: Readonly<Record<string, string>>): Record<string, string>;
  /** MODERATION_URL and MODERATION_API_KEY of the simulator's moderation stand-in: add them to `env` for a bot that checks requests with it. */
  readonly moderationEnv: Readonly<Record<string, string>>;
  /** A bot process in this world (not started); `env` is added to the world's. Stopped when the world closes. */
  bot(options?: Omit<BotProcessOptions, 'env'> & { readonly env?: Readonly<Record<string, string>> }): BotProcess;
  /** `npm run deploy-commands` in this world. */
  deployCommands(options?: { entry?: BotEntry; env?: Readonly<Record<string, string>> }): Promise<void>;
  /** Stops the bots, the stand-ins and the servers, and removes the folder. */
  close(): Promise<void>;
}

export async function startWorld(options: WorldOptions = {}): Promise<World> {
  const temp = await mkdtemp(path.join(os.tmpdir(), 'music-bot-world-'));
  // Run as root, Postgres runs as the postgres user: let it in, so the cluster stays in here.
  await chmod(temp, 0o755);
  const cleanups: Array<() => Promise<unknown>> = [() => rm(temp, { recursive: true, force: true })];
  const bots: BotProcess[] = [];
  const close = async () => {
    await Promise.all(bots.map((bot) => bot.stop()));
    for (const cleanup of cleanups) await cleanup().catch(() => {});
  };
  try {
    const postgres = options.postgres && 'url' in options.postgres ? undefined : await embeddedPostgres(path.join(temp, 'pg'), options.postgres ?? {});
    if (postgres) cleanups.unshift(() => postgres.stop());
    const redis = options.redis && 'url' in options.redis ? undefined : await embeddedRedis(path.join(temp, 'redis'), options.redis?.persistent ?? false);
    if (redis) cleanups.unshift(() => redis.stop());
    const postgresUrl = postgres?.url ?? (options.postgres as { url: string }).url;
    const redisUrl = redis?.url ?? (options.redis as { url: string }).url;
    const queuePrefix = options.redis && 'url' in options.redis ? options.redis.prefix : undefined;

    const standIns = await startStandIns({ ...(options.sim && { sim: options.sim }), ...(options.emulator && { emulator: options.emulator }) });
    cleanups.unshift(() => standIns.close());
    const { sim, emulator } = standIns;
    const httpPort = options.httpPort ?? (await findFreePort());

    const env = (extra: Readonly<Record<string, string>> = {}): Record<string, string> => ({
      ...standIns.env,
      DATABASE_URL: postgresUrl,
      REDIS_URL: redisUrl,
      ...(queuePrefix !== undefined && { QUEUE_PREFIX: queuePrefix }),
      HTTP_PORT: String(httpPort),
      DATA_DIR: path.join(temp, 'data'),
      // No load balancer to drain from here: a stopped process closes at once (a test of the drain sets its own).
      SHUTDOWN_DRAIN_MS: '0',
      ...extra,
    });
    return {
      temp,
      postgresUrl,
      redisUrl,
      queuePrefix,
      postgres,
      redis,
      sim,
      emulator,
      httpPort,
      httpUrl: `http://127.0.0.1:${httpPort}`,
      env,
      moderationEnv: standIns.moderationEnv,
      bot(botOptions = {}) {
        const bot = new BotProcess({ ...botOptions, env: env(botOptions.env) });
        bots.push(bot);
        return bot;
      },
      async deployCommands({ entry, env: extra } = {}) {
        await runBotScript('deploy-commands', env(extra), entry);
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** A server started by `start` on `port`, which can be stopped and started again on the same data and port. */
async function restartable(dataDir: string, port: number, start: () => Promise<{ url: string; stop(): Promise<void> }>): Promise<EmbeddedServer> {
  let handle: { url: string; stop(): Promise<void> } | undefined = await start();
  return {
    url: handle.url,
    dataDir,
    port,
    get running() {
      return handle !== undefined;
    },
    async stop() {
      await handle?.stop();
      handle = undefined;
    },
    async start() {
      handle ??= await start();
    },
  };
}

async function embeddedPostgres(dataDir: string, options: { settings?: Readonly<Record<string, string>>; maxConnections?: number }): Promise<EmbeddedServer> {
  const port = await findFreePort();
  return restartable(dataDir, port, () => startEmbeddedPostgres({ dataDir, port, ...options }));
}

async function embeddedRedis(dataDir: string, persistent: boolean): Promise<EmbeddedServer & { flushAll(): Promise<void> }> {
  const port = await findFreePort();
  const server = await restartable(dataDir, port, () => startRedisServer({ dataDir, port, persistent }));
  return Object.assign(server, { flushAll: async () => void (await redisCommand(port, 'FLUSHALL')) });
}

/** One command to redis-server in its own protocol, on a connection of its own (no client library state). */
function redisCommand(port: number, ...words: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let answer = '';
    socket.once('error', reject);
    socket.on('data', (chunk) => {
      answer += chunk.toString();
      if (answer.endsWith('\r\n')) {
        socket.end();
        resolve(answer.trim());
      }
    });
    socket.write(`*${words.length}\r\n${words.map((word) => `$${Buffer.byteLength(word)}\r\n${word}\r\n`).join('')}`);
  });
}
