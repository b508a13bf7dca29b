/**
 * Redis as production runs it when one server is not enough, on this machine: a primary with a
 * replica and three sentinels, or a three-primary cluster. Each process is a `redis-server`
 * (sentinels too: `redis-server <conf> --sentinel`, no redis-sentinel package needed) on a free
 * port, with its files in a temporary folder, under the embedded servers' watchdog so that none
 * outlives the test run. `stop()` kills them all and removes the folder.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { findFreePort } from '../../src/embedded/free-port.js';
import { spawnSupervised } from '../../src/embedded/supervised.js';
import { tcpProxy } from '@music-bot/test-world';

interface Server {
  readonly port: number;
  readonly child: ChildProcess;
}

/** Where the processes live, and how they go. */
class Processes {
  readonly servers: Server[] = [];
  readonly #onStop: Array<() => Promise<void>> = [];
  constructor(readonly dir: string) {}

  onStop(fn: () => Promise<void>): void {
    this.#onStop.push(fn);
  }

  /**
   * Starts a server (or a sentinel) and resolves once it listens. A port another process took
   * between the probe and the bind makes the server exit at once: it is started again on another.
   */
  async start(name: string, args: readonly string[]): Promise<Server> {
    for (let attempt = 1; ; attempt += 1) {
      const port = await findFreePort();
      const configFile = path.join(this.dir, `${name}.conf`);
      const logFile = path.join(this.dir, `${name}.log`);
      // Sentinels rewrite their configuration file: each has its own.
      await writeFile(configFile, '');
      await writeFile(logFile, '');
      const child = spawnSupervised(
        'redis-server',
        [configFile, '--port', String(port), '--bind', '127.0.0.1', '--dir', this.dir, '--logfile', logFile, '--save', '', '--appendonly', 'no', ...args],
        { stopSignal: 'SIGTERM' },
      );
      child.stdout?.resume();
      child.stderr?.resume();
      const server = { port, child };
      this.servers.push(server);
      if (await listening(child, logFile)) return server;
      if (attempt === 3) throw new Error(`${name} did not start:\n${await this.log(name)}`);
    }
  }

  /** The last lines of a server's log, for a failure's message. */
  async log(name: string, lines = 30): Promise<string> {
    const text = await readFile(path.join(this.dir, `${name}.log`), 'utf8').catch(() => '');
    return text.trimEnd().split('\n').slice(-lines).join('\n');
  }

  async stop(): Promise<void> {
    for (const { child } of this.servers) child.stdin?.end();
    await Promise.all(this.servers.map(({ child }) => (child.exitCode === null && child.signalCode === null ? new Promise((resolve) => child.once('exit', resolve)) : undefined)));
    for (const fn of this.#onStop) await fn().catch(() => {});
    await rm(this.dir, { recursive: true, force: true });
  }
}

/**
 * Whether a server came up: its log says it listens (a data node's "Ready to accept connections",
 * a sentinel's "Sentinel ID", both written after the bind), or false once it exited.
 */
async function listening(child: ChildProcess, logFile: string): Promise<boolean> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) return false;
    const log = await readFile(logFile, 'utf8').catch(() => '');
    if (log.includes('Ready to accept connections') || log.includes('Sentinel ID is')) return true;
    await sleep(50);
  }
  throw new Error(`redis-server did not start in 20 s:\n${(await readFile(logFile, 'utf8').catch(() => '')).slice(-2_000)}`);
}

/** A connection that fails fast rather than retrying: for set-up and checks, not for the bot. */
export function adminConnection(port: number, password?: string): Redis {
  const redis = new Redis({ host: '127.0.0.1', port, password, lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null, enableOfflineQueue: false });
  redis.on('error', () => {});
  return redis;
}

/** Runs `fn` on a fresh admin connection, closed after. */
export async function withAdmin<T>(port: number, password: string | undefined, fn: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = adminConnection(port, password);
  try {
    await redis.connect();
    return await fn(redis);
  } finally {
    redis.disconnect();
  }
}

