/**
 * An embedded Postgres or redis-server that cannot start makes the command print one line on
 * stderr that names the service and quotes what it said, and no stack trace.
 */
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, inject, it, onTestFinished } from 'vitest';
import { startEmbeddedPostgres } from '../../../src/embedded/embedded-postgres.js';
import { startRedisServer } from '../../../src/embedded/redis-server.js';
import { ServiceStartError } from '../../../src/embedded/service-start-error.js';
import { BOT_ENV, runCli, type CliResult } from './cli.js';

const temp = (async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'start-failures-'));
  // Open to all, so that run as root the postgres user can enter it and nothing is relocated.
  await chmod(dir, 0o755);
  return dir;
})();
afterAll(async () => rm(await temp, { recursive: true, force: true }));

/** A fresh DATA_DIR in the temporary folder. */
async function dataDir(name: string): Promise<string> {
  const dir = path.join(await temp, name);
  await mkdir(dir, { recursive: true, mode: 0o755 });
  return dir;
}

/** A loopback port held by another listener until the test ends. */
async function takenPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return (server.address() as net.AddressInfo).port;
}

function expectOneLine(result: CliResult, line: RegExp): void {
  expect(result.code).toBe(1);
  expect(result.stderr).not.toMatch(/^\s+at /m);
  expect(result.stderr.trim().split('\n')).toEqual([expect.stringMatching(line)]);
}

describe('embedded Postgres that cannot start', () => {
  it('db:migrate quotes initdb when DATA_DIR/postgres holds other files', async () => {
    const dir = await dataDir('junk');
    await mkdir(path.join(dir, 'postgres'));
    await writeFile(path.join(dir, 'postgres', 'notes.txt'), 'not a cluster');
    const result = await runCli('src/scripts/db-migrate.ts', { DATA_DIR: dir });
    expectOneLine(result, /^postgres could not start: initdb: error: directory ".*\/junk\/postgres" exists but is not empty; /);
  }, 60_000);

  it('db:migrate quotes initdb when DATA_DIR/postgres is a file', async () => {
    const dir = await dataDir('file');
    await writeFile(path.join(dir, 'postgres'), '');
    const result = await runCli('src/scripts/db-migrate.ts', { DATA_DIR: dir });
    expectOneLine(result, /^postgres could not start: initdb: error: could not access directory ".*\/file\/postgres": Not a directory; /);
  }, 60_000);

  it('npm start quotes postgres when DATA_DIR/postgres is no cluster but has a PG_VERSION, with nothing else on stderr or stdout', async () => {
    const dir = await dataDir('half');
    await mkdir(path.join(dir, 'postgres'));
    await writeFile(path.join(dir, 'postgres', 'PG_VERSION'), '17\n');
    const result = await runCli('src/main.ts', { ...BOT_ENV, DATA_DIR: dir });
    expectOneLine(result, /^postgres could not start: could not access the server configuration file ".*\/half\/postgres\/postgresql\.conf": No such file or directory; /);
    expect(result.stdout).not.toContain('start-up failed');
  }, 60_000);

  it('rejects with what postgres said when its port is taken', async () => {
    const port = await takenPort();
    const start = startEmbeddedPostgres({ dataDir: path.join(await dataDir('port'), 'postgres'), port });
    await expect(start).rejects.toBeInstanceOf(ServiceStartError);
    await expect(start).rejects.toThrow(/^postgres could not start: could not bind IPv4 address "127\.0\.0\.1": Address already in use; /);
  }, 60_000);
});

describe('redis-server that cannot start', () => {
  it('rejects with what redis-server said when its port is taken', async () => {
    const port = await takenPort();
    const start = startRedisServer({ dataDir: path.join(await dataDir('redis-port'), 'redis'), port });
    await expect(start).rejects.toBeInstanceOf(ServiceStartError);
    await expect(start).rejects.toThrow(
      new RegExp(`^redis-server could not start: Could not create server TCP listening socket 127\\.0\\.0\\.1:${port}: bind: Address already in use; `),
    );
  });

  it('rejects with what redis-server said when it cannot write its append-only files', async () => {
    const dir = path.join(await dataDir('redis-aof'), 'redis');
    await mkdir(dir);
    await writeFile(path.join(dir, 'appendonlydir'), '');
    await expect(startRedisServer({ dataDir: dir })).rejects.toThrow(
      /^redis-server could not start: Can't open or create append-only dir appendonlydir: Not a directory; /,
    );
  });

  it('npm start quotes redis-server when DATA_DIR/redis is a file, without the database password', async () => {
    const dir = await dataDir('redis-file');
    await writeFile(path.join(dir, 'redis'), '');
    const databaseUrl = inject('postgresAdminUrl');
    const result = await runCli('src/main.ts', { ...BOT_ENV, DATA_DIR: dir, DATABASE_URL: databaseUrl });
    expectOneLine(result, /^redis-server could not start: dir ".*\/redis-file\/redis": Not a directory; /);
    const password = new URL(databaseUrl).password;
    if (password) expect(result.stderr + result.stdout).not.toContain(password);
  }, 60_000);
});
