/**
 * A Redis connection's troubles are logged, not swallowed: the first error at once, then at
 * most one line per window with a count, the loss and the return once each, never a password.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { findFreePort } from '../../../src/embedded/free-port.js';
import { createLogger } from '../../../src/logger.js';
import { closeRedis, connectRedis, rateLimitedErrorLog, type RedisClient } from '../../../src/queue/connection.js';

const PASSWORD = 'pw-7a1c-never-logged';

interface Line {
  readonly msg: string;
  readonly redis?: string;
  readonly errors?: number;
  readonly err?: { message: string };
}

function capture() {
  const raw: string[] = [];
  const logger = createLogger({ level: 'debug' }, { write: (line: string) => void raw.push(line) });
  const lines = (msg: string) => raw.map((line) => JSON.parse(line) as Line).filter((line) => line.msg === msg);
  return { logger, raw, lines };
}

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

function track(client: RedisClient): { errors: () => number } {
  let errors = 0;
  client.on('error', () => (errors += 1));
  cleanups.push(() => closeRedis(client, 0));
  return { errors: () => errors };
}

async function startServer(port: number): Promise<ChildProcess> {
  const dir = await mkdtemp(path.join(tmpdir(), 'redis-connection-'));
  const server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--requirepass', PASSWORD, '--save', '', '--appendonly', 'no', '--dir', dir], {
    stdio: 'ignore',
  });
  cleanups.push(async () => {
    server.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  });
  return server;
}

describe('a Redis connection', () => {
  it('logs its first error at once, then none within the window, then its return once, without the password', async () => {
    const port = await findFreePort();
    const { logger, raw, lines } = capture();
    const client = connectRedis(`redis://:${PASSWORD}@127.0.0.1:${port}`, { name: 'probe', logger, errorLogEveryMs: 60_000 });
    const seen = track(client);

    await vi.waitFor(() => expect(seen.errors()).toBeGreaterThanOrEqual(4), 10_000);
    expect(lines('redis connection error')).toEqual([expect.objectContaining({ redis: 'probe', errors: 1, err: expect.objectContaining({ message: expect.stringContaining('ECONNREFUSED') }) })]);
    expect(lines('redis connection lost; reconnecting')).toHaveLength(1);

    await startServer(port);
    await vi.waitFor(() => expect(lines('redis connection restored')).toHaveLength(1), 10_000);
    expect(await client.ping()).toBe('PONG');
    expect(lines('redis connection restored')[0]).toMatchObject({ redis: 'probe', errors: expect.any(Number) });
    expect(lines('redis connection lost; reconnecting')).toHaveLength(1);
    expect(lines('redis connection error')).toHaveLength(1);
    expect(raw.join('\n')).not.toContain(PASSWORD);
  }, 30_000);

  it('logs one line per window while errors go on, each with the count since the last', async () => {
    const port = await findFreePort();
    const { logger, lines } = capture();
    const client = connectRedis(`redis://127.0.0.1:${port}`, { name: 'flapping', logger, errorLogEveryMs: 300 });
    const seen = track(client);

    await vi.waitFor(() => expect(lines('redis connection error').length).toBeGreaterThanOrEqual(3), 10_000);
    const logged = lines('redis connection error');
    const observed = seen.errors();
    expect(logged.length).toBeLessThan(observed);
    expect(logged.slice(1).some((line) => (line.errors ?? 0) > 1)).toBe(true);
    expect(logged.reduce((sum, line) => sum + (line.errors ?? 0), 0)).toBeLessThanOrEqual(observed);
  }, 30_000);

  it('takes passwords and credentials in addresses out of what it logs', () => {
    const { logger, raw } = capture();
    const report = rateLimitedErrorLog({ name: 'sentinels', logger, secrets: [PASSWORD] }, 'redis connection error');
    report(new Error(`could not reach redis://user:other-secret@10.0.0.1:6379 with ${PASSWORD}`));
    expect(raw).toHaveLength(1);
    expect(raw[0]).not.toContain(PASSWORD);
    expect(raw[0]).not.toContain('other-secret');
    expect(raw[0]).toContain('10.0.0.1:6379');
  });
});