/** Retries `check` every 100 ms until it returns true, or throws after `timeoutMs` naming `what`. */
export async function until(what: string, check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

export interface SlowLink {
  readonly port: number;
  close(): Promise<void>;
}

/**
 * A TCP link to `port` on this machine that holds every answer `delayMs` before passing it on,
 * as a far or busy sentinel does: a client that asks it something spends that long waiting.
 */
export async function slowLink(port: number, delayMs: number): Promise<SlowLink> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(port, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => {
        sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.on('data', (chunk: Buffer) => void setTimeout(() => client.writable && client.write(chunk), delayMs));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface SentinelGroup {
  /** The name the sentinels know the primary by. */
  readonly name: string;
  readonly sentinelPorts: readonly number[];
  /** The port of whichever server the sentinels name primary now. */
  primaryPort(): Promise<number>;
  /** The data nodes' ports: the first primary first. */
  readonly dataPorts: readonly number[];
  /** Kills the current primary with SIGKILL; resolves with its port. */
  killPrimary(): Promise<number>;
  /**
   * Cuts the first replica off the first primary (its link runs through a proxy): from now on
   * what the primary acknowledges never reaches the replica, as when a failover comes before
   * asynchronous replication has caught up. Resolves with the replica's last offset.
   */
  cutReplication(): Promise<number>;
  /** How far the primary's replication stream has come (its master_repl_offset). */
  primaryOffset(): Promise<number>;
  stop(): Promise<void>;
}

export interface SentinelGroupOptions {
  /** The data nodes' password (requirepass, masterauth, the sentinels' auth-pass). */
  readonly password: string;
  /** The sentinels' own password. */
  readonly sentinelPassword: string;
  /** How long the primary may be silent before a sentinel thinks it down. @defaultValue 1000 */
  readonly downAfterMs?: number;
}

/** A primary, a replica of it and three sentinels (quorum 2) that fail over within seconds. */
export async function startSentinelGroup(options: SentinelGroupOptions): Promise<SentinelGroup> {
  const name = 'botprimary';
  const { password, sentinelPassword } = options;
  const processes = new Processes(await mkdtemp(path.join(tmpdir(), 'redis-sentinel-')));
  try {
    const auth = ['--requirepass', password, '--masterauth', password];
    // The replica's first full sync starts at once, not after the default 5 s wait for more replicas.
    const primary = await processes.start('primary', [...auth, '--repl-diskless-sync-delay', '0']);
    const link = await tcpProxy(`redis://127.0.0.1:${primary.port}`);
    processes.onStop(() => link.close());
    const replica = await processes.start('replica', [...auth, '--replicaof', '127.0.0.1', String(link.port)]);
    const sentinels: Server[] = [];
    for (let i = 0; i < 3; i += 1) {
      sentinels.push(
        await processes.start(`sentinel-${i}`, [
          '--sentinel',
          '--requirepass', sentinelPassword,
          '--sentinel', 'monitor', name, '127.0.0.1', String(primary.port), '2',
          '--sentinel', 'auth-pass', name, password,
          '--sentinel', 'down-after-milliseconds', name, String(options.downAfterMs ?? 1_000),
          '--sentinel', 'failover-timeout', name, '5000',
          '--sentinel', 'parallel-syncs', name, '1',
        ]),
      );
    }
    const sentinelPorts = sentinels.map((sentinel) => sentinel.port);
    // Ready when the replica has synced and every sentinel knows the replica and the two other sentinels.
    await until('the replica to sync', () =>
      withAdmin(replica.port, password, async (redis) => (await redis.info('replication')).includes('master_link_status:up')),
    ).catch(async (error: Error) => {
      throw new Error(`${error.message}\n--- replica log\n${await processes.log('replica')}\n--- primary log\n${await processes.log('primary')}`);
    });
    for (const port of sentinelPorts) {
      await until(`sentinel ${port} to know its peers and the replica`, () =>
        withAdmin(port, sentinelPassword, async (redis) => {
          const peers = (await redis.call('SENTINEL', 'SENTINELS', name)) as unknown[];
          const replicas = (await redis.call('SENTINEL', 'REPLICAS', name)) as unknown[];
          return peers.length === 2 && replicas.length === 1;
        }),
      );
    }
    const primaryPort = () =>
      withAdmin(sentinelPorts[0]!, sentinelPassword, async (redis) => Number(((await redis.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name)) as string[])[1]));
    return {
      name,
      sentinelPorts,
      dataPorts: [primary.port, replica.port],
      primaryPort,
      async killPrimary() {
        const port = await primaryPort();
        const pid = await withAdmin(port, password, async (redis) => Number(/process_id:(\d+)/.exec(await redis.info('server'))?.[1]));
        process.kill(pid, 'SIGKILL');
        return port;
      },
      async cutReplication() {
        link.cut();
        return withAdmin(replica.port, password, async (redis) => Number(/slave_repl_offset:(\d+)/.exec(await redis.info('replication'))?.[1]));
      },
      primaryOffset: () => withAdmin(primary.port, password, async (redis) => Number(/master_repl_offset:(\d+)/.exec(await redis.info('replication'))?.[1])),
      stop: () => processes.stop(),
    };
  } catch (error) {
    await processes.stop();
    throw error;
  }
}

export interface RedisCluster {
  readonly ports: readonly number[];
  stop(): Promise<void>;
}

const SLOTS = 16_384;

/** Three primaries, no replicas, the slots split in three: made with CLUSTER ADDSLOTSRANGE and MEET. */
export async function startRedisCluster(): Promise<RedisCluster> {
  const processes = new Processes(await mkdtemp(path.join(tmpdir(), 'redis-cluster-')));
  try {
    const nodes: Server[] = [];
    for (let i = 0; i < 3; i += 1) {
      nodes.push(await processes.start(`node-${i}`, ['--cluster-enabled', 'yes', '--cluster-config-file', path.join(processes.dir, `nodes-${i}.conf`), '--cluster-node-timeout', '2000']));
    }
    const ports = nodes.map((node) => node.port);
    for (const port of ports) await until(`cluster node ${port}`, () => withAdmin(port, undefined, async (redis) => (await redis.ping()) === 'PONG'));
    await Promise.all(
      ports.map((port, i) =>
        withAdmin(port, undefined, async (redis) => {
          const first = Math.floor((SLOTS * i) / ports.length);
          const last = Math.floor((SLOTS * (i + 1)) / ports.length) - 1;
          await redis.call('CLUSTER', 'ADDSLOTSRANGE', String(first), String(last));
          if (i > 0) await redis.call('CLUSTER', 'MEET', '127.0.0.1', String(ports[0]));
        }),
      ),
    );
    for (const port of ports) {
      await until(`cluster node ${port} to see the cluster whole`, () =>
        withAdmin(port, undefined, async (redis) => {
          const info = String(await redis.call('CLUSTER', 'INFO'));
          return info.includes('cluster_state:ok') && info.includes('cluster_known_nodes:3');
        }),
      );
    }
    return { ports, stop: () => processes.stop() };
  } catch (error) {
    await processes.stop();
    throw error;
  }
}
