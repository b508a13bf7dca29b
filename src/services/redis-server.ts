/**
 * A `redis-server` child process for people who run the bot without a REDIS_URL and for the
 * test suite. Append-only persistence under the data directory, bound to loopback.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../logger.js';
import { silentLogger } from '../logger.js';
import { findFreePort } from './free-port.js';
import { stopProcessFromPidFile } from './stale-process.js';

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

export async function startRedisServer(options: RedisServerOptions): Promise<RedisServerHandle> {
  if (!isRedisServerInstalled()) throw new RedisNotInstalledError();
  const logger = options.logger ?? silentLogger;
  const dataDir = path.resolve(options.dataDir);
  await mkdir(dataDir, { recursive: true });
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
  const child = spawn('redis-server', [...args, '--pidfile', path.join(dataDir, 'redis.pid')], { stdio: ['ignore', 'pipe', 'pipe'] });

  await new Promise<void>((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      if (output.includes('Ready to accept connections')) {
        child.stdout.off('data', onData);
        resolve();
      }
    };
    child.stdout.on('data', onData);
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`redis-server exited with code ${code}: ${output.slice(-500)}`)));
  });
  child.stdout.resume();
  child.stderr.resume();
  logger.info({ port, dataDir }, 'redis-server started');

  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
