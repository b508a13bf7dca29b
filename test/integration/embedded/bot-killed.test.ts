/**
 * `npm start` without DATABASE_URL and REDIS_URL runs an embedded Postgres and redis-server.
 * A bot killed with SIGKILL (a crash, an OOM kill) runs no exit handler, yet both stop, cleanly,
 * within seconds, and the next start on the same DATA_DIR finds Postgres shut down properly.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { BotProcess, startStandIns, type StandIns } from '@music-bot/test-world';
import { findFreePort } from '../../../src/embedded/free-port.js';
import { startRedisServer } from '../../../src/embedded/redis-server.js';
import { root } from './cli.js';

interface Proc {
  readonly pid: number;
  readonly ppid: number;
  readonly comm: string;
  readonly state: string;
  /** Clock ticks after boot: with the pid, names one process even if the pid is used again. */
  readonly start: string;
}

function readProc(pid: number): Proc | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses.
    const close = stat.lastIndexOf(')');
    const fields = stat.slice(close + 2).split(' ');
    return { pid, comm: stat.slice(stat.indexOf('(') + 1, close), state: fields[0]!, ppid: Number(fields[1]), start: fields[19]! };
  } catch {
    return undefined;
  }
}

/** Every process below `pid`, at this moment. */
function descendantsOf(pid: number): Proc[] {
  const all = readdirSync('/proc').filter((name) => /^\d+$/.test(name)).map((name) => readProc(Number(name))).filter((proc) => proc !== undefined);
  const found: Proc[] = [];
  for (let parents = new Set([pid]); parents.size > 0; ) {
    const children = all.filter((proc) => parents.has(proc.ppid));
    found.push(...children);
    parents = new Set(children.map((proc) => proc.pid));
  }
  return found;
}

/** Those of `procs` still running (a zombie has stopped). */
function stillRunning(procs: readonly Proc[]): Proc[] {
  return procs.filter((proc) => {
    const now = readProc(proc.pid);
    return now !== undefined && now.start === proc.start && now.state !== 'Z';
  });
}

function running(procs: readonly Proc[]): string[] {
  return stillRunning(procs).map((proc) => `${proc.pid} ${proc.comm}`);
}

let standIns: StandIns;
let temp: string;
const bots: BotProcess[] = [];
/** Processes a failed test may leave behind, killed after it (their data is thrown away). */
const seen: Proc[] = [];

beforeAll(async () => {
  standIns = await startStandIns({ sim: { credits: 1_000 } });
  temp = await mkdtemp(path.join(os.tmpdir(), 'bot-killed-'));
  // Open to all, so that run as root the postgres user can enter it and nothing is relocated.
  await chmod(temp, 0o755);
});
afterEach(async () => {
  for (const bot of bots.splice(0)) await bot.kill();
  for (const proc of stillRunning(seen.splice(0))) process.kill(proc.pid, 'SIGKILL');
});
afterAll(async () => {
  await standIns?.close();
  if (temp) await rm(temp, { recursive: true, force: true });
});

/** `npm start` until it says it started, from the test folder so that no .env is read. */
async function startBot(dataDir: string): Promise<BotProcess> {
  const env = {
    ...standIns.env,
    DATA_DIR: dataDir,
    HTTP_PORT: String(await findFreePort()),
    // Trace: what postgres says as it starts.
    LOG_LEVEL: 'trace',
  };
  const bot = new BotProcess({ env, cwd: path.join(root, 'test') });
  bots.push(bot);
  await bot.start();
  return bot;
}

/** The embedded servers of a running bot and their watchdogs: every process below it but esbuild, tsx's compiler. */
function servicesOf(bot: BotProcess): Proc[] {
  const services = descendantsOf(bot.pid!).filter((proc) => proc.comm !== 'esbuild');
  seen.push(...services);
  return services;
}

describe('a bot killed with SIGKILL', () => {
  it('leaves no embedded Postgres or redis-server running; both shut down cleanly, and the next start finds Postgres shut down properly', async () => {
    const dataDir = path.join(temp, 'data');
    const first = await startBot(dataDir);
    const services = servicesOf(first);
    expect(services.filter((proc) => proc.comm === 'postgres').length).toBeGreaterThan(1);
    expect(services.filter((proc) => proc.comm === 'redis-server')).toHaveLength(1);
    const postmasterPid = path.join(dataDir, 'postgres', 'postmaster.pid');
    const redisPid = path.join(dataDir, 'redis', 'redis.pid');
    expect([existsSync(postmasterPid), existsSync(redisPid)]).toEqual([true, true]);

    const killed = Date.now();
    await first.kill();
    expect(first.exit).toEqual({ code: null, signal: 'SIGKILL' });
    await expect.poll(() => running(services), { timeout: 15_000, interval: 50 }).toEqual([]);
    const goneAfter = Date.now() - killed;
    // A server that shut down removed its pid file; a killed one leaves it behind.
    expect([existsSync(postmasterPid), existsSync(redisPid)]).toEqual([false, false]);

    const second = await startBot(dataDir);
    const said = second.logLines().filter((line) => line.msg === 'postgres output').map((line) => String(line.line));
    expect(said).toContainEqual(expect.stringMatching(/database system was shut down at /));
    expect(said.filter((line) => /not properly shut down|interrupted|recovery/.test(line))).toEqual([]);

    // A bot stopped as usual has stopped its servers by the time it exits.
    const again = servicesOf(second);
    const stopping = Date.now();
    expect(await second.stop()).toEqual({ code: 0, signal: null });
    const stoppedAfter = Date.now() - stopping;
    expect(running(again)).toEqual([]);
    console.log(`[figure] embedded Postgres and redis-server gone ${goneAfter} ms after a SIGKILL to the bot; a SIGTERM stopped the bot and both in ${stoppedAfter} ms`);
  }, 120_000);
});

describe('an embedded redis-server that dies', () => {
  it('takes its watchdog with it, so that stopping it afterwards returns at once', async () => {
    const dataDir = path.join(temp, 'redis-dies');
    const redis = await startRedisServer({ dataDir, persistent: false });
    onTestFinished(() => redis.stop());
    const pid = Number(readFileSync(path.join(dataDir, 'redis.pid'), 'utf8').trim());
    const server = readProc(pid)!;
    const watchdog = readProc(server.ppid)!;
    seen.push(server);
    expect(watchdog.comm).toBe('sh');
    process.kill(pid, 'SIGKILL');
    await expect.poll(() => running([watchdog]), { timeout: 5_000, interval: 50 }).toEqual([]);
    const stopping = Date.now();
    await redis.stop();
    expect(Date.now() - stopping).toBeLessThan(1_000);
  });
});
