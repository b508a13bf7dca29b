/**
 * A `redis-server` child process for people who run the bot without a REDIS_URL and for the
 * test suite. Append-only persistence under the data directory, bound to loopback.
 */
import { spawnSync } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../logger.js';
import { silentLogger } from '../logger.js';
import { waitUntilReady } from './child-output.js';
import { findFreePort } from './free-port.js';
import { ServiceStartError } from './service-start-error.js';
import { stopProcessFromPidFile } from './stale-process.js';
import { spawnSupervised, stopSupervised } from './supervised.js';

export const REDIS_INSTALL_HINT =
  'redis-server was not found on PATH: install it (Debian/Ubuntu: sudo apt-get install -y redis-server; macOS: brew install redis) or set REDIS_URL to a running Redis';

export class RedisNotInstalledError extends Error {
  constructor() {
    super(REDIS_INSTALL_HINT);
    this.name = 'RedisNotInstalledError';
  }
}

export interface RedisServerHandle {
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
}

export interface RedisServerOptions {
  readonly dataDir: string;
  readonly port?: number;
  /** Tests need no durability; the bot does. */
  readonly persistent?: boolean;
  readonly logger?: Logger;
}

export function isRedisServerInstalled(): boolean {
  const probe = spawnSync('redis-server', ['--version'], { stdio: 'ignore' });
  return probe.error === undefined && probe.status === 0;
}

const HINT = 'set REDIS_URL to use another Redis';

/**
 * The line of redis-server's output that says why it stopped, without the log line's pid, role
 * and timestamp: e.g. "Could not create server TCP listening socket 127.0.0.1:6379: bind:
 * Address already in use", or for a bad setting the setting and what is wrong with it.
 */
function redisProblem(lines: readonly string[]): string | undefined {
  const messages = lines.map((line) => line.replace(/^\d+:[A-Z] \d+ \w+ \d+ [\d:.]+ [.\-*#] /, '').trim()).filter(Boolean);
  // *** FATAL CONFIG FILE ERROR ***, the line number, ">>> 'dir "/x"'", then the reason.
  const setting = messages.find((message) => message.startsWith('>>> '));
  if (setting) return `${setting.slice('>>> '.length).replace(/^'(.*)'$/, '$1')}: ${messages.at(-1)}`;
  const problem = messages.find((message) => /Could not|Can't|Failed|Fatal|FATAL|Error|ERROR/.test(message));
  return (problem ?? messages.at(-1))?.replace(/^Warning: /, '');
}

/**
 * Starts `redis-server` on 127.0.0.1 with its files in `options.dataDir`. Rejects with a
 * {@link RedisNotInstalledError} when it is not on PATH and with a {@link ServiceStartError}
 * quoting its own words when it exits before accepting connections.
 */
export async function startRedisServer(options: RedisServerOptions): Promise<RedisServerHandle> {
  if (!isRedisServerInstalled()) throw new RedisNotInstalledError();
  try {
    return await start(options);
  } catch (error) {
    throw ServiceStartError.from('redis-server', error, HINT);
  }
}

async function start(options: RedisServerOptions): Promise<RedisServerHandle> {
  const logger = options.logger ?? silentLogger;
  const dataDir = path.resolve(options.dataDir);
  await mkdir(dataDir, { recursive: true }).catch((error: NodeJS.ErrnoException) => {
    // A file in the way: redis-server's own error says so.
    if (error.code !== 'EEXIST') throw error;
  });
  const port = options.port ?? (await findFreePort());
  const persistent = options.persistent ?? true;

  const args = [
    '--port', String(port),
    '--bind', '127.0.0.1',
    '--dir', dataDir,
    '--appendonly', persistent ? 'yes' : 'no',
    '--save', '',
    '--daemonize', 'no',
    // BullMQ requires that Redis never evicts its keys.
    '--maxmemory-policy', 'noeviction',
  ];
  await stopProcessFromPidFile(path.join(dataDir, 'redis.pid'), 'SIGTERM');
  // SIGTERM: redis-server flushes its append-only file and exits.
  const child = spawnSupervised('redis-server', [...args, '--pidfile', path.join(dataDir, 'redis.pid')], { stopSignal: 'SIGTERM' });

  await waitUntilReady(child, { service: 'redis-server', readyLine: 'Ready to accept connections', problem: redisProblem, hint: HINT, logger });
  logger.info({ port, dataDir }, 'redis-server started');

  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop: () => stopSupervised(child),
  };
}
